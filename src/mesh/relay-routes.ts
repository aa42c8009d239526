// POST /api/public/svc/relay: an agent forwards an ad-hoc notice to the management peer.
// Bearer AGENT_RELAY_SECRET; unset keeps the route shut.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { withService } from '../db/tenant.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { safeEqual } from '../lib/crypto.ts';
import { appError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { BRAND } from '../reporter/reporter.ts';
import type { MeshClient } from './mesh-client.ts';
import type { Outbox } from './mesh-outbox.ts';

export const relayBodySchema = z.object({
  title: z.string().trim().min(1).max(300),
  message: z.string().trim().min(1).max(10_000),
  severity: z.enum(['info', 'low', 'medium', 'high', 'critical', 'warning', 'error']),
  source: z.string().trim().min(1).max(200).optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});

export const relayResponseSchema = z.object({
  ok: z.boolean(),
  requestId: z.string(),
  delivered: z.boolean(),
  queued: z.boolean(),
});

/** Bearer check shared by the relay and the cron hooks: constant time, shut when unset. */
export function bearerMatches(authorization: string | undefined, secret: string | undefined): boolean {
  if (!secret || !authorization?.startsWith('Bearer ')) return false;
  return safeEqual(authorization.slice(7), secret);
}

export function registerRelayRoute(
  app: FastifyInstance,
  deps: {
    db: Kysely<DB>;
    secret: string | undefined;
    managementPeer: string | undefined;
    client: MeshClient;
    outbox: Outbox;
  },
): void {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/api/public/svc/relay',
    {
      schema: {
        tags: ['mesh'],
        summary: 'Relay a notice to the management peer',
        body: relayBodySchema,
        response: { 200: relayResponseSchema },
      },
      // Authenticate before the body is validated: an unauthenticated caller learns nothing.
      onRequest: async (req) => {
        if (!bearerMatches(req.headers.authorization, deps.secret))
          throw appError('Unauthorized', 'Send Authorization: Bearer <AGENT_RELAY_SECRET>.');
      },
    },
    async (req) => {
      if (!deps.managementPeer)
        throw appError(
          'management_peer_not_configured',
          'SVC_MANAGEMENT_PEER is not set; there is nobody to relay to.',
        );
      const b = req.body;
      const requestId = newId();
      const payload = {
        kind: 'relay.notice',
        severity: b.severity,
        title: b.title,
        detail: b.message,
        occurredAt: new Date().toISOString(),
        data: { ...b.data, ...(b.source ? { source: b.source } : {}) },
        brand: BRAND,
      };
      const result = await deps.client.call(deps.managementPeer, 'event_report', payload, {
        requestId,
        eventType: 'relay.notice',
        severity: b.severity,
        maxAttempts: 2,
      });
      if (result.ok) return { ok: true, requestId, delivered: true, queued: false };
      // Not lost: the outbox keeps trying with the same request id.
      await withService(deps.db, (tx) =>
        deps.outbox.enqueue(tx, {
          peer: deps.managementPeer!,
          flow: 'event_report',
          payload,
          eventType: 'relay.notice',
          severity: b.severity,
          requestId,
        }),
      );
      deps.outbox.nudge();
      return { ok: true, requestId, delivered: false, queued: true };
    },
  );
}
