// Shared by the scans and schedules tests: a tenant with scannable assets.
import { sql } from 'kysely';
import { expect } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import type { ScanDto } from '../../src/scans/index.ts';
import { uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';

export const RUN = Math.random().toString(36).slice(2, 8);
let seq = 0;

export interface ScanTenant {
  owner: Client;
  tenantId: string;
  base: string;
  /** Registers an asset; verified (by a TXT proof written straight to the row) unless told otherwise. */
  asset(
    kind?: 'domain' | 'host' | 'webapp' | 'container_image',
    status?: 'verified' | 'bypassed' | 'pending',
  ): Promise<string>;
  settings(dailyScanQuota: number, perAssetConcurrentScans: number): Promise<void>;
  queue(body: Record<string, unknown>): Promise<{ scan: ScanDto; children: ScanDto[] }>;
}

const TARGETS = {
  domain: (n: string) => `d${n}.example.test`,
  host: (n: string) => `h${n}.example.test`,
  webapp: (n: string) => `https://w${n}.example.test/`,
  container_image: (n: string) => `registry.example.test/team/app${n}:1`,
} as const;

export async function scanTenant(t: TestApp, owner?: Client): Promise<ScanTenant> {
  const c = owner ?? new Client(t.app);
  if (!owner) await c.signUp(uniqueEmail('scans'));
  const tenantId = await c.createTenant(`Scan Co ${RUN}`);
  await c.me();
  const base = `/api/v1/tenants/${tenantId}`;
  return {
    owner: c,
    tenantId,
    base,
    async asset(kind = 'host', status = 'verified') {
      const res = await c.post(`${base}/assets`, { kind, target: TARGETS[kind](`${RUN}-${++seq}`) });
      expect(res.statusCode, res.body).toBe(201);
      const id = (res.json() as { asset: { id: string } }).asset.id;
      if (status !== 'pending') await setVerification(t, id, status);
      return id;
    },
    async settings(dailyScanQuota, perAssetConcurrentScans) {
      const res = await c.put(`${base}/settings`, { dailyScanQuota, perAssetConcurrentScans });
      expect(res.statusCode, res.body).toBe(200);
    },
    async queue(body) {
      const res = await c.post(`${base}/scans`, body);
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as { scan: ScanDto; children: ScanDto[] };
    },
  };
}

export async function setVerification(
  t: TestApp,
  assetId: string,
  status: 'verified' | 'bypassed' | 'pending',
): Promise<void> {
  const via = status === 'verified' ? 'txt' : status === 'bypassed' ? 'bypass' : null;
  await withService(t.database.db, (tx) =>
    sql`update assets set verification_status = ${status}, verified_via = ${via}, verified_at = case when ${status} = 'verified' then now() end where id = ${assetId}`.execute(
      tx,
    ),
  );
}

/** Sets a scan's status and percent as a worker would (service role), firing the aggregation trigger. */
export async function workerUpdate(t: TestApp, scanId: string, status: string, percent: number): Promise<void> {
  await withService(t.database.db, (tx) =>
    sql`update scans set status = ${status}, percent = ${percent}, attempts = greatest(attempts, case when ${status} = 'queued' then 0 else 1 end) where id = ${scanId}`.execute(
      tx,
    ),
  );
}

export async function scanRow(t: TestApp, scanId: string) {
  return withService(t.database.db, (tx) =>
    tx
      .selectFrom('scans')
      .selectAll()
      .select(sql<string | null>`quota_day::text`.as('day'))
      .where('id', '=', scanId)
      .executeTakeFirstOrThrow(),
  );
}
