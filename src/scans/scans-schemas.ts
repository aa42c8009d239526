// Request and response shapes of the scans and schedules APIs, shared with the web app
// (type-only imports there). Options are validated per scanner kind.
import { z } from 'zod';
import { CHUNKABLE_KINDS, SCAN_KINDS } from '../lib/scan-kinds.ts';
import { reportCoverageSchema } from '../findings/findings-schemas.ts';
import { TEMPLATE_VARIABLES } from '../agent/scanners/template/variables.ts';

export const scanKindSchema = z.enum(SCAN_KINDS);
export type ScanKind = z.infer<typeof scanKindSchema>;
export const scanStatusSchema = z.enum([
  'queued',
  'leased',
  'running',
  'ingesting',
  'chunking',
  'aggregating',
  'succeeded',
  'failed',
  'cancelled',
]);
export type ScanStatus = z.infer<typeof scanStatusSchema>;
export const TERMINAL_STATUSES: readonly ScanStatus[] = ['succeeded', 'failed', 'cancelled'];
/**
 * What a succeeded scan's result was worth: complete, partial (some of what it covers was not
 * looked at) or inconclusive (nothing was: the target was down). Partial and inconclusive results
 * close no finding. Null before the report is read, and for failed or cancelled scans.
 */
export const scanOutcomeSchema = z.enum(['complete', 'partial', 'inconclusive']);
export type ScanOutcome = z.infer<typeof scanOutcomeSchema>;

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export const severitySchema = z.enum(SEVERITIES);
export type Severity = z.infer<typeof severitySchema>;

/** Spec "Scans and chunking": the default URL-path seed list for web application chunking. */
export const WEBAPP_SEED_PATHS = ['/', '/api', '/admin', '/login', '/static', '/v1', '/v2', '/health'] as const;
export const MIN_CHUNKS = 2;
export const MAX_CHUNKS = 8;
export const PORT_MIN = 1;
export const PORT_MAX = 65535;

/** Which scanner kinds fit which asset kinds (docs/decisions.md, "Scans"). */
export const KINDS_FOR_ASSET = {
  domain: ['port', 'edge', 'template'],
  host: ['port', 'edge', 'template'],
  webapp: ['webapp', 'template', 'edge'],
  container_image: ['container'],
} as const satisfies Record<string, readonly ScanKind[]>;
export { CHUNKABLE_KINDS };

const port = z.int().min(PORT_MIN).max(PORT_MAX);
export const portRangeSchema = z
  .object({ from: port, to: port })
  .strict()
  .refine((r) => r.from <= r.to, { message: 'The range must not end before it starts.', path: ['to'] });
const uniqueSorted =
  <T extends string>(order: readonly T[]) =>
  (xs: T[]) =>
    order.filter((x) => xs.includes(x));
const label = z
  .string()
  .trim()
  .regex(/^[a-z0-9][a-z0-9._:-]{0,63}$/i, 'Letters, digits, dot, dash, underscore and colon; at most 64 characters.');

export const MAX_SCAN_VARIABLES = 50;
/** Names the URL gives every template (nuclei's); a scan cannot set them. */
const URL_VARIABLES = new Set<string>(TEMPLATE_VARIABLES);
const templateVariableName = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/,
    'A variable name: a letter or underscore, then letters, digits, _ or -; at most 64 characters.',
  )
  .refine((n) => !URL_VARIABLES.has(n), 'This name is set from the scanned URL; choose another.');

/** Port scanner: a range (default 1–65535 when chunked) or the N most common ports (default top 1,000). */
export const portOptionsSchema = z
  .object({
    range: portRangeSchema.optional(),
    topPorts: z.int().min(1).max(1000).optional(),
    /** Connect timeout per probe. */
    timeoutMs: z.int().min(100).max(10_000).default(1500),
    /** Probes per second per worker. */
    rate: z.int().min(1).max(10_000).default(1500),
  })
  .strict()
  .refine((o) => !(o.range && o.topPorts), { message: 'Give either range or topPorts, not both.', path: ['topPorts'] });

