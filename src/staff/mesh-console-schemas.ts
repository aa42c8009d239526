// Staff → mesh client console (super-admin): the configured peers as presence booleans, and one
// signed call to a peer through the outbound mesh client.
import { z } from 'zod';
import { outboundEventSchema } from './mesh-records-schemas.ts';
import { sweepOutcomeSchema } from './mesh-health-schemas.ts';

/** Flows the console offers (Rampart's own); any other name matching FLOW_RE may be typed. */
export const KNOWN_FLOWS = ['ping', 'health_check', 'event_report', 'cmmc_status', 'cmmc_handoff'] as const;
export const FLOW_RE = /^[a-z][a-z0-9_.-]{0,99}$/;
/** Same rule as the dispatch route and the mesh CLI: 1–200 of letters, digits and . _ : - */
export const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,200}$/;
/** The dispatch route's default body limit (SVC_MAX_BODY_BYTES). */
export const CONSOLE_MAX_PAYLOAD_BYTES = 262_144;

export const consolePeerSchema = z.object({
  name: z.string(),
  callable: z.boolean().describe('Has a URL and an outbound secret: calls can be sent.'),
  hasUrl: z.boolean(),
  urlForm: z
    .enum(['origin', 'dispatch', 'custom'])
    .nullable()
    .describe(
      'origin: bare origin (the dispatch path is appended); dispatch: full dispatch URL; custom: a custom transport path used as is.',
    ),
  secretToPresent: z.boolean(),
  secretFromPresent: z.boolean(),
  inboundFlows: z.array(z.string()).describe('Flows this peer may call on us (SVC_PEER_FLOWS_*).'),
  managementPeer: z.boolean(),
  bidPeer: z.boolean(),
});

export const consolePeersResponseSchema = z.object({
  selfName: z.string(),
  knownFlows: z.array(z.string()),
  maxPayloadBytes: z.number().int(),
  peers: z.array(consolePeerSchema),
});
export type ConsolePeers = z.infer<typeof consolePeersResponseSchema>;

export const consoleSendBodySchema = z.object({
  peer: z.string().trim().min(1).max(200),
  flow: z.string().regex(FLOW_RE, 'A flow name: lower-case letters, digits, _ . -, starting with a letter'),
  payload: z
    .record(z.string(), z.unknown())
    .refine(
      (p) => new TextEncoder().encode(JSON.stringify(p)).length <= CONSOLE_MAX_PAYLOAD_BYTES,
      `The payload is larger than ${CONSOLE_MAX_PAYLOAD_BYTES} bytes`,
    )
    .describe('The flow payload, a JSON object.'),
  requestId: z
    .string()
    .regex(REQUEST_ID_RE, 'A request id: 1 to 200 letters, digits, . _ : -')
    .optional()
    .describe('x-svc-request-id; omit for a new one. Reuse one to see idempotency replies.'),
  timeoutMs: z.number().int().min(500).max(30_000).default(10_000),
});
export type ConsoleSendBody = z.infer<typeof consoleSendBodySchema>;

export const consoleSendResponseSchema = z.object({
  peer: z.string(),
  flow: z.string(),
  requestId: z.string(),
  ok: z.boolean(),
  outcome: sweepOutcomeSchema,
  label: z.string(),
  httpStatus: z.number().int().nullable(),
  error: z.string().nullable(),
  replayed: z.boolean().describe('The peer answered from its idempotency record ("replayed": true).'),
  durationMs: z.number(),
  headers: z.record(z.string(), z.string()).describe('Response headers (set-cookie removed).'),
  body: z.unknown().describe('The JSON answer, or an excerpt of a non-JSON one.'),
  events: z
    .array(outboundEventSchema)
    .describe(
      'Stored svc_outbound_events rows with this peer and request id, oldest first; like every staff record, without the URL (the console shows only the URL form, from the peers list).',
    ),
});
export type ConsoleSendResponse = z.infer<typeof consoleSendResponseSchema>;
