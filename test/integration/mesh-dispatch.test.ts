// The dispatch route against the documented error order and idempotency states, on PGlite and
// PostgreSQL. Peers sign with an independent implementation (test/helpers/mesh.ts).
// Over 500 lines on purpose: one feature's cases share a single app, tenants and loopback peers set up once; splitting
// them would repeat that set-up in every file.
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withService, withTenant } from '../../src/db/tenant.ts';
import type { Clock } from '../../src/lib/clock.ts';
import { OPERATIONS_DOC_VERSION } from '../../src/ops/version.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dispatch, DISPATCH, injectSend, socketSend, type Send } from '../helpers/mesh.ts';

const BILLING = 'billing-secret-from';
const BID = 'bid-secret-from';
// Every case runs twice: through app.inject() (the Fastify route) and over a real socket, where
// the server answers this URL before Fastify's router (src/mesh/mesh-fast-path.ts).
describe.each(['inject', 'socket'] as const)('dispatch over %s', (transport) => {
  let t: TestApp;
  let send: Send;
  let now = new Date();
  const clock: Clock = { now: () => new Date(now) };
  const uid = () => `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  /** Peers are named per run so tests sharing a PostgreSQL database never share idempotency keys. */
  const RUN = Math.random().toString(36).slice(2, 8);
  const billing = `billing-${RUN}`;
  const bid = `bid-${RUN}`;
  const sfx = (n: string) => n.toUpperCase().replace(/[^A-Z0-9]/g, '_');

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        [`SVC_SECRET_FROM_${sfx(billing)}`]: BILLING,
        [`SVC_PEER_FLOWS_${sfx(billing)}`]: 'ping,health_check,event_report,cmmc_status',
        [`SVC_SECRET_FROM_${sfx(bid)}`]: BID,
        [`SVC_PEER_FLOWS_${sfx(bid)}`]: 'ping,health_check,event_report,cmmc_status,cmmc_handoff',
        SVC_BID_PEER: bid,
        SVC_IDEMPOTENCY_STALE_MS: '3000',
      },
      deps: { clock },
    });
    if (transport === 'socket') {
      const origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
      send = socketSend(origin);
    } else send = injectSend(t.app);
  });
  afterAll(() => t.close());

  const call = (body: unknown, extra: Partial<Parameters<typeof dispatch>[1]> = {}) =>
    dispatch(send, { caller: billing, secret: BILLING, body, at: now, ...extra });
  const receivedRows = (requestId: string) =>
    withService(t.database.db, (tx) =>
      tx.selectFrom('svc_received_events').select(['id', 'kind']).where('request_id', '=', requestId).execute(),
    );
  const report = (title = 'disk almost full') => ({
    flow: 'event_report',
    payload: { kind: 'ops.disk', severity: 'warning', title },
  });

  describe('signed ping and health_check', () => {
    it('echoes any JSON nonce: object, array, null, booleans, numbers, strings, nested', async () => {
      const nonces: unknown[] = [
        { a: 1, b: [true, null, 'x'], c: { d: 'Zoë 🚀' } },
        [1, 'two', { three: 3 }, [4]],
        null,
        true,
        false,
        0,
        -12.5,
        '',
        'x'.repeat(1000),
        {},
        [],
      ];
      for (const nonce of nonces) {
        const res = await call({ flow: 'ping', payload: { nonce } });
        expect(res.statusCode, JSON.stringify(nonce)).toBe(200);
        expect((res.json() as { nonce: unknown }).nonce).toEqual(nonce);
      }
      // No nonce: null.
      expect(((await call({ flow: 'ping', payload: {} })).json() as { nonce: unknown }).nonce).toBeNull();
    });

    it('answers ping with pong, self, flow, nonce and the caller request id', async () => {
      const res = await call({ flow: 'ping', payload: { nonce: 'n-1' } }, { requestId: 'req-ping-1' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.json()).toEqual({ requestId: 'req-ping-1', pong: true, self: 'rampart', flow: 'ping', nonce: 'n-1' });
      const generated = (await call({ flow: 'ping', payload: {} })).json() as { requestId: string };
      expect(generated.requestId).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('answers health_check with versions and checks, never gated', async () => {
      const body = { flow: 'health_check', payload: {} };
      const a = await call(body, { requestId: 'hc-1' });
      const b = await call(body, { requestId: 'hc-1' });
      expect(a.json()).toMatchObject({
        requestId: 'hc-1',
        ok: true,
        self: 'rampart',
        flow: 'health_check',
        opsDocVersion: OPERATIONS_DOC_VERSION,
        checks: { database: 'ok' },
      });
      expect(b.json()).not.toHaveProperty('replayed');
    });

    it('accepts header names in any case', async () => {
      const raw = JSON.stringify({ flow: 'ping', payload: {} });
      const res = await call(raw, { headers: { 'X-SVC-REQUEST-ID': 'case-1' } });
      expect(res.statusCode).toBe(200);
    });
  });

  describe('authentication errors (docs/errors.md order)', () => {
    const ping = { flow: 'ping', payload: {} };
    const code = async (p: Promise<{ statusCode: number; json(): unknown; headers: Record<string, unknown> }>) => {
      const r = await p;
      expect(r.headers['content-type']).toMatch(/application\/json/);
      return [r.statusCode, (r.json() as { error: string }).error];
    };

    it('refuses unsigned and header-less calls with JSON 401', async () => {
      expect(await code(send({ method: 'POST', url: DISPATCH }))).toEqual([401, 'missing_svc_headers']);
      expect(await code(call(ping, { omit: ['x-svc-caller'] }))).toEqual([401, 'missing_svc_headers']);
      expect(await code(call(ping, { omit: ['x-svc-timestamp'] }))).toEqual([401, 'missing_svc_headers']);
      expect(await code(call(ping, { omit: ['x-svc-signature'] }))).toEqual([401, 'missing_signature']);
    });

    it('refuses unparseable timestamps', async () => {
      for (const ts of [
        'yesterday',
        '2026-11-22',
        '2026-11-22T10:00:00+00:00',
        String(Date.now()),
        '2026-13-45T10:00:00Z',
        ` ${now.toISOString()}`,
      ]) {
        // On the wire HTTP drops a value's surrounding whitespace, so the server sees a good
        // timestamp that the peer did not sign: the signature check answers instead.
        const expected = transport === 'socket' && ts.startsWith(' ') ? 'bad_signature' : 'bad_timestamp';
        expect(await code(call(ping, { timestamp: ts })), ts).toEqual([401, expected]);
      }
    });

    it('keeps a two-sided ±5 minute window, inclusive at the edge', async () => {
      const at = (ms: number) => new Date(now.getTime() + ms).toISOString();
      expect((await call(ping, { timestamp: at(-300_000) })).statusCode).toBe(200);
      expect((await call(ping, { timestamp: at(300_000) })).statusCode).toBe(200);
      expect(await code(call(ping, { timestamp: at(-301_000) }))).toEqual([401, 'stale_timestamp']);
      expect(await code(call(ping, { timestamp: at(301_000) }))).toEqual([401, 'stale_timestamp']);
      expect(await code(call(ping, { timestamp: at(600_000) }))).toEqual([401, 'stale_timestamp']);
    });

    it('answers unknown callers, wrong secrets and malformed or repeated signatures alike', async () => {
      expect(await code(dispatch(send, { caller: 'stranger', secret: BILLING, body: ping, at: now }))).toEqual([
        401,
        'bad_signature',
      ]);
      expect(await code(call(ping, { secret: 'wrong' }))).toEqual([401, 'bad_signature']);
      expect(await code(call(ping, { secret: BID }))).toEqual([401, 'bad_signature']); // another peer's secret
      const raw = JSON.stringify(ping);
      const good = (await import('../helpers/mesh.ts')).peerSign(BILLING, billing, now.toISOString(), raw);
      for (const sig of [
        good.toUpperCase(),
        good.slice(0, 63),
        `${good}0`,
        `sha256=${good}`,
        Buffer.from(good, 'hex').toString('base64'),
        'zz'.repeat(32),
      ]) {
        expect(await code(call(raw, { headers: { 'x-svc-signature': sig } })), sig).toEqual([401, 'bad_signature']);
      }
      expect(await code(call(raw, { headers: { 'x-svc-signature': [good, 'junk'] } }))).toEqual([401, 'bad_signature']);
      expect(await code(call(raw, { headers: { 'x-svc-signature': [good, good] } }))).toEqual([401, 'bad_signature']);
    });

    it('verifies the exact bytes: re-formatted or reordered JSON fails', async () => {
      const signedFor = JSON.stringify({ flow: 'ping', payload: {} });
      const { peerSign } = await import('../helpers/mesh.ts');
      const sig = peerSign(BILLING, billing, now.toISOString(), signedFor);
      for (const sent of ['{ "flow": "ping", "payload": {} }', '{"payload":{},"flow":"ping"}', `\uFEFF${signedFor}`]) {
        expect(await code(call(sent, { headers: { 'x-svc-signature': sig } }))).toEqual([401, 'bad_signature']);
      }
    });

    it('checks the body after the signature', async () => {
      expect(await code(call('{"flow":'))).toEqual([400, 'invalid_body']);
      expect(await code(call('{"flow":', { secret: 'wrong' }))).toEqual([401, 'bad_signature']);
      expect(await code(call('[1,2]'))).toEqual([400, 'invalid_body']);
      expect(await code(call({ flow: 42 }))).toEqual([400, 'invalid_body']);
      expect(await code(call({ flow: 'ping', payload: [1] }))).toEqual([400, 'invalid_body']);
      expect(await code(call(ping, { headers: { 'content-type': 'text/plain' } }))).toEqual([400, 'invalid_body']);
      expect(await code(call(ping, { requestId: 'bad id with spaces' }))).toEqual([400, 'invalid_request_id']);
      expect(await code(call({ flow: 'launch_missiles', payload: {} }))).toEqual([400, 'unknown_flow']);
    });

    it('refuses payloads it cannot store or should not echo with 400 invalid_payload', async () => {
      const deep = { flow: 'ping', payload: { nonce: JSON.parse('['.repeat(2000) + ']'.repeat(2000)) } };
      expect(await code(call(deep))).toEqual([400, 'invalid_payload']);
      // A nonce is echoed whatever JSON it is, up to 1024 characters of JSON text.
      expect(await code(call({ flow: 'ping', payload: { nonce: 'x'.repeat(1023) } }))).toEqual([
        400,
        'invalid_payload',
      ]);
      expect(await code(call({ flow: 'ping', payload: { nonce: ['x'.repeat(1100)] } }))).toEqual([
        400,
        'invalid_payload',
      ]);
      expect(
        await code(call({ flow: 'event_report', payload: { kind: 'k', severity: 'info', title: 'nul \u0000 byte' } })),
      ).toEqual([400, 'invalid_payload']);
      expect(
        await code(
          call({
            flow: 'event_report',
            payload: { kind: 'k', severity: 'info', title: 't', occurredAt: '0000-01-01T00:00:00Z' },
          }),
        ),
      ).toEqual([400, 'invalid_payload']);
    });

    it('refuses oversized bodies with 413 before anything else', async () => {
      const big = JSON.stringify({ flow: 'ping', payload: { pad: 'x'.repeat(300_000) } });
      expect(await code(call(big))).toEqual([413, 'payload_too_large']);
    });

    it('applies per-peer allowlists and keeps cmmc_* to the bid peer', async () => {
      const other = `plain-${RUN}`;
      const app2 = await createTestApp({
        env: { [`SVC_SECRET_FROM_${sfx(other)}`]: 'plain-secret' },
        database: t.database,
      });
      try {
        const r = await dispatch(app2.app, { caller: other, secret: 'plain-secret', body: report() });
        expect([r.statusCode, r.json().error]).toEqual([403, 'flow_not_allowed']); // default allowlist: ping, health_check
        expect(
          (await dispatch(app2.app, { caller: other, secret: 'plain-secret', body: { flow: 'ping', payload: {} } }))
            .statusCode,
        ).toBe(200);
      } finally {
        await app2.app.close();
      }
      // billing lists cmmc_status, but is not the bid peer.
      expect(await code(call({ flow: 'cmmc_status', payload: { cageCode: '1ABC2' } }))).toEqual([
        403,
        'flow_not_allowed',
      ]);
      // The bid peer may call it (the CMMC module's handler; an unknown CAGE code is found: false).
      const bidStatus = await dispatch(send, {
        caller: bid,
        secret: BID,
        body: { flow: 'cmmc_status', payload: { cageCode: '0ZZZ0' } },
        at: now,
      });
      expect([bidStatus.statusCode, bidStatus.json().found]).toEqual([200, false]);
    });

    it('never echoes secrets or the expected signature', async () => {
      const res = await call({ flow: 'ping', payload: {} }, { secret: 'wrong' });
      const { peerSign } = await import('../helpers/mesh.ts');
      expect(res.body).not.toContain(BILLING);
      expect(res.body).not.toContain(
        peerSign(BILLING, billing, now.toISOString(), JSON.stringify({ flow: 'ping', payload: {} })),
      );
    });
  });

  describe('idempotency of event_report (docs/mesh.md §5 states)', () => {
    it('none → in flight → completed: runs once, replays byte-identical retries re-signed later', async () => {
      const id = `evt-${uid()}`;
      const first = await call(report(), { requestId: id });
      expect(first.statusCode).toBe(200);
      const body = first.json() as { requestId: string; accepted: boolean; eventId: string };
      expect(body).toMatchObject({ requestId: id, accepted: true });
      // A retry signed later with a fresh timestamp is the normal retry path.
      now = new Date(now.getTime() + 30_000);
      const again = await call(report(), { requestId: id });
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual({ ...body, replayed: true });
      expect(await receivedRows(id)).toHaveLength(1);
    });

    it('refuses the same id with a different payload, before and after completion', async () => {
      const id = `evt-${uid()}`;
      await call(report('one'), { requestId: id });
      const reuse = await call(report('two'), { requestId: id });
      expect([reuse.statusCode, reuse.json().error]).toEqual([409, 'idempotency_key_reuse']);
      expect(await receivedRows(id)).toHaveLength(1);
    });

    it('scopes keys by caller: the same id from another peer is its own call', async () => {
      const id = `evt-${uid()}`;
      await call(report(), { requestId: id });
      const fromBid = await dispatch(send, { caller: bid, secret: BID, body: report(), requestId: id, at: now });
      expect(fromBid.statusCode).toBe(200);
      expect(fromBid.json()).not.toHaveProperty('replayed');
      expect(await receivedRows(id)).toHaveLength(2);
    });

    it('does not gate calls without a request id', async () => {
      const a = (await call(report())).json() as { requestId: string };
      const b = (await call(report())).json() as { requestId: string };
      expect(a.requestId).not.toBe(b.requestId);
    });

    it('answers concurrent identical calls with one execution and 409 request_in_progress for the rest', async () => {
      const id = `evt-${uid()}`;
      const results = await Promise.all(Array.from({ length: 8 }, () => call(report(), { requestId: id })));
      const statuses = results.map((r) => r.statusCode);
      const executed = results.filter((r) => r.statusCode === 200 && !(r.json() as { replayed?: boolean }).replayed);
      expect(executed).toHaveLength(1);
      for (const r of results.filter((x) => x.statusCode === 409)) {
        expect(r.json()).toMatchObject({ error: 'request_in_progress' });
        expect(r.headers['retry-after']).toBe('1');
      }
      expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
      expect(await receivedRows(id)).toHaveLength(1);
    });

    it('releases the claim when the handler crashes: 500 handler_failed, then the same id succeeds', async () => {
      let fail = true;
      t.app.services.mesh.registerFlow('cmmc_status', {
        mutating: true,
        async run(ctx, tx) {
          await tx
            .insertInto('svc_received_events')
            .values({
              caller: ctx.caller.name,
              request_id: ctx.requestId,
              kind: 'probe',
              severity: 'info',
              title: 'side effect',
              data: '{}',
            })
            .execute();
          if (fail) throw new Error('boom');
          return { ok: true };
        },
      });
      const id = `crash-${uid()}`;
      const body = { flow: 'cmmc_status', payload: { cageCode: '1ABC2' } };
      const crashed = await dispatch(send, { caller: bid, secret: BID, body, requestId: id, at: now });
      expect([crashed.statusCode, crashed.json().error]).toEqual([500, 'handler_failed']);
      expect(await receivedRows(id)).toHaveLength(0); // the side effect rolled back with the crash
      fail = false;
      const retry = await dispatch(send, { caller: bid, secret: BID, body, requestId: id, at: now });
      expect(retry.statusCode).toBe(200);
      expect(retry.json()).toEqual({ requestId: id, ok: true });
      expect(await receivedRows(id)).toHaveLength(1);
    });

    it('lets an abandoned claim block for 60 s, then be taken over', async () => {
      const stale = 3_000; // SVC_IDEMPOTENCY_STALE_MS in this suite
      const id = `stale-${uid()}`;
      const raw = JSON.stringify(report());
      const { createHash } = await import('node:crypto');
      const fingerprint = createHash('sha256').update(raw).digest('hex');
      await withService(t.database.db, (tx) =>
        tx
          .insertInto('svc_idempotency')
          .values({
            caller: billing,
            request_id: id,
            fingerprint,
            flow: 'event_report',
            status: 'in_flight',
            claimed_at: new Date(now.getTime() - stale + 1000),
            expires_at: new Date(now.getTime() + 86_400_000),
          })
          .execute(),
      );
      const blocked = await call(raw, { requestId: id });
      expect([blocked.statusCode, blocked.json().error]).toEqual([409, 'request_in_progress']);
      now = new Date(now.getTime() + 2_000); // the claim is now older than the stale window
      const taken = await call(raw, { requestId: id });
      expect(taken.statusCode).toBe(200);
      expect(await receivedRows(id)).toHaveLength(1);
    });

    it('fails a handler that overruns its deadline without leaving its effect behind', async () => {
      t.app.services.mesh.registerFlow('cmmc_handoff', {
        mutating: true,
        async run(ctx, tx) {
          await tx
            .insertInto('svc_received_events')
            .values({
              caller: ctx.caller.name,
              request_id: ctx.requestId,
              kind: 'slow',
              severity: 'info',
              title: 'slow',
              data: '{}',
            })
            .execute();
          await new Promise((r) => setTimeout(r, 1_500)); // deadline here is 1 s
          return { url: 'x' };
        },
      });
      const id = `slow-${uid()}`;
      const res = await dispatch(send, {
        caller: bid,
        secret: BID,
        body: { flow: 'cmmc_handoff', payload: {} },
        requestId: id,
        at: now,
      });
      expect([res.statusCode, res.json().error]).toEqual([500, 'handler_failed']);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await receivedRows(id)).toHaveLength(0);
      const claim = await withService(t.database.db, (tx) =>
        tx.selectFrom('svc_idempotency').selectAll().where('request_id', '=', id).execute(),
      );
      expect(claim).toEqual([]);
    });
  });

  describe('records', () => {
    it('records every inbound call, verified or not', async () => {
      const id = `rec-${uid()}`;
      await call({ flow: 'ping', payload: {} }, { requestId: id });
      await call({ flow: 'ping', payload: {} }, { secret: 'wrong', requestId: id });
      await send({ method: 'POST', url: DISPATCH });
      // The recorder flushes in the background; wait for it.
      let rows: { verified: boolean; status: number; error_code: string | null; flow: string | null }[] = [];
      for (let i = 0; i < 50 && rows.length < 2; i++) {
        await new Promise((r) => setTimeout(r, 100));
        rows = await withService(t.database.db, (tx) =>
          tx
            .selectFrom('svc_inbound_events')
            .select(['verified', 'status', 'error_code', 'flow'])
            .where('request_id', '=', id)
            .orderBy('id')
            .execute(),
        );
      }
      expect(rows).toEqual([
        { verified: true, status: 200, error_code: null, flow: 'ping' },
        { verified: false, status: 401, error_code: 'bad_signature', flow: null },
      ]);
    });

    it('records a flow name no text column can hold without losing the calls written with it', async () => {
      // A NUL in a peer's flow name would fail the whole batch of records it is written with.
      const ids = [`nul-${uid()}`, `ok-${uid()}`];
      await Promise.all([
        call({ flow: 'pi\u0000ng\ttab\\', payload: {} }, { requestId: ids[0] }),
        call({ flow: 'ping', payload: {} }, { requestId: ids[1] }),
      ]);
      let rows: { request_id: string | null; flow: string | null; error_code: string | null }[] = [];
      for (let i = 0; i < 50 && rows.length < 2; i++) {
        await new Promise((r) => setTimeout(r, 100));
        rows = await withService(t.database.db, (tx) =>
          tx
            .selectFrom('svc_inbound_events')
            .select(['request_id', 'flow', 'error_code'])
            .where('request_id', 'in', ids)
            .orderBy('request_id')
            .execute(),
        );
      }
      expect(rows).toEqual([
        { request_id: ids[0], flow: 'pi\uFFFDng\ttab\\', error_code: 'unknown_flow' },
        { request_id: ids[1], flow: 'ping', error_code: null },
      ]);
    });

    it('gives the app role no access to mesh records at all', async () => {
      for (const table of [
        'svc_inbound_events',
        'svc_outbound_events',
        'svc_idempotency',
        'svc_outbox',
        'svc_received_events',
        'reporter_dedupe',
      ]) {
        await expect(
          withTenant(t.database.db, { tenantId: '00000000-0000-4000-8000-000000000000' }, (tx) =>
            sql.raw(`select 1 from ${table} limit 1`).execute(tx),
          ),
        ).rejects.toThrow(/permission denied/);
        await expect(
          withTenant(t.database.db, { tenantId: '00000000-0000-4000-8000-000000000000' }, (tx) =>
            sql.raw(`delete from ${table}`).execute(tx),
          ),
        ).rejects.toThrow(/permission denied/);
      }
      // The service role may add records but never rewrite them.
      await expect(
        withService(t.database.db, (tx) => sql`update svc_outbound_events set ok = true`.execute(tx)),
      ).rejects.toThrow(/permission denied/);
    });
  });

  describe('fuzzing', () => {
    it('never answers a 5xx to hostile headers and bodies', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            caller: fc.oneof(fc.constant(billing), fc.string({ maxLength: 30 })),
            timestamp: fc.oneof(fc.constant(now.toISOString()), fc.string({ maxLength: 40 })),
            signature: fc.oneof(fc.string({ maxLength: 70 }), fc.stringMatching(/^[0-9a-f]{64}$/)),
            requestId: fc.option(fc.string({ maxLength: 60 }), { nil: undefined }),
            body: fc.oneof(
              fc.string({ maxLength: 200 }),
              fc.json(),
              fc.constant(JSON.stringify({ flow: 'ping', payload: {} })),
            ),
            sign: fc.boolean(),
          }),
          async (x) => {
            const headers: Record<string, string> = {};
            const safe = (v: string) => v.replace(/[^\x20-\x7e]/g, '');
            if (x.requestId !== undefined) headers['x-svc-request-id'] = safe(x.requestId);
            const res = x.sign
              ? await dispatch(send, { caller: billing, secret: BILLING, body: x.body, at: now, headers })
              : await send({
                  method: 'POST',
                  url: DISPATCH,
                  headers: {
                    'content-type': 'application/json',
                    'x-svc-caller': safe(x.caller),
                    'x-svc-timestamp': safe(x.timestamp),
                    'x-svc-signature': safe(x.signature),
                    ...headers,
                  },
                  payload: x.body,
                });
            expect(res.statusCode).toBeLessThan(500);
            expect(res.headers['content-type']).toMatch(/application\/json/);
          },
        ),
        { numRuns: 150 },
      );
    });
  });
});