/** Template scanner: severities to run (buckets when chunked), tag and template-id filters. */
export const templateOptionsSchema = z
  .object({
    severities: z
      .array(severitySchema)
      .min(1)
      .max(5)
      .default([...SEVERITIES])
      .transform(uniqueSorted(SEVERITIES)),
    tags: z.array(label).max(20).default([]),
    templateIds: z.array(label).max(100).default([]),
    /** Requests per second. */
    rateLimit: z.int().min(1).max(1000).default(150),
    /** Values for templates' own placeholders (nuclei's -var), e.g. {"username": "admin"}. */
    variables: z
      .record(templateVariableName, z.string().max(4_096, 'At most 4,096 characters.'))
      .refine((r) => Object.keys(r).length <= MAX_SCAN_VARIABLES, `At most ${MAX_SCAN_VARIABLES} variables.`)
      .optional(),
  })
  .strict();

/**
 * Variable values shown as this in scans and schedules when the name says they are secret
 * (password, token, api key...): the worker receives them, people reading the scan do not.
 */
export const REDACTED_VARIABLE = '********';
const SECRET_VARIABLE = /pass|secret|token|key|auth|cookie|session|credential|private/i;

/** Options as shown to people: secret-looking template variables redacted. */
export function redactScanOptions(options: unknown): Record<string, unknown> {
  const o = (typeof options === 'object' && options !== null ? options : {}) as Record<string, unknown>;
  const vars = o.variables;
  if (typeof vars !== 'object' || vars === null || Array.isArray(vars)) return o;
  const shown = Object.fromEntries(
    Object.entries(vars).map(([k, v]) => [k, SECRET_VARIABLE.test(k) ? REDACTED_VARIABLE : v]),
  );
  return { ...o, variables: shown };
}

const urlPath = z
  .string()
  .trim()
  .max(200)
  .regex(/^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/, 'A URL path starting with /.');

/** Web application scanner: passive baseline or full profile, crawl limits, start paths. */
export const webappOptionsSchema = z
  .object({
    profile: z.enum(['baseline', 'full']).default('baseline'),
    maxDepth: z.int().min(1).max(10).default(3),
    maxPages: z.int().min(1).max(5000).default(200),
    /** Start paths; the built-in seed list by default. Split across chunks when chunked. */
    paths: z
      .array(urlPath)
      .min(1)
      .max(64)
      .default([...WEBAPP_SEED_PATHS])
      .transform((xs) => [...new Set(xs)]),
  })
  .strict();

/** Container scanner: report vulnerabilities at or above a severity. */
export const containerOptionsSchema = z
  .object({
    severityThreshold: severitySchema.default('low'),
    ignoreUnfixed: z.boolean().default(false),
  })
  .strict();

const hostname = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(
    /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/,
    'A host name such as www.example.com.',
  );

/** Edge check (TLS and HTTP front door): ports to probe, optional SNI name. */
export const edgeOptionsSchema = z
  .object({
    ports: z
      .array(port)
      .min(1)
      .max(16)
      .default([443])
      .transform((xs) => [...new Set(xs)]),
    sni: hostname.optional(),
  })
  .strict();

export const OPTIONS_SCHEMAS = {
  port: portOptionsSchema,
  template: templateOptionsSchema,
  webapp: webappOptionsSchema,
  container: containerOptionsSchema,
  edge: edgeOptionsSchema,
} as const;
export type PortOptions = z.output<typeof portOptionsSchema>;
export type TemplateOptions = z.output<typeof templateOptionsSchema>;
export type WebappOptions = z.output<typeof webappOptionsSchema>;
export type ContainerOptions = z.output<typeof containerOptionsSchema>;
export type EdgeOptions = z.output<typeof edgeOptionsSchema>;

const chunkCount = z.int().min(MIN_CHUNKS).max(MAX_CHUNKS);
const noChunks = z.never({ error: 'Only port, template and webapp scans can be split into chunks.' }).optional();

