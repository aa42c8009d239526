// Rampart as a caller: the issue reporter, the outbox and the relay, delivering to a second,
// real Rampart instance listening on loopback as the management peer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import type { Clock } from '../../src/lib/clock.ts';
import { reportSegmentationStandard } from '../../src/reporter/reporter.ts';
import { createTestApp, openTestDatabase, testDeps, type TestApp } from '../helpers/app.ts';
import { freePort } from '../../bench/lib.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const MGMT = `mgmt-${RUN}`;
const SELF = `rampart-${RUN}`;
const sfx = (n: string) => n.toUpperCase().replace(/[^A-Z0-9]/g, '_');
const SECRET = `secret-${RUN}`;
let now = new Date();
const clock: Clock = { now: () => new Date(now) };

let management: TestApp; // the receiving peer
let rampart: TestApp; // the reporting instance
let port: number;

function rampartEnv(extra: Record<string, string> = {}) {
  return {
    SVC_SELF_NAME: SELF,
    SVC_MANAGEMENT_PEER: MGMT,
    [`SVC_PEER_URL_${sfx(MGMT)}`]: `http://127.0.0.1:${port}`,
    [`SVC_SECRET_TO_${sfx(MGMT)}`]: SECRET,
    AGENT_RELAY_SECRET: 'relay-secret-value',
    ...extra,
  };
}

beforeAll(async () => {
  port = await freePort();
  // Both instances share the controllable clock, so moving time never skews signatures.
  management = await createTestApp({
    env: {
      SVC_SELF_NAME: MGMT,
      [`SVC_SECRET_FROM_${sfx(SELF)}`]: SECRET,
      [`SVC_PEER_FLOWS_${sfx(SELF)}`]: 'ping,event_report',
    },
    deps: { clock },
  });
  await management.app.listen({ port, host: '127.0.0.1' });
  rampart = await createTestApp({ env: rampartEnv(), deps: { clock }, database: management.database });
});
afterAll(async () => {
  await rampart.app.close();
  await management.close();
});

const received = (kind: string) =>
  withService(management.database.db, (tx) =>
    tx
      .selectFrom('svc_received_events')
      .selectAll()
      .where('caller', '=', SELF)
      .where('kind', '=', kind)
      .orderBy('received_at')
      .execute(),
  );
const outbox = (requestId: string) =>
  withService(rampart.database.db, (tx) =>
    tx.selectFrom('svc_outbox').selectAll().where('request_id', '=', requestId).executeTakeFirstOrThrow(),
  );
const attempts = (requestId: string) =>
  withService(rampart.database.db, (tx) =>
    tx.selectFrom('svc_outbound_events').selectAll().where('request_id', '=', requestId).orderBy('id').execute(),
  );

