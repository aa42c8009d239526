// Shapes of findings: what scanners hand to ingestion (NormalizedFinding), and the findings API's
// requests and responses, shared with the web app (type-only imports there).
import { z } from 'zod';
import { SCAN_KINDS } from '../lib/scan-kinds.ts';

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export const severitySchema = z.enum(SEVERITIES);
export type Severity = z.infer<typeof severitySchema>;
export const SEVERITY_RANK: Record<Severity, number> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };

export const FINDING_STATUSES = ['open', 'fixed', 'accepted_risk', 'false_positive'] as const;
export const findingStatusSchema = z.enum(FINDING_STATUSES);
export type FindingStatus = z.infer<typeof findingStatusSchema>;

/** The scanner a finding came from: one of the scan kinds. */
export const SCANNERS = SCAN_KINDS;
export const scannerSchema = z.enum(SCANNERS);
export type Scanner = z.infer<typeof scannerSchema>;

export const CVE_RE = /^CVE-\d{4}-\d{4,9}$/i;
const CWE_RE = /^(?:CWE-)?(\d{1,6})$/i;

/** Caps for stored evidence: longer text is cut (and marked), never refused. */
export const EVIDENCE_CAPS = {
  summary: 2_000,
  request: 16_384,
  response: 32_768,
  curl: 8_192,
  snippet: 8_192,
  extracted: 1_024,
  data: 16_384,
} as const;
const TRUNCATED = '\n… [truncated by Rampart]';

/** Header values that may carry credentials; scanners copy them into requests and curl lines. */
const SECRET_HEADER_RE =
  /\b(authorization|proxy-authorization|cookie|set-cookie|x-api-key|x-auth-token|api-key)([ \t]*:[ \t]*)[^\r\n'"]*/gi;

export function redactSecrets(text: string): string {
  return text.replace(SECRET_HEADER_RE, '$1$2[redacted]');
}

function capText(max: number) {
  // The hard input ceiling keeps one absurd field from exhausting memory; below it, text is cut.
  return z
    .string()
    .max(1_000_000)
    .transform((s) => {
      const clean = redactSecrets(s);
      return clean.length > max ? clean.slice(0, max - TRUNCATED.length) + TRUNCATED : clean;
    });
}

export const evidenceSchema = z
  .object({
    summary: capText(EVIDENCE_CAPS.summary),
    request: capText(EVIDENCE_CAPS.request),
    response: capText(EVIDENCE_CAPS.response),
    curl: capText(EVIDENCE_CAPS.curl),
    snippet: capText(EVIDENCE_CAPS.snippet),
    extracted: z.array(capText(EVIDENCE_CAPS.extracted)).max(50),
    /** Scanner-specific structured detail (banner, cipher list, ...); at most 16 KiB as JSON. */
    data: z
      .record(z.string(), z.unknown())
      .refine(
        (d) => JSON.stringify(d).length <= EVIDENCE_CAPS.data,
        `Evidence data must be at most ${EVIDENCE_CAPS.data} bytes of JSON.`,
      ),
  })
  .partial()
  .strict();
export type Evidence = z.output<typeof evidenceSchema>;

export const locationSchema = z
  .object({
    /** A full URL (web findings); its query string and fragment never identify a finding. */
    url: z.string().trim().min(1).max(2_000),
    host: z.string().trim().min(1).max(253),
    port: z.int().min(0).max(65_535),
    /** tcp / udp for ports; the URL scheme is taken from `url`. */
    protocol: z.string().trim().min(1).max(20),
    path: z.string().trim().min(1).max(2_000),
    /** The parameter a web finding concerns (its name, never its value). */
    param: z.string().trim().min(1).max(200),
    /** Container findings: the package and installed version. */
    package: z.string().trim().min(1).max(300),
    version: z.string().trim().min(1).max(200),
    file: z.string().trim().min(1).max(1_000),
    line: z.int().min(0).max(10_000_000),
  })
  .partial()
  .strict();
export type FindingLocation = z.output<typeof locationSchema>;

/** The finding's fields; normalizedFindingSchema is what parses (NUL characters replaced first). */
export const normalizedFindingObjectSchema = z
  .object({
    ruleId: z.string().trim().min(1).max(200),
    title: z.string().trim().min(1).max(500),
    description: z.string().max(20_000).optional(),
    severity: severitySchema,
    cvss: z
      .object({
        score: z.number().min(0).max(10),
        vector: z
          .string()
          .trim()
          .max(200)
          .regex(
            /^(?:CVSS:\d\.\d\/)?[A-Za-z]{1,3}:[A-Za-z0-9.]+(?:\/[A-Za-z]{1,3}:[A-Za-z0-9.]+)*$/,
            'Give a CVSS vector such as CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H.',
          )
          .optional(),
      })
      .strict()
      .optional(),
    cwe: z
      .array(z.union([z.int().min(1).max(999_999), z.string().trim().regex(CWE_RE, 'Give a CWE id such as CWE-79.')]))
      .max(20)
      .transform((xs) =>
        [...new Set(xs.map((x) => (typeof x === 'number' ? x : Number(CWE_RE.exec(x)![1]))))].sort((a, b) => a - b),
      )
      .optional(),
    cve: z
      .array(z.string().trim().regex(CVE_RE, 'Give a CVE id such as CVE-2024-3094.'))
      .max(50)
      .transform((xs) => [...new Set(xs.map((x) => x.toUpperCase()))].sort())
      .optional(),
    location: locationSchema,
    evidence: evidenceSchema.optional(),
    remediation: z.string().max(10_000).optional(),
    references: z
      .array(z.url({ protocol: /^https?$/, error: 'References must be http(s) URLs.' }).max(2_000))
      .max(20)
      .optional(),
    /** What tells apart several results of one rule at one location, e.g. a nuclei matcher name. */
    discriminator: z.string().trim().min(1).max(200).optional(),
  })
  .strict();

/**
 * PostgreSQL text and jsonb cannot hold U+0000, and scanners quote raw answers (a binary body in
 * a template match, a banner): a NUL would fail the whole ingest, so it becomes U+FFFD here.
 */
function hasNul(v: unknown, depth = 0): boolean {
  if (typeof v === 'string') return v.includes('\u0000');
  if (depth > 8 || v === null || typeof v !== 'object') return false;
  // Loops rather than Object.values(): this runs on every finding of every report, and the arrays
  // it made were a twentieth of what parsing a nuclei report allocates.
  if (Array.isArray(v)) {
    for (const x of v) if (hasNul(x, depth + 1)) return true;
    return false;
  }
  for (const k in v) if (Object.hasOwn(v, k) && hasNul((v as Record<string, unknown>)[k], depth + 1)) return true;
  return false;
}
function replaceNul(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return v.replaceAll('\u0000', '\uFFFD');
  if (depth > 8 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => replaceNul(x, depth + 1));
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, replaceNul(x, depth + 1)]));
}
// Ingestion parses every finding through here: copy only the rare finding that holds a NUL.
const withoutNul = (v: unknown): unknown => (hasNul(v) ? replaceNul(v) : v);

