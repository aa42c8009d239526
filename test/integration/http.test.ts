// Cross-cutting HTTP behaviour: health, readiness, metrics, headers, request ids, error shapes,
// OpenAPI, log redaction, and fuzzed input never producing a 5xx.
import { Writable } from 'node:stream';
import fc from 'fast-check';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loggerOptions } from '../../src/server/app.ts';
import { createTestApp, openTestDatabase, testDeps, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { METRICS_TOKEN: 'metrics-secret-value' } });
});
afterAll(() => t.close());

describe('health, readiness, metrics', () => {
  it('answers /healthz and /readyz', async () => {
    expect((await t.app.inject('/healthz')).json()).toEqual({ ok: true });
    expect((await t.app.inject('/readyz')).json()).toMatchObject({ ok: true, database: t.database.kind });
  });

  it('guards /metrics with METRICS_TOKEN and serves Prometheus text', async () => {
    const denied = await t.app.inject('/metrics');
    expect(denied.statusCode).toBe(401);
    expect(denied.json()).toMatchObject({ error: 'metrics_token_invalid' });
    const ok = await t.app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-secret-value' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toMatch(/text\/plain/);
    expect(ok.body).toMatch(/rampart_http_request_duration_seconds_bucket\{.*route="\/healthz"/);
  });

  it('reports not ready when the database is gone', async () => {
    const own = await openTestDatabase();
    const app = await createTestApp({ database: own.database });
    await own.database.close();
    const res = await app.app.inject('/readyz');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'service_unavailable' });
    expect((await app.app.inject('/healthz')).statusCode).toBe(200);
    await app.app.close();
    await own.cleanup().catch(() => {});
  });
});

describe('headers and request ids', () => {
  it('sends a Content-Security-Policy and other security headers', async () => {
    const res = await t.app.inject('/healthz');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('echoes a well-formed x-request-id and replaces a malformed one', async () => {
    expect(
      (await t.app.inject({ url: '/healthz', headers: { 'x-request-id': 'abc-123' } })).headers['x-request-id'],
    ).toBe('abc-123');
    const replaced = (await t.app.inject({ url: '/healthz', headers: { 'x-request-id': 'bad id\n<script>' } })).headers[
      'x-request-id'
    ];
    expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('errors', () => {
  it('answers unknown routes, bad JSON and oversized bodies with stable codes', async () => {
    const c = new Client(t.app);
    await c.signUp(uniqueEmail('errs'));
    expect((await t.app.inject('/api/v1/nope')).json()).toMatchObject({ error: 'route_not_found' });
    const bad = await t.app.inject({
      method: 'PUT',
      url: '/api/v1/tenants/00000000-0000-4000-8000-000000000000/settings',
      headers: { 'content-type': 'application/json' },
      payload: '{"dailyScanQuota":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'invalid_json' });
    const big = await t.app.inject({
      method: 'POST',
      url: '/api/auth/sign-in/email',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: 'a@b.c', password: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ error: 'payload_too_large' });
  });

  it('turns an unhandled error into 500 internal_error without leaking it, and tells the listener', async () => {
    const own = await openTestDatabase();
    const listener = vi.fn();
    const { buildApp } = await import('../../src/server/app.ts');
    const app = await buildApp({
      ...testDeps(t.config, own.database, t.mailer),
      logger: false,
      onUnhandledError: listener,
    });
    app.get('/boom', async () => {
      throw new Error('db password is hunter2');
    });
    const res = await app.inject('/boom');
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ error: 'internal_error' });
    expect(res.body).not.toContain('hunter2');
    expect(listener).toHaveBeenCalledOnce();
    await app.close();
    await own.cleanup();
  });

  it('never answers fuzzed settings writes with a 5xx', async () => {
    const c = new Client(t.app);
    await c.signUp(uniqueEmail('fuzz'));
    const tenant = await c.createTenant('Fuzz');
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.jsonValue(), fc.string()),
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded'),
        async (payload, type) => {
          const res = await c.request(
            'PUT',
            `/api/v1/tenants/${tenant}/settings`,
            typeof payload === 'string' ? payload : JSON.stringify(payload),
            { 'content-type': type },
          );
          expect(res.statusCode).toBeLessThan(500);
          expect(res.json()).toHaveProperty(res.statusCode === 200 ? 'dailyScanQuota' : 'error');
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('graceful shutdown', () => {
  it('waits for running handlers before close() resolves, so the database outlives them', async () => {
    const own = await openTestDatabase();
    const { buildApp } = await import('../../src/server/app.ts');
    const { sql } = await import('kysely');
    const app = await buildApp({ ...testDeps(t.config, own.database, t.mailer), logger: false });
    app.get('/slow', async () => {
      await new Promise((r) => setTimeout(r, 300));
      return (await sql<{ x: number }>`select 1 as x`.execute(own.database.db)).rows[0];
    });
    await app.ready();
    const pending = app.inject('/slow');
    await new Promise((r) => setTimeout(r, 50));
    await app.close();
    await own.cleanup();
    const res = await pending;
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ x: 1 });
  });
});

describe('OpenAPI', () => {
  it('documents the API at /docs', async () => {
    const spec = (await t.app.inject('/docs/json')).json() as { openapi: string; paths: Record<string, unknown> };
    expect(spec.openapi).toMatch(/^3\./);
    expect(Object.keys(spec.paths)).toEqual(
      expect.arrayContaining(['/api/v1/me', '/api/v1/tenants/{tenantId}/settings', '/api/v1/staff/audit-log']),
    );
    expect((await t.app.inject('/docs')).statusCode).toBeLessThan(400);
  });
});

describe('log redaction', () => {
  it('never writes cookies, authorization headers or passwords to the log', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const own = await openTestDatabase();
    const { buildApp } = await import('../../src/server/app.ts');
    const loggerInstance = pino(loggerOptions('trace'), stream);
    const app = await buildApp({ ...testDeps(t.config, own.database, t.mailer), loggerInstance });
    await app.inject({
      url: '/api/v1/me',
      headers: { cookie: 'rampart.session_token=supersecretcookie', authorization: 'Bearer supersecrettoken' },
    });
    await app.inject({
      method: 'POST',
      url: '/api/auth/sign-in/email',
      headers: { 'content-type': 'application/json' },
      payload: { email: 'a@b.test', password: 'supersecretpassword' },
    });
    await app.inject('/api/auth/reset-password/supersecrettokenvalue?callbackURL=%2Freset-password');
    await app.inject('/accept-invitation/supersecretinvitationid?email=x%40y.test');
    await app.inject('/api/auth/verify-email?token=supersecretverifytoken');
    app.log.info({ body: { password: 'supersecretpassword', token: 'supersecrettoken' } }, 'explicit');
    await app.close();
    await own.cleanup();
    const all = lines.join('');
    expect(all.length).toBeGreaterThan(0);
    expect(all).not.toMatch(/supersecret/);
  });
});