describe('issue reporter → outbox → management peer', () => {
  it('delivers a report as a signed event_report carrying the brand, and records the attempt', async () => {
    const outcome = await rampart.app.services.reporter.report({
      kind: 'finding.critical',
      severity: 'critical',
      title: 'Open Redis on 10.0.0.5',
      fingerprint: `f-${RUN}-1`,
      data: { tenantId: 't1' },
    });
    expect(outcome.sent).toBe(true);
    const requestId = (outcome as { requestId: string }).requestId;
    expect((await outbox(requestId)).status).toBe('pending');
    await rampart.app.services.mesh.outbox.deliverDue();
    expect((await outbox(requestId)).status).toBe('delivered');
    const rows = await received('finding.critical');
    expect(rows.at(-1)).toMatchObject({
      request_id: requestId,
      severity: 'critical',
      title: 'Open Redis on 10.0.0.5',
      brand: 'rampart',
    });
    expect(rows.at(-1)!.data).toMatchObject({ tenantId: 't1' });
    const tries = await attempts(requestId);
    expect(tries).toHaveLength(1);
    expect(tries[0]).toMatchObject({
      peer: MGMT,
      flow: 'event_report',
      event_type: 'finding.critical',
      severity: 'critical',
      ok: true,
      http_status: 200,
      attempt: 1,
    });
    expect(JSON.stringify(tries)).not.toContain(SECRET);
  });

  it('de-duplicates the same kind and fingerprint for 5 minutes, then counts what it held back', async () => {
    const r = {
      kind: 'asset.verification_failed' as const,
      severity: 'high' as const,
      title: 'TXT record vanished',
      fingerprint: `asset-${RUN}`,
    };
    expect((await rampart.app.services.reporter.report(r)).sent).toBe(true);
    expect(await rampart.app.services.reporter.report(r)).toEqual({ sent: false, reason: 'duplicate' });
    expect(await rampart.app.services.reporter.report(r)).toEqual({ sent: false, reason: 'duplicate' });
    now = new Date(now.getTime() + 5 * 60_000);
    const later = await rampart.app.services.reporter.report(r);
    expect(later.sent).toBe(true);
    await rampart.app.services.mesh.outbox.deliverDue();
    const rows = await received('asset.verification_failed');
    const laterId = (later as { requestId: string }).requestId;
    expect(rows.filter((x) => x.title === 'TXT record vanished')).toHaveLength(2);
    expect(rows.find((x) => x.request_id === laterId)!.data).toMatchObject({ suppressedDuplicates: 2 });
  });

  it('commits the event with its cause: a rolled-back cause sends nothing', async () => {
    let requestId = '';
    await expect(
      withService(rampart.database.db, async (tx) => {
        const o = await rampart.app.services.reporter.report(
          { kind: 'finding.critical', severity: 'critical', title: 'rolled back', fingerprint: `rb-${RUN}` },
          tx,
        );
        requestId = (o as { requestId: string }).requestId;
        throw new Error('cause failed');
      }),
    ).rejects.toThrow('cause failed');
    const row = await withService(rampart.database.db, (tx) =>
      tx.selectFrom('svc_outbox').select('id').where('request_id', '=', requestId).execute(),
    );
    expect(row).toEqual([]);
    // The de-duplication window rolled back too: the next report of it is sent.
    expect(
      (
        await rampart.app.services.reporter.report({
          kind: 'finding.critical',
          severity: 'critical',
          title: 'again',
          fingerprint: `rb-${RUN}`,
        })
      ).sent,
    ).toBe(true);
  });

  it('reports unhandled server errors as system.error', async () => {
    const own = await openTestDatabase();
    const { buildApp } = await import('../../src/server/app.ts');
    const app = await buildApp({ ...testDeps(rampart.config, own.database, rampart.mailer), logger: false });
    app.get('/boom', async () => {
      throw new TypeError(`cannot read x of undefined (${RUN})`);
    });
    try {
      expect((await app.inject('/boom')).statusCode).toBe(500);
      // The report is written after the answer: deliver until it has arrived (or give up after 10 s).
      const arrived = async () =>
        (await received('system.error')).some(
          (x) => x.title === 'Unhandled error on GET /boom' && (x.detail ?? '').includes('TypeError'),
        );
      for (let i = 0; i < 100 && !(await arrived()); i++) {
        await new Promise((r) => setTimeout(r, 100));
        await app.services.mesh.outbox.deliverDue();
      }
      expect(await arrived()).toBe(true);
    } finally {
      await app.close();
      await own.cleanup();
    }
  });

  it('never reports a caller’s bad input: NUL, lone surrogates and deep JSON answer 400, not a system error', async () => {
    const before = (await received('system.error')).length;
    const outboxBefore = await withService(rampart.database.db, (tx) =>
      tx.selectFrom('svc_outbox').select('id').where('event_type', '=', 'system.error').execute(),
    );
    const deep = '['.repeat(5_000) + ']'.repeat(5_000);
    const answers = [
      await rampart.app.inject({
        method: 'POST',
        url: '/api/auth/sign-in/email',
        payload: { email: 'a\u0000@example.com', password: 'x' },
      }),
      await rampart.app.inject({
        method: 'POST',
        url: '/api/auth/request-password-reset',
        payload: { email: 'b@example.com', redirectTo: '/\ud800' },
      }),
      await rampart.app.inject({ method: 'GET', url: '/api/v1/tenants/%00/assets' }),
      await rampart.app.inject({
        method: 'POST',
        url: '/api/public/svc/relay',
        headers: { authorization: 'Bearer relay-secret-value', 'content-type': 'application/json' },
        payload: `{"title":"t","message":"m","severity":"info","data":{"x":${deep}}}`,
      }),
    ];
    expect(answers.map((a) => a.statusCode)).toEqual([400, 400, 400, 400]);
    expect(answers.map((a) => (a.json() as { error: string }).error)).toEqual([
      'invalid_characters',
      'invalid_characters',
      'invalid_characters',
      'json_too_deep',
    ]);
    await rampart.app.services.mesh.outbox.deliverDue();
    expect(await received('system.error')).toHaveLength(before);
    const outboxAfter = await withService(rampart.database.db, (tx) =>
      tx.selectFrom('svc_outbox').select('id').where('event_type', '=', 'system.error').execute(),
    );
    expect(outboxAfter).toHaveLength(outboxBefore.length);
  });

  it('rate-limits reports per fingerprint in the process: a flood of one error is one event, its repeats counted', async () => {
    const reporter = rampart.app.services.reporter;
    const r = {
      kind: 'system.error' as const,
      severity: 'error' as const,
      title: 'Unhandled error on GET /flood',
      fingerprint: `flood-${RUN}`,
    };
    const outcomes = [];
    for (let i = 0; i < 40; i++) outcomes.push(await reporter.report(r));
    expect(outcomes.filter((o) => o.sent)).toHaveLength(1);
    // The repeats never reached the database (its counter is untouched)…
    const row = await withService(rampart.database.db, (tx) =>
      tx.selectFrom('reporter_dedupe').select('suppressed').where('kind', '=', 'system.error').execute(),
    );
    expect(row.every((x) => x.suppressed === 0)).toBe(true);
    // …and are counted in the next report of that fingerprint, after the window.
    now = new Date(now.getTime() + 5 * 60_000 + 1);
    const later = await reporter.report(r);
    expect(later.sent).toBe(true);
    await rampart.app.services.mesh.outbox.deliverDue();
    const rows = (await received('system.error')).filter((x) => x.title === 'Unhandled error on GET /flood');
    expect(rows).toHaveLength(2);
    expect(rows.find((x) => x.request_id === (later as { requestId: string }).requestId)!.data).toMatchObject({
      suppressedDuplicates: 39,
    });
  });

  it('reports that tenant segmentation standard v1 is applied', async () => {
    // Its fingerprint is the table list, the same for every run sharing a PostgreSQL database:
    // forget earlier runs' window (replicas starting together are meant to report it once).
    await withService(rampart.database.db, (tx) =>
      tx.deleteFrom('reporter_dedupe').where('kind', '=', 'segmentation.standard.applied').execute(),
    );
    const { violations } = await reportSegmentationStandard(rampart.database.db, rampart.app.services.reporter);
    expect(violations).toEqual([]);
    await rampart.app.services.mesh.outbox.deliverDue();
    const rows = await received('segmentation.standard.applied');
    expect(rows.at(-1)!.data).toMatchObject({
      standard: 'segmentation',
      version: 'v1',
      tables: expect.arrayContaining(['audit_log', 'tenant_settings']),
    });
  });

  it('keeps undeliverable events, retrying later with the same request id', async () => {
    const deadPort = await freePort();
    const broken = await createTestApp({
      env: rampartEnv({ [`SVC_PEER_URL_${sfx(MGMT)}`]: `http://127.0.0.1:${deadPort}` }),
      deps: { clock },
      database: rampart.database,
    });
    try {
      const o = await broken.app.services.reporter.report({
        kind: 'finding.critical',
        severity: 'critical',
        title: 'peer down',
        fingerprint: `down-${RUN}`,
      });
      const requestId = (o as { requestId: string }).requestId;
      await broken.app.services.mesh.outbox.deliverDue();
      const row = await outbox(requestId);
      expect(row).toMatchObject({ status: 'pending', attempts: 1, last_error: 'network_error' });
      expect(new Date(row.next_attempt_at).getTime()).toBeGreaterThan(now.getTime());
      const tries = await attempts(requestId);
      expect(tries.length).toBeGreaterThan(1);
      expect(tries.every((a) => a.ok === false && a.error === 'network_error')).toBe(true);
      // Later, the healthy instance delivers the same row with the same request id.
      now = new Date(now.getTime() + 10 * 60_000);
      await rampart.app.services.mesh.outbox.deliverDue();
      expect((await outbox(requestId)).status).toBe('delivered');
      expect((await received('finding.critical')).filter((x) => x.request_id === requestId)).toHaveLength(1);
    } finally {
      await broken.app.close();
    }
  });

  it('never sends a row twice when two replicas deliver at once', async () => {
    const second = await createTestApp({ env: rampartEnv(), deps: { clock }, database: rampart.database });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const o = await rampart.app.services.reporter.report({
          kind: 'finding.critical',
          severity: 'critical',
          title: `bulk ${i}`,
          fingerprint: `bulk-${RUN}-${i}`,
        });
        ids.push((o as { requestId: string }).requestId);
      }
      await Promise.all([
        rampart.app.services.mesh.outbox.deliverDue(),
        second.app.services.mesh.outbox.deliverDue(),
        rampart.app.services.mesh.outbox.deliverDue(),
      ]);
      for (const id of ids) {
        expect((await attempts(id)).length, id).toBe(1);
        expect((await outbox(id)).status).toBe('delivered');
      }
      const rows = (await received('finding.critical')).filter((x) => ids.includes(x.request_id));
      expect(rows).toHaveLength(12);
    } finally {
      await second.app.close();
    }
  });
});