/** The scan-defining fields, one variant per kind; `extra` adds fields to every variant (schedules). */
function scanVariants<E extends z.ZodRawShape>(extra: E) {
  return z.discriminatedUnion('kind', [
    z
      .object({
        ...extra,
        kind: z.literal('port'),
        options: portOptionsSchema.prefault({}),
        chunkCount: chunkCount.optional(),
      })
      .strict(),
    z
      .object({
        ...extra,
        kind: z.literal('template'),
        options: templateOptionsSchema.prefault({}),
        chunkCount: chunkCount.optional(),
      })
      .strict(),
    z
      .object({
        ...extra,
        kind: z.literal('webapp'),
        options: webappOptionsSchema.prefault({}),
        chunkCount: chunkCount.optional(),
      })
      .strict(),
    z
      .object({
        ...extra,
        kind: z.literal('container'),
        options: containerOptionsSchema.prefault({}),
        chunkCount: noChunks,
      })
      .strict(),
    z
      .object({ ...extra, kind: z.literal('edge'), options: edgeOptionsSchema.prefault({}), chunkCount: noChunks })
      .strict(),
  ]);
}

export const createScanBodySchema = scanVariants({ assetId: z.uuid() });
export type CreateScanBody = z.output<typeof createScanBodySchema>;
export type CreateScanInput = z.input<typeof createScanBodySchema>;

/** What a chunk carries (a port-range slice, a severity bucket and tags, or paths and profile). */
export const chunkSpecSchema = z.union([
  z.object({ kind: z.literal('port'), range: z.object({ from: z.int(), to: z.int() }) }),
  z.object({
    kind: z.literal('template'),
    severities: z.array(severitySchema),
    tags: z.array(z.string()),
    templateIds: z.array(z.string()),
  }),
  z.object({
    kind: z.literal('webapp'),
    paths: z.array(z.string()),
    profile: z.enum(['baseline', 'full']),
    passiveBaseline: z.boolean(),
  }),
]);
export type ChunkSpec = z.infer<typeof chunkSpecSchema>;

/** Why a queued scan has not started (src/scans/scans-waiting.ts); null once it runs or ends. */
export const waitReasonSchema = z.object({
  code: z.enum([
    'no_signing_secret',
    'no_worker',
    'no_active_worker',
    'quota_exceeded',
    'asset_scan_limit',
    'asset_not_found',
    'asset_archived',
    'asset_not_verified',
    'scan_kind_mismatch',
    'retry_backoff',
    'waiting_for_chunks',
    'waiting_for_worker',
  ]),
  message: z.string(),
});
export type WaitReason = z.infer<typeof waitReasonSchema>;

export const scanSchema = z.object({
  id: z.string(),
  kind: scanKindSchema,
  /** worker: run by a worker; import: results a person uploaded (Import results). */
  source: z.enum(['worker', 'import']),
  status: scanStatusSchema,
  percent: z.int(),
  asset: z.object({ id: z.string(), name: z.string(), target: z.string(), kind: z.string() }),
  options: z.record(z.string(), z.unknown()),
  parentId: z.string().nullable(),
  chunkIndex: z.int().nullable(),
  chunkCount: z.int().nullable(),
  chunkSpec: chunkSpecSchema.nullable(),
  scheduleId: z.string().nullable(),
  requestedBy: z.object({ id: z.string(), email: z.string() }).nullable(),
  error: z.string().nullable(),
  outcome: scanOutcomeSchema.nullable(),
  /** Why the outcome is partial or inconclusive. */
  outcomeReason: z.string().nullable(),
  attempts: z.int(),
  waitReason: waitReasonSchema.nullable(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  updatedAt: z.string(),
});
export type ScanDto = z.infer<typeof scanSchema>;

const uuidCursor =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const cursor = z.string().regex(uuidCursor, 'Pass nextBefore from the previous page unchanged.');

export const listScansQuerySchema = z.object({
  status: scanStatusSchema.optional(),
  /** Shorthand for every status that is not finished. */
  active: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === 'true')),
  kind: scanKindSchema.optional(),
  assetId: z.uuid().optional(),
  scheduleId: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: cursor.optional(),
});

