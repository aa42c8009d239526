// Ingests findings the way the ingestion runner does (begin → batches → finish), for tests that
// set up findings without storing and parsing a report.
import type {
  BatchedFindingsIngest,
  FinishOptions,
  IngestScope,
  IngestSummary,
  NormalizedFindingInput,
} from '../../src/findings/index.ts';
import { DEFAULT_INGEST_BATCH } from '../../src/workers/ingestion-service.ts';

export interface TestIngest {
  scanId: string;
  findings: NormalizedFindingInput[];
  scope?: IngestScope;
  /** What finish() is told: whether to close at all, and what the result covered. */
  finish?: FinishOptions;
}

export async function ingestFindings(ingest: BatchedFindingsIngest, input: TestIngest): Promise<IngestSummary> {
  const session = await ingest.begin(input.scanId, input.scope ? { scope: input.scope } : {});
  for (let i = 0; i < input.findings.length; i += DEFAULT_INGEST_BATCH)
    await session.batch(input.findings.slice(i, i + DEFAULT_INGEST_BATCH));
  return session.finish(input.finish);
}