describe('reports the scan modules send', () => {
  it('shapes asset verification failures and critical findings, folded per asset and issue', async () => {
    const { assetVerificationFailedReport, criticalFindingReport } = await import('../../src/reporter/reporter.ts');
    const failure = assetVerificationFailedReport({
      tenantId: `t-${RUN}`,
      assetId: 'a1',
      target: 'example.com',
      reason: 'resolver timed out',
    });
    expect(failure).toMatchObject({
      kind: 'asset.verification_failed',
      severity: 'high',
      title: 'Ownership verification failed for example.com',
    });
    const finding = criticalFindingReport({
      tenantId: `t-${RUN}`,
      findingId: 'f1',
      assetId: 'a1',
      title: 'Exposed .git/config',
      dedupeKey: 'git-config:https://example.com',
    });
    expect((await rampart.app.services.reporter.report(finding)).sent).toBe(true);
    expect(await rampart.app.services.reporter.report({ ...finding, data: { findingId: 'f2' } })).toEqual({
      sent: false,
      reason: 'duplicate',
    });
    expect((await rampart.app.services.reporter.report(failure)).sent).toBe(true);
  });
});

describe('retention', () => {
  it('purges idempotency records after 24 hours, never live claims', async () => {
    const { sql } = await import('kysely');
    const id = `ret-${RUN}`;
    const at = (ms: number) => new Date(now.getTime() + ms);
    await withService(rampart.database.db, async (tx) => {
      await tx
        .insertInto('svc_idempotency')
        .values({
          caller: 'p',
          request_id: `${id}-old`,
          fingerprint: 'f',
          flow: 'event_report',
          status: 'completed',
          claimed_at: at(-25 * 3600_000),
          completed_at: at(-25 * 3600_000),
          response: '{}',
          expires_at: at(-3600_000),
        })
        .execute();
      await tx
        .insertInto('svc_idempotency')
        .values({
          caller: 'p',
          request_id: `${id}-new`,
          fingerprint: 'f',
          flow: 'event_report',
          status: 'completed',
          claimed_at: at(-3600_000),
          completed_at: at(-3600_000),
          response: '{}',
          expires_at: at(23 * 3600_000),
        })
        .execute();
      await tx
        .insertInto('svc_idempotency')
        .values({
          caller: 'p',
          request_id: `${id}-live`,
          fingerprint: 'f',
          flow: 'event_report',
          status: 'in_flight',
          claimed_at: at(-1000),
          expires_at: at(86_400_000),
        })
        .execute();
    });
    await rampart.app.services.mesh.purge();
    const left = await withService(rampart.database.db, (tx) =>
      sql<{
        request_id: string;
      }>`select request_id from svc_idempotency where request_id like ${`${id}-%`} order by request_id`.execute(tx),
    );
    expect(left.rows.map((r) => r.request_id)).toEqual([`${id}-live`, `${id}-new`]);
  });
});

