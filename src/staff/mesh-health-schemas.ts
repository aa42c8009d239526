// Staff → mesh health (super-admin): the per-peer rollup over a window (getMeshHealthHistory) and
// the health sweep (runMeshHealthSweep, a signed ping to every configured peer, streamed as
// NDJSON). Read-only rollup; no secret value anywhere, only presence booleans elsewhere.
import { z } from 'zod';

export const HEALTH_WINDOWS = ['24h', '7d', '30d'] as const;
export const healthWindowSchema = z.enum(HEALTH_WINDOWS);
export type HealthWindow = z.infer<typeof healthWindowSchema>;
/** Window length in days (24h = 1), as mesh_ask_answers.window_days stores it. */
export const WINDOW_DAYS: Record<HealthWindow, number> = { '24h': 1, '7d': 7, '30d': 30 };

/** Health thresholds (docs/mesh.md "Staff tools"). */
export const HEALTH_THRESHOLDS = {
  /** Success rate at or above: healthy. */
  healthy: 0.99,
  /** Success rate at or above (and below healthy): degraded; below: failing. */
  degraded: 0.9,
  /** Fewer attempts than this in the window: the rate is shown with a "few samples" note. */
  minSamples: 5,
} as const;

export const healthQuerySchema = z.object({
  window: healthWindowSchema.default('7d').describe('Window ending now: 24h, 7d or 30d (default 7d).'),
});

export const peerStatusSchema = z
  .enum(['healthy', 'degraded', 'failing', 'idle', 'no_data'])
  .describe(
    'healthy: success rate ≥ 99 %; degraded: ≥ 90 %; failing: below 90 %; idle: no outbound attempt in the window but earlier ones exist; no_data: no outbound attempt recorded at all (records are kept 90 days).',
  );

const ms = z.number().nullable();

export const healthDaySchema = z.object({
  day: z.string().describe('UTC day, YYYY-MM-DD.'),
  attempts: z.number().int(),
  successes: z.number().int(),
  failures: z.number().int(),
  avgDurationMs: ms,
});

export const healthFailureSchema = z.object({
  at: z.string(),
  flow: z.string(),
  eventType: z.string().nullable(),
  httpStatus: z.number().int().nullable(),
  error: z.string().nullable(),
  durationMs: z.number(),
  requestId: z.string(),
  attempt: z.number().int(),
});

export const peerHealthSchema = z.object({
  peer: z.string(),
  configured: z
    .boolean()
    .describe('Named by this server’s SVC_* configuration; false for peers seen only in the records.'),
  status: peerStatusSchema,
  attempts: z.number().int(),
  successes: z.number().int(),
  failures: z.number().int(),
  successRate: z.number().nullable().describe('successes / attempts in the window; null without attempts.'),
  avgDurationMs: ms,
  p95DurationMs: ms.describe(
    'Exact nearest-rank 95th percentile of attempt durations in the window (see docs/mesh.md).',
  ),
  fewSamples: z.boolean().describe('Fewer attempts than thresholds.minSamples: read the rate with care.'),
  lastOutboundAt: z.string().nullable().describe('Latest outbound attempt ever recorded (within retention).'),
  lastOutboundOk: z.boolean().nullable(),
  lastInboundAt: z.string().nullable().describe('Latest verified inbound call from this peer (within retention).'),
  inboundCalls: z.number().int().describe('Verified inbound calls from this peer in the window.'),
  bidirectional: z
    .boolean()
    .describe('At least one successful outbound attempt and one verified inbound call in the window.'),
  days: z.array(healthDaySchema),
  recentFailures: z
    .array(healthFailureSchema)
    .describe('The latest failed attempts in the window, newest first (at most 10).'),
});

export const healthResponseSchema = z.object({
  window: healthWindowSchema,
  windowDays: z.number().int(),
  from: z.string(),
  to: z.string(),
  selfName: z.string().describe('SVC_SELF_NAME: the prefix of export file names.'),
  thresholds: z.object({ healthy: z.number(), degraded: z.number(), minSamples: z.number().int() }),
  days: z.array(z.string()).describe('Every UTC day the window touches, oldest first.'),
  peers: z.array(peerHealthSchema),
});
export type HealthResponse = z.infer<typeof healthResponseSchema>;
export type PeerHealth = z.infer<typeof peerHealthSchema>;

export const selfInfoSchema = z.object({
  selfName: z.string().describe('SVC_SELF_NAME, the prefix of mesh export file names.'),
});

// ---- sweep ----

export const sweepBodySchema = z
  .object({
    timeoutMs: z
      .number()
      .int()
      .min(500)
      .max(30_000)
      .default(5_000)
      .describe('Per-peer timeout (one attempt, no retries).'),
  })
  .default({ timeoutMs: 5_000 });

export const sweepOutcomeSchema = z
  .enum([
    'ok',
    'route_not_deployed',
    'unauthorized',
    'forbidden',
    'timeout',
    'unreachable',
    'http_error',
    'unexpected_answer',
    'not_callable',
  ])
  .describe(
    'ok: pong received; route_not_deployed: 2xx with a non-JSON (HTML) body; unauthorized: 401; forbidden: 403; timeout; unreachable: connection failed; http_error: any other status; unexpected_answer: JSON 2xx without pong; not_callable: no URL or no outbound secret (nothing sent; the attempt is stored as a failed ping with error peer_not_configured).',
  );
export type SweepOutcome = z.infer<typeof sweepOutcomeSchema>;

export const sweepResultSchema = z.object({
  peer: z.string(),
  outcome: sweepOutcomeSchema,
  label: z.string().describe('Human-readable outcome.'),
  ok: z.boolean(),
  httpStatus: z.number().int().nullable(),
  error: z.string().nullable(),
  durationMs: z.number(),
  requestId: z.string().nullable(),
  at: z.string(),
});
export type SweepResult = z.infer<typeof sweepResultSchema>;

/** One NDJSON line of the sweep stream. */
export type SweepLine =
  | { type: 'start'; sweepId: string; startedAt: string; timeoutMs: number; peers: string[] }
  | ({ type: 'result' } & SweepResult)
  | { type: 'done'; finishedAt: string; total: number; ok: number; failed: number }
  /** The sweep stopped before its done line (an unexpected server error); the results sent before it stand. */
  | { type: 'error'; error: string; message: string };
