export { createFindingsService, type FindingsService } from './findings-service.ts';
export { registerFindingRoutes } from './findings-routes.ts';
export {
  createBatchedFindingsIngest,
  createFindingsIngest,
  MAX_CRITICAL_REPORTS_PER_INGEST,
  DEFAULT_SLA_DAYS,
  expireAcceptedRisks,
  slaDueAt,
  type BatchedFindingsIngest,
  type BatchIngestSession,
  type IngestInput,
  type IngestScanFindings,
  type IngestSummary,
  type SlaDays,
} from './findings-ingest.ts';
export { findingFingerprint, normaliseLocation } from './fingerprint.ts';
export { resolveScope, scopeKey, scopeOfScan } from './findings-scope.ts';
export { normalizedFindingSchema, normalizedFindingObjectSchema, ingestScopeSchema, type IngestScope, type NormalizedFinding, type NormalizedFindingInput, type Severity } from './findings-schemas.ts';
