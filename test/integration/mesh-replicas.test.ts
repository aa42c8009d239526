// Two server instances on one database (PostgreSQL with DATABASE_URL): many concurrent identical
// calls spread over both execute once; the rest are told to wait or get the recorded answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService } from '../../src/db/tenant.ts';
import { createTestApp, openTestDatabase, type TestApp } from '../helpers/app.ts';
import { dispatch } from '../helpers/mesh.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const PEER = `replica-peer-${RUN}`;
const SFX = PEER.toUpperCase().replace(/[^A-Z0-9]/g, '_');
const env = { [`SVC_SECRET_FROM_${SFX}`]: 'replica-secret', [`SVC_PEER_FLOWS_${SFX}`]: 'ping,event_report' };
let db: Awaited<ReturnType<typeof openTestDatabase>>;
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  db = await openTestDatabase();
  a = await createTestApp({ env, database: db.database });
  b = await createTestApp({ env, database: db.database });
});
afterAll(async () => {
  await a.app.close();
  await b.app.close();
  await db.cleanup();
});

describe('idempotency across replicas', () => {
  it('executes 24 concurrent identical calls over two instances exactly once', async () => {
    for (let round = 0; round < 3; round++) {
      const requestId = `${RUN}-r${round}`;
      const body = {
        flow: 'event_report',
        payload: { kind: 'replica.test', severity: 'info', title: `round ${round}` },
      };
      const calls = Array.from({ length: 24 }, (_, i) =>
        dispatch((i % 2 ? a : b).app, { caller: PEER, secret: 'replica-secret', body, requestId }),
      );
      const results = await Promise.all(calls);
      const fresh = results.filter((r) => r.statusCode === 200 && !(r.json() as { replayed?: boolean }).replayed);
      expect(fresh).toHaveLength(1);
      for (const r of results) {
        if (r.statusCode === 200) continue;
        expect(r.statusCode).toBe(409);
        expect(r.json()).toMatchObject({ error: 'request_in_progress' });
      }
      const rows = await withService(db.database.db, (tx) =>
        tx.selectFrom('svc_received_events').select('id').where('request_id', '=', requestId).execute(),
      );
      expect(rows).toHaveLength(1);
      // After completion, both instances replay the same answer.
      const eventId = (fresh[0]!.json() as { eventId: string }).eventId;
      for (const app of [a, b]) {
        const replay = await dispatch(app.app, { caller: PEER, secret: 'replica-secret', body, requestId });
        expect(replay.json()).toMatchObject({ eventId, replayed: true });
      }
    }
  });
});