/** One finding as a scanner reports it, before fingerprinting. */
export const normalizedFindingSchema = z.preprocess((v) => withoutNul(v), normalizedFindingObjectSchema);
export type NormalizedFinding = z.output<typeof normalizedFindingObjectSchema>;
export type NormalizedFindingInput = z.input<typeof normalizedFindingObjectSchema>;

/** A scan's findings for one ingestion; 50,000 per scan is far above any report seen so far. */
export const MAX_FINDINGS_PER_INGEST = 50_000;
export const ingestFindingsSchema = z.array(normalizedFindingSchema).max(MAX_FINDINGS_PER_INGEST);

/**
 * What the scan was authoritative for: open findings of the same asset and scanner inside this
 * scope that it did not report are closed. See findings-scope.ts.
 */
export const ingestScopeSchema = z.discriminatedUnion('kind', [
  /** The scan checked everything its scanner checks on the asset. */
  z.object({ kind: z.literal('full') }).strict(),
  /** A port-scan chunk: only these inclusive port ranges were probed. */
  z
    .object({
      kind: z.literal('ports'),
      ranges: z
        .array(z.tuple([z.int().min(0).max(65_535), z.int().min(0).max(65_535)]))
        .min(1)
        .max(64),
    })
    .strict(),
  /** A template-scan chunk: templates of these severities (optionally only these tags or template ids). */
  z
    .object({
      kind: z.literal('severities'),
      severities: z.array(severitySchema).min(1),
      tags: z.array(z.string().min(1).max(100)).max(100).default([]),
      templateIds: z.array(z.string().min(1).max(200)).max(1_000).default([]),
    })
    .strict(),
  /** A web-application chunk: crawling seeded at these paths. */
  z
    .object({ kind: z.literal('paths'), paths: z.array(z.string().startsWith('/').max(2_000)).min(1).max(100) })
    .strict(),
  /** Partial results (a failed or cancelled scan): nothing is closed. */
  z.object({ kind: z.literal('none') }).strict(),
]);
export type IngestScope = z.input<typeof ingestScopeSchema>;

/** URLs a coverage record lists at most; `urlCount` keeps the full number. */
export const MAX_COVERAGE_URLS = 5_000;
/** A coverage record's JSON at most (it travels in the report header, a line of at most 4 MiB). */
export const MAX_COVERAGE_BYTES = 2 * 1024 * 1024;
const coveragePort = z.int().min(1).max(65_535);

