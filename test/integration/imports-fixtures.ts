// Shared by the import tests: a report queued as "Import results" queues it and run to its end by
// the test's own ingestion runner (the real runner, storage and database), and the asset's findings.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { withService } from '../../src/db/tenant.ts';
import type { ReportFormat } from '../../src/workers/importers/index.ts';
import type { IngestionService, IngestionSummary } from '../../src/workers/ingestion-service.ts';
import type { TestApp } from '../helpers/app.ts';

type ImportKind = 'port' | 'template' | 'webapp' | 'edge' | 'container';

/** Getters: the app and tenant are made in the test's beforeAll. */
export function importer(app: () => TestApp, tenant: () => string, runner: () => IngestionService) {
  async function imported(
    assetId: string,
    kind: ImportKind,
    content: string | Buffer,
    format: ReportFormat,
    svc = runner(),
  ) {
    const t = app();
    const tenantId = tenant();
    const scanId = randomUUID();
    const store = await t.app.services.storage.forTenant(tenantId);
    const key = `imports/${scanId}`;
    const put = await store.put(key, Readable.from([Buffer.from(content)]), { maxBytes: 64 * 1024 * 1024 });
    const now = new Date();
    const { ingestionId } = await withService(t.database.db, async (tx) => {
      await tx
        .insertInto('scans')
        .values({
          id: scanId,
          tenant_id: tenantId,
          asset_id: assetId,
          kind,
          status: 'ingesting',
          percent: 0,
          source: 'import',
          quota_day: null,
          started_at: now,
          created_at: now,
          updated_at: now,
        })
        .execute();
      return svc.enqueue(tx, {
        tenantId,
        scanId,
        uploadId: null,
        source: 'import',
        storage: store.kind,
        objectKey: key,
        size: put.size,
        sha256: put.sha256,
        format,
        fileName: 'r',
      });
    });
    await svc.drain();
    const job = await withService(t.database.db, (tx) =>
      tx.selectFrom('report_ingestions').selectAll().where('id', '=', ingestionId).executeTakeFirstOrThrow(),
    );
    return { scanId, job, summary: job.summary as IngestionSummary | null };
  }

  const findingsOf = (assetId: string) =>
    withService(app().database.db, (tx) =>
      tx
        .selectFrom('findings')
        .select(['rule_id', 'location_text', 'status', 'scan_id', 'tool', 'evidence', 'check_class'])
        .where('asset_id', '=', assetId)
        .orderBy('location_text')
        .orderBy('rule_id')
        .execute(),
    );

  return { imported, findingsOf };
}
