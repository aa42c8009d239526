// Liveness, readiness and Prometheus metrics.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { sql, type Kysely } from 'kysely';
import client from 'prom-client';
import type { DB } from '../db/schema.ts';
import { safeEqual } from '../lib/crypto.ts';
import { appError } from '../lib/errors.ts';
import { healthSchema, publicConfigSchema, readySchema } from './ops-schemas.ts';
import { APP_VERSION, OPERATIONS_DOC_VERSION } from './version.ts';

export interface HealthDeps {
  db: Kysely<DB>;
  dbKind: string;
  metricsToken: string | undefined;
  signupEnabled: boolean;
  /** Whether mail leaves the server (SMTP) or is kept in the staff mailbox; never the SMTP URL. */
  mailDelivery: 'smtp' | 'mailbox';
}

export function registerHealthRoutes(fastify: FastifyInstance, deps: HealthDeps): void {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'rampart_' });
  const httpDuration = new client.Histogram({
    name: 'rampart_http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const ready = new client.Gauge({
    name: 'rampart_database_ready',
    help: '1 when the database answered the last readiness check',
    registers: [registry],
  });

  app.addHook('onResponse', (req, reply, done) => {
    httpDuration.observe(
      { method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });

  app.get('/healthz', { schema: { tags: ['ops'], response: { 200: healthSchema } } }, async () => ({
    ok: true as const,
  }));

  app.get('/readyz', { schema: { tags: ['ops'], response: { 200: readySchema } } }, async () => {
    try {
      await Promise.race([
        sql`select 1`.execute(deps.db),
        new Promise((_, reject) => setTimeout(() => reject(new Error('database check timed out')), 2000).unref()),
      ]);
      ready.set(1);
      return { ok: true as const, database: deps.dbKind };
    } catch {
      ready.set(0);
      throw appError('service_unavailable', 'The database is not reachable.');
    }
  });

  app.get('/metrics', { schema: { hide: true } }, async (req, reply) => {
    if (deps.metricsToken) {
      const header = req.headers.authorization ?? '';
      const token = header.startsWith('Bearer ') ? header.slice(7) : '';
      if (!safeEqual(token, deps.metricsToken))
        throw appError('metrics_token_invalid', 'Send Authorization: Bearer <METRICS_TOKEN>.');
    }
    return reply.type(registry.contentType).send(await registry.metrics());
  });

  app.get('/api/v1/public/config', { schema: { tags: ['ops'], response: { 200: publicConfigSchema } } }, async () => ({
    signupEnabled: deps.signupEnabled,
    mailDelivery: deps.mailDelivery,
    version: APP_VERSION,
    opsDocVersion: OPERATIONS_DOC_VERSION,
  }));
}