describe('relay', () => {
  const notice = {
    title: 'Backup finished late',
    message: 'Nightly backup took 3 h',
    severity: 'warning',
    source: 'backup-agent',
  };

  it('is shut without the bearer secret', async () => {
    for (const authorization of [undefined, 'Bearer wrong', 'relay-secret-value', 'Basic cmVsYXk=']) {
      const res = await rampart.app.inject({
        method: 'POST',
        url: '/api/public/svc/relay',
        payload: notice,
        headers: authorization ? { authorization } : {},
      });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ error: 'Unauthorized' });
    }
  });

  it('forwards a notice to the management peer as an event_report', async () => {
    const res = await rampart.app.inject({
      method: 'POST',
      url: '/api/public/svc/relay',
      payload: notice,
      headers: { authorization: 'Bearer relay-secret-value' },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { ok: boolean; requestId: string; delivered: boolean };
    expect(body).toMatchObject({ ok: true, delivered: true });
    const rows = await received('relay.notice');
    expect(rows.at(-1)).toMatchObject({
      request_id: body.requestId,
      title: 'Backup finished late',
      detail: 'Nightly backup took 3 h',
      severity: 'warning',
      brand: 'rampart',
    });
    expect(rows.at(-1)!.data).toMatchObject({ source: 'backup-agent' });
  });

  it('validates the notice', async () => {
    const res = await rampart.app.inject({
      method: 'POST',
      url: '/api/public/svc/relay',
      payload: { title: '', severity: 'apocalyptic' },
      headers: { authorization: 'Bearer relay-secret-value' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'validation_failed' });
  });
});
