// GET /api/v1/staff/mesh/...: the service-mesh records, for staff, read-only.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { SessionGuards } from '../server/plugins/session.ts';
import {
  inboundPageSchema,
  inboundQuerySchema,
  outboundPageSchema,
  outboundQuerySchema,
  outboxPageSchema,
  outboxQuerySchema,
  receivedEventsPageSchema,
  receivedEventsQuerySchema,
} from './mesh-records-schemas.ts';
import type { MeshRecordsService } from './mesh-records-service.ts';

export function registerMeshRecordsRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; records: MeshRecordsService },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, records } = deps;
  const tags = ['staff'];

  r.get(
    '/api/v1/staff/mesh/received-events',
    {
      schema: {
        tags,
        summary: 'Events peers reported to us (event_report), newest first',
        querystring: receivedEventsQuerySchema,
        response: { 200: receivedEventsPageSchema },
      },
    },
    async (req) => {
      await guards.requireStaff(req);
      return records.receivedEvents(req.query);
    },
  );

  r.get(
    '/api/v1/staff/mesh/inbound',
    {
      schema: {
        tags,
        summary: 'Every inbound dispatch call, newest first',
        querystring: inboundQuerySchema,
        response: { 200: inboundPageSchema },
      },
    },
    async (req) => {
      await guards.requireStaff(req);
      return records.inbound(req.query);
    },
  );

  r.get(
    '/api/v1/staff/mesh/outbound',
    {
      schema: {
        tags,
        summary: 'Every outbound call attempt, newest first',
        querystring: outboundQuerySchema,
        response: { 200: outboundPageSchema },
      },
    },
    async (req) => {
      await guards.requireStaff(req);
      return records.outbound(req.query);
    },
  );

  r.get(
    '/api/v1/staff/mesh/outbox',
    {
      schema: {
        tags,
        summary: 'The transactional outbox (without payloads), newest first',
        querystring: outboxQuerySchema,
        response: { 200: outboxPageSchema },
      },
    },
    async (req) => {
      await guards.requireStaff(req);
      return records.outbox(req.query);
    },
  );
}