/**
 * What one scan result actually looked at (docs/report-format.md, "coverage"; the meaning of each
 * field: docs/decisions.md, "What a scan result covered"). Every field is optional: a field that is absent says
 * nothing, an empty list says "none". Read together with the report's scanner and tool.
 */
export const reportCoverageSchema = z
  .object({
    /** Host names and addresses probed (port and edge scans, a template scan's host). */
    hosts: z.array(z.string().trim().min(1).max(253)).max(64),
    /** Inclusive TCP port ranges probed: every port of a port scan's plan, the ports an edge scan checked. */
    ports: z
      .array(z.tuple([coveragePort, coveragePort]).refine(([a, b]) => a <= b, 'A port range ends before it starts.'))
      .max(65_535),
    /** URLs answered (a crawl's fetched pages; a template scan's base URL), at most MAX_COVERAGE_URLS. */
    urls: z.array(z.string().min(1).max(2_000)).max(MAX_COVERAGE_URLS),
    /** How many URLs were answered in all, when `urls` had to be cut. */
    urlCount: z.int().min(0),
    /** Template ids run. */
    templates: z.array(z.string().trim().min(1).max(200)).max(20_000),
    /** Rule ids the scan ran (a trailing `*` matches any suffix, e.g. `port.open.tcp.*`). */
    rules: z.array(z.string().trim().min(1).max(200)).max(5_000),
    /** Only findings of these severities were reported (a filter or threshold). */
    severities: z.array(severitySchema).min(1).max(SEVERITIES.length),
    /** The container image read: the reference asked for, the manifest digest, the platform. */
    image: z
      .object({
        reference: z.string().min(1).max(1_000),
        digest: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'An image digest is sha256: and 64 hex digits.'),
        platform: z.string().min(1).max(100),
      })
      .partial()
      .strict(),
  })
  .partial()
  .strict()
  .refine(
    (c) => JSON.stringify(c).length <= MAX_COVERAGE_BYTES,
    `A coverage record must be at most ${MAX_COVERAGE_BYTES} bytes of JSON.`,
  );
export type ReportCoverage = z.output<typeof reportCoverageSchema>;

// ---- API -----------------------------------------------------------------------------------

/** Comma-separated or repeated query values, e.g. severity=critical,high. */
const splitList = (v: unknown) =>
  v === undefined
    ? undefined
    : (Array.isArray(v) ? v : [v])
        .flatMap((x) => String(x).split(','))
        .map((x) => x.trim())
        .filter(Boolean);

export const FINDING_SORTS = ['severity', 'first_seen', 'last_seen', 'sla_due'] as const;
export const findingSortSchema = z.enum(FINDING_SORTS);
export type FindingSort = z.infer<typeof findingSortSchema>;

const boolParam = z.enum(['true', 'false']).transform((v) => v === 'true');

/** Filters shared by the list and the exports. */
export const findingFiltersSchema = z.object({
  severity: z.preprocess(splitList, z.array(severitySchema).min(1).max(SEVERITIES.length).optional()),
  status: z.preprocess(splitList, z.array(findingStatusSchema).min(1).max(FINDING_STATUSES.length).optional()),
  assetId: z.uuid().optional(),
  scanner: scannerSchema.optional(),
  /** Findings this scan reported last (a later scan that reports one again takes it over). */
  scanId: z.uuid().optional(),
  ruleId: z.string().trim().min(1).max(200).optional(),
  cwe: z
    .string()
    .trim()
    .regex(CWE_RE, 'Give a CWE id such as CWE-79.')
    .transform((v) => Number(CWE_RE.exec(v)![1]))
    .optional(),
  cve: z
    .string()
    .trim()
    .regex(CVE_RE, 'Give a CVE id such as CVE-2024-3094.')
    .transform((v) => v.toUpperCase())
    .optional(),
  /** Title, rule id, location or CVE id containing this text. */
  q: z.string().trim().min(1).max(200).optional(),
  /** Open findings past their SLA due date. */
  overdue: boolParam.optional(),
  firstSeenFrom: z.iso.datetime({ offset: true }).optional(),
  firstSeenTo: z.iso.datetime({ offset: true }).optional(),
});
export type FindingFilters = z.output<typeof findingFiltersSchema>;

export const listFindingsQuerySchema = findingFiltersSchema.extend({
  sort: findingSortSchema.default('severity'),
  /** Defaults: newest or worst first; soonest due first for sla_due. */
  dir: z.enum(['asc', 'desc']).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** Opaque, from nextCursor of the previous page with the same sort. */
  cursor: z
    .string()
    .max(400)
    .regex(/^[A-Za-z0-9_-]+$/, 'Pass nextCursor from the previous page unchanged.')
    .optional(),
});
export type ListFindingsQuery = z.output<typeof listFindingsQuerySchema>;