export const tenantParamsSchema = z.object({ tenantId: z.uuid() });
export const scanParamsSchema = z.object({ tenantId: z.uuid(), scanId: z.uuid() });
export const scanListSchema = z.object({ scans: z.array(scanSchema), nextBefore: z.string().nullable() });
/** The scan with its chunks and, once its report was read, what the report says it covered. */
export const scanDetailSchema = z.object({
  scan: scanSchema,
  children: z.array(scanSchema),
  coverage: reportCoverageSchema.nullable(),
});
export const scanUsageSchema = z.object({
  day: z.string(),
  used: z.int(),
  dailyScanQuota: z.int(),
  perAssetConcurrentScans: z.int(),
  resetsAt: z.string(),
});

// ---------------------------------------------------------------------------------------------
// Schedules

/** A 5-field cron expression (minute hour day-of-month month day-of-week) or @hourly/@daily/@weekly/@monthly/@yearly. */
export const cronSchema = z.string().trim().min(1).max(100);
export const timeZoneSchema = z.string().trim().min(1).max(64);
const scheduleName = z.string().trim().min(1).max(200);

export const createScheduleBodySchema = scanVariants({
  assetId: z.uuid(),
  name: scheduleName,
  cron: cronSchema,
  timeZone: timeZoneSchema.default('UTC'),
  enabled: z.boolean().default(true),
});
export type CreateScheduleBody = z.output<typeof createScheduleBodySchema>;
export type CreateScheduleInput = z.input<typeof createScheduleBodySchema>;

/** Renames, re-times and switches a schedule; its asset and scan definition stay (make a new one to change them). */
export const updateScheduleBodySchema = z
  .object({
    name: scheduleName,
    cron: cronSchema,
    timeZone: timeZoneSchema,
    enabled: z.boolean(),
  })
  .partial()
  .strict();
export type UpdateScheduleBody = z.output<typeof updateScheduleBodySchema>;

export const scheduleSchema = z.object({
  id: z.string(),
  name: z.string(),
  asset: z.object({ id: z.string(), name: z.string(), target: z.string(), kind: z.string() }),
  kind: scanKindSchema,
  options: z.record(z.string(), z.unknown()),
  chunkCount: z.int().nullable(),
  cron: z.string(),
  timeZone: z.string(),
  enabled: z.boolean(),
  nextRunAt: z.string().nullable(),
  /** The next run as wall-clock time in the schedule's zone, e.g. "2025-03-30 03:00 CEST". */
  nextRunLocal: z.string().nullable(),
  lastRunAt: z.string().nullable(),
  lastScanId: z.string().nullable(),
  lastError: z.string().nullable(),
  createdBy: z.object({ id: z.string(), email: z.string() }).nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ScheduleDto = z.infer<typeof scheduleSchema>;

export const scheduleParamsSchema = z.object({ tenantId: z.uuid(), scheduleId: z.uuid() });
export const listSchedulesQuerySchema = z.object({
  assetId: z.uuid().optional(),
  enabled: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === 'true')),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: cursor.optional(),
});
export const scheduleListSchema = z.object({ schedules: z.array(scheduleSchema), nextBefore: z.string().nullable() });
export const scheduleResponseSchema = z.object({ schedule: scheduleSchema });
export const scheduleDetailSchema = z.object({
  schedule: scheduleSchema,
  /** The next few runs, for the form's preview. */
  upcoming: z.array(z.object({ at: z.string(), local: z.string() })),
  /** Scans this schedule queued, newest first (the full list: GET scans?scheduleId=). */
  history: z.array(scanSchema),
});
export const cronPreviewQuerySchema = z.object({ cron: cronSchema, timeZone: timeZoneSchema.default('UTC') });
export const cronPreviewSchema = z.object({
  timeZone: z.string(),
  upcoming: z.array(z.object({ at: z.string(), local: z.string() })),
});

export const tickResultSchema = z.object({
  ok: z.boolean(),
  dispatched: z.int(),
  results: z.array(z.object({ scheduleId: z.string(), scanId: z.string().optional(), error: z.string().optional() })),
});
export type TickResult = z.infer<typeof tickResultSchema>;
