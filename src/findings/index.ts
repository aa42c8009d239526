export { createFindingsService, type FindingsService } from './findings-service.ts';
export { registerFindingRoutes } from './findings-routes.ts';
export {
  bulkWritesOf,
  createBatchedFindingsIngest,
  MAX_CRITICAL_REPORTS_PER_INGEST,
  DEFAULT_SLA_DAYS,
  expireAcceptedRisks,
  slaDueAt,
  type BatchedFindingsIngest,
  type BatchIngestSession,
  type FinishOptions,
  type IngestSummary,
  type SlaDays,
} from './findings-ingest.ts';
export { findingFingerprint, normaliseLocation } from './fingerprint.ts';
export { resolveScope, scopeKey, scopeOfScan } from './findings-scope.ts';
export {
  normalizedFindingSchema,
  normalizedFindingObjectSchema,
  ingestScopeSchema,
  reportCoverageSchema,
  MAX_COVERAGE_BYTES,
  MAX_COVERAGE_URLS,
  type IngestScope,
  type NormalizedFinding,
  type NormalizedFindingInput,
  type ReportCoverage,
  type Severity,
} from './findings-schemas.ts';
export {
  closingCoverageOfReport,
  closingCoverageSchema,
  SHARED_TOOLS_ONLY,
  type ClosingCoverage,
} from './findings-coverage.ts';