export const exportFindingsQuerySchema = findingFiltersSchema.extend({
  format: z.enum(['csv', 'json', 'sarif']),
  sort: findingSortSchema.default('severity'),
  dir: z.enum(['asc', 'desc']).optional(),
});
export type ExportFindingsQuery = z.output<typeof exportFindingsQuerySchema>;

export const findingSummarySchema = z.object({
  id: z.string(),
  title: z.string(),
  severity: severitySchema,
  status: findingStatusSchema,
  scanner: scannerSchema,
  ruleId: z.string(),
  asset: z.object({ id: z.string(), name: z.string(), target: z.string(), kind: z.string() }),
  locationText: z.string(),
  cvssScore: z.number().nullable(),
  cweIds: z.array(z.number()),
  cveIds: z.array(z.string()),
  firstSeenAt: z.string(),
  lastSeenAt: z.string(),
  fixedAt: z.string().nullable(),
  slaDueAt: z.string().nullable(),
  overdue: z.boolean(),
  statusReason: z.string().nullable(),
  statusExpiresAt: z.string().nullable(),
  reopenedCount: z.number(),
});
export type FindingSummary = z.infer<typeof findingSummarySchema>;

export const severityCountsSchema = z.object({
  info: z.number(),
  low: z.number(),
  medium: z.number(),
  high: z.number(),
  critical: z.number(),
});

export const findingListSchema = z.object({
  findings: z.array(findingSummarySchema),
  nextCursor: z.string().nullable(),
  /**
   * Counts per severity for the current filters, the severity filter left out (for the chips).
   * On the first page only (no cursor); later pages of the same filters carry null.
   */
  counts: severityCountsSchema.nullable(),
  /** Findings matching every filter; first page only, like counts. */
  total: z.number().nullable(),
});
export type FindingList = z.infer<typeof findingListSchema>;

export const findingEventSchema = z.object({
  id: z.number(),
  at: z.string(),
  event: z.enum(['created', 'fixed', 'reopened', 'status_changed', 'severity_changed', 'risk_expired']),
  fromStatus: z.string().nullable(),
  toStatus: z.string().nullable(),
  scanId: z.string().nullable(),
  reason: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()).nullable(),
  actorEmail: z.string().nullable(),
});
export type FindingEvent = z.infer<typeof findingEventSchema>;

export const findingDetailSchema = z.object({
  finding: findingSummarySchema.extend({
    description: z.string().nullable(),
    cvssVector: z.string().nullable(),
    location: z.record(z.string(), z.unknown()),
    evidence: z.record(z.string(), z.unknown()),
    remediation: z.string().nullable(),
    references: z.array(z.string()),
    fingerprint: z.string(),
    scopeKey: z.string(),
    scanId: z.string().nullable(),
    firstScanId: z.string().nullable(),
    statusChangedAt: z.string().nullable(),
    statusChangedBy: z.string().nullable(),
  }),
  history: z.array(findingEventSchema),
});
export type FindingDetail = z.infer<typeof findingDetailSchema>;

export const findingParamsSchema = z.object({ tenantId: z.uuid(), findingId: z.uuid() });

/** At most this many findings per bulk status change. */
export const MAX_BULK_IDS = 500;
/** The longest a risk may be accepted before it must be reviewed again. */
export const MAX_ACCEPT_DAYS = 365;

export const bulkStatusBodySchema = z
  .object({
    ids: z
      .array(z.uuid())
      .min(1)
      .max(MAX_BULK_IDS, `Change at most ${MAX_BULK_IDS} findings at once.`)
      .transform((xs) => [...new Set(xs)]),
    status: findingStatusSchema,
    reason: z.string().trim().min(3, 'Give a reason of at least 3 characters.').max(1_000).optional(),
    /** Accepted risk only: when the acceptance lapses and the finding is open again. */
    expiresAt: z.iso.datetime({ offset: true }).optional(),
  })
  .strict()
  .refine((b) => !((b.status === 'accepted_risk' || b.status === 'false_positive') && !b.reason), {
    path: ['reason'],
    message: 'Say why: a reason is required for an accepted risk or a false positive.',
  })
  .refine((b) => !(b.status === 'accepted_risk' && !b.expiresAt), {
    path: ['expiresAt'],
    message: 'An accepted risk needs an expiry date.',
  })
  .refine((b) => !(b.status !== 'accepted_risk' && b.expiresAt), {
    path: ['expiresAt'],
    message: 'Only an accepted risk has an expiry date.',
  });
export type BulkStatusBody = z.output<typeof bulkStatusBodySchema>;
export type BulkStatusInput = z.input<typeof bulkStatusBodySchema>;

export const bulkStatusResponseSchema = z.object({ updated: z.number(), status: findingStatusSchema });
