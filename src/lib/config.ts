// One zod schema for every setting (the README configuration table lists them). Parsed once at boot, frozen.
// Invalid configuration stops the process with a message naming the variable.
import { z } from 'zod';
import { isCidrList } from './egress.ts';

const bool = z
  .enum(['1', '0', 'true', 'false', 'on', 'off', 'yes', 'no'])
  .transform((v) => ['1', 'true', 'on', 'yes'].includes(v));

const csv = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean),
);

const optionalSecret = z.string().min(1).optional();

/** Peer env suffix: upper-case, every character outside A-Z0-9 becomes `_` (`bid-portal` → `BID_PORTAL`). */
export function peerEnvSuffix(name: string): string {
  return name.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/** 16MB instead of PostgreSQL's 128MB: the embedded database serves one small team's data and every megabyte is resident (see docs/decisions.md, 26). */
export const PGLITE_SHARED_BUFFERS_DEFAULT = '16MB';

function pgSizeKb(v: string): number {
  const m = /^(\d+)(kB|MB|GB)$/.exec(v);
  if (!m) return 0;
  return Number(m[1]) * { kB: 1, MB: 1024, GB: 1024 * 1024 }[m[2] as 'kB' | 'MB' | 'GB'];
}

const schema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    HOST: z.string().min(1).default('0.0.0.0'),
    PUBLIC_BASE_URL: z.url().optional(),
    /**
     * Out-of-band checks of template scans: targets call back at PUBLIC_BASE_URL/oob/…. `auto` turns
     * them on when PUBLIC_BASE_URL is set to a name other than localhost or a loopback address.
     */
    OOB_CALLBACKS: z.enum(['auto', 'on', 'off']).default('auto'),
    /** A DNS zone delegated to this server: callbacks become `<token>.<zone>` names, seen by DNS too. */
    OOB_DNS_DOMAIN: z
      .string()
      .toLowerCase()
      .regex(
        /^(?=.{1,200}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
        'must be a DNS name such as oob.example.com',
      )
      .optional(),
    OOB_DNS_PORT: z.coerce.number().int().min(0).max(65535).default(53),
    OOB_DNS_HOST: z.string().min(1).default('0.0.0.0'),
    /** The IPv4 address A questions under the zone are answered with: this server's public one. */
    OOB_DNS_ANSWER: z.ipv4().optional(),
    DATA_DIR: z.string().min(1).default('./.data'),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
    DATABASE_POOL_MAX: z.coerce.number().int().min(2).max(200).default(10),
    /** The embedded database's page cache (PostgreSQL shared_buffers), e.g. 16MB or 256MB. */
    PGLITE_SHARED_BUFFERS: z
      .string()
      .trim()
      .regex(/^[1-9][0-9]{0,6}(kB|MB|GB)$/, 'must be a size such as 16MB, 512kB or 1GB')
      .refine((v) => pgSizeKb(v) >= 1024 && pgSizeKb(v) <= 4 * 1024 * 1024, 'must be from 1MB to 4GB')
      .default(PGLITE_SHARED_BUFFERS_DEFAULT),
    /** How often the embedded database checks which tables need vacuum or analyze (src/db/embedded-maintenance.ts); 0 = never. */
    PGLITE_MAINTENANCE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(60),
    EMBEDDED_WORKER: bool.optional(),
    /** Every new tenant gets a hosted worker (and its webhook signing secret) at creation. */
    TENANT_HOSTED_WORKER: bool.optional(),
    /** Scans each embedded hosted worker runs at once. */
    EMBEDDED_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(2),
    /** The OSV advisory database embedded hosted workers match container images against (`rampart-worker osv import`). */
    OSV_DB_PATH: z.string().trim().optional(),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    TRUST_PROXY: bool.default(false),
    SVC_SELF_NAME: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'lower-case letters, digits and dashes')
      .default('rampart'),
    SVC_MANAGEMENT_PEER: z.string().min(1).optional(),
    SVC_BID_PEER: z.string().min(1).optional(),
    SVC_MAX_DRIFT_MS: z.coerce.number().int().positive().default(300_000),
    SVC_IDEMPOTENCY_STALE_MS: z.coerce.number().int().positive().default(60_000),
    SVC_MAX_BODY_BYTES: z.coerce.number().int().positive().default(262_144),
    SVC_OUTBOX_LEASE_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
    CRON_SECRET: optionalSecret,
    AGENT_RELAY_SECRET: optionalSecret,
    CMMC_SCRIPT_SIGNING_SEED: optionalSecret,
    OPERATIONS_DOC_VERSION: z
      .string()
      .regex(/^\d+\.\d+\.\d+$/, 'a semantic version such as 2.15.0')
      .optional(),
    STAFF_EMAIL_DOMAINS: csv.default([]),
    DNS_RESOLVERS: csv
      .refine(
        (list) => list.every((r) => /^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-f:]+\]|[0-9a-f:]+)(:\d{1,5})?$/.test(r)),
        'comma-separated resolver addresses such as 1.1.1.1,9.9.9.9:53',
      )
      .default([]),
    // Internal ranges that server-side connections and hosted workers may reach (docs/security.md).
    EGRESS_ALLOW: csv
      .refine((list) => isCidrList(list), 'comma-separated CIDR ranges or addresses such as 10.20.0.0/16,fd00:1::/64')
      .default([]),
    DNS_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(3_000),
    // Built-in scheduler: every replica ticks; the tick claims each due schedule once. 0 = only the cron hook.
    SCHEDULE_TICK_SECONDS: z.coerce.number().int().min(0).max(3_600).default(60),
    APP_ENCRYPTION_KEY: z
      .string()
      .refine((v) => Buffer.from(v, 'base64').length === 32, '32 bytes, base64-encoded')
      .optional(),
    // Keys being rotated out: still accepted when opening stored secrets, never used to seal.
    APP_ENCRYPTION_KEY_PREVIOUS: csv
      .refine(
        (list) => list.every((v) => Buffer.from(v, 'base64').length === 32),
        'comma-separated 32-byte keys, base64-encoded',
      )
      .default([]),
    AUTH_SECRET: z.string().min(32, 'at least 32 characters').optional(),
    LLM_BASE_URL: z.url().optional(),
    LLM_API_KEY: optionalSecret,
    LLM_MODEL: z.string().min(1).optional(),
    // JSON-schema structured output (response_format json_schema) for the evidence review; off by
    // default: not every OpenAI-compatible server accepts it, while prompt-JSON works everywhere.
    LLM_STRUCTURED_OUTPUT: bool.default(false),
    SMTP_URL: z
      .string()
      .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
      .optional(),
    MAIL_FROM: z.string().min(3).default('Rampart <no-reply@localhost>'),
    METRICS_TOKEN: optionalSecret,
    SIGNUP_ENABLED: bool.default(true),
    /** Largest container-image archive an upload may carry (bytes); default 2 GiB. */
    IMAGE_ARCHIVE_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(Number.MAX_SAFE_INTEGER)
      .default(2 * 1024 ** 3),
    /** Largest compliance evidence file (bytes); default 25 MiB. */
    EVIDENCE_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(1024 ** 3)
      .default(25 * 1024 ** 2),
    /** Largest raw scan report a worker upload or an import may carry (bytes); default 512 MiB. */
    REPORT_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(Number.MAX_SAFE_INTEGER)
      .default(512 * 1024 ** 2),
    /** Body limit of the legacy single-shot report route (bytes); default 64 MiB. */
    WORKER_LEGACY_REPORT_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(1024 ** 3)
      .default(64 * 1024 ** 2),
    /** Uploaded files this process analyses at once (the result-file explainer; importers may share it). */
    FILE_ANALYSIS_MAX_CONCURRENT: z.coerce.number().int().min(1).max(64).default(2),
    /** Uploaded files one user may have analysed at once. */
    FILE_ANALYSIS_MAX_PER_USER: z.coerce.number().int().min(1).max(64).default(1),
    /** Lease attempts of a scan before an expired or failing lease fails it. */
    WORKER_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(3),
    WORKER_LEASE_SECONDS: z.coerce.number().int().min(10).max(3600).default(90),
    INGEST_LOCK_SECONDS: z.coerce.number().int().min(10).max(3600).default(60),
    /** Heap of the thread each report is parsed on; a report needing more fails (not retried). */
    IMPORT_PARSE_HEAP_MB: z.coerce.number().int().min(16).max(4096).default(160),
    /** Platform object storage in an S3-compatible bucket instead of DATA_DIR (several replicas). */
    STORAGE_S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
    STORAGE_S3_BUCKET: z.string().trim().min(3).max(63).optional(),
    STORAGE_S3_REGION: z.string().trim().min(1).default('us-east-1'),
    STORAGE_S3_ACCESS_KEY_ID: optionalSecret,
    STORAGE_S3_SECRET_ACCESS_KEY: optionalSecret,
    STORAGE_S3_PATH_STYLE: bool.default(true),
    STORAGE_S3_PREFIX: z
      .string()
      .trim()
      .regex(
        /^[A-Za-z0-9!_.*'()-]+(\/[A-Za-z0-9!_.*'()-]+)*$/,
        "path segments of letters, digits and !_.*'()- separated by /, no leading or trailing slash",
      )
      .optional(),
  })
  .refine(
    (c) => {
      const s3 = [
        c.STORAGE_S3_ENDPOINT,
        c.STORAGE_S3_BUCKET,
        c.STORAGE_S3_ACCESS_KEY_ID,
        c.STORAGE_S3_SECRET_ACCESS_KEY,
      ];
      return s3.every(Boolean) || !s3.some(Boolean);
    },
    {
      path: ['STORAGE_S3_ENDPOINT'],
      message:
        'set STORAGE_S3_ENDPOINT, STORAGE_S3_BUCKET, STORAGE_S3_ACCESS_KEY_ID and STORAGE_S3_SECRET_ACCESS_KEY together',
    },
  )
  .transform((c) => ({
    ...c,
    PUBLIC_BASE_URL: (c.PUBLIC_BASE_URL ?? `http://localhost:${c.PORT}`).replace(/\/+$/, ''),
    oobCallbacks:
      c.OOB_CALLBACKS === 'on' ||
      (c.OOB_CALLBACKS === 'auto' &&
        c.PUBLIC_BASE_URL !== undefined &&
        !/^(?:localhost|127\.[\d.]+|\[::1\])$/i.test(new URL(c.PUBLIC_BASE_URL).hostname)),
    EMBEDDED_WORKER: c.EMBEDDED_WORKER ?? !c.DATABASE_URL,
    TENANT_HOSTED_WORKER: c.TENANT_HOSTED_WORKER ?? (!c.DATABASE_URL && (c.EMBEDDED_WORKER ?? true)),
    embedded: !c.DATABASE_URL,
  }));

export type Config = Readonly<z.output<typeof schema>> & {
  /** Mesh peer entries (SVC_PEER_URL_*, SVC_SECRET_TO_*, SVC_SECRET_FROM_*, SVC_PEER_FLOWS_*), keyed by env suffix. */
  readonly peers: Readonly<Record<string, PeerConfig>>;
};

export interface PeerConfig {
  readonly suffix: string;
  readonly url?: string;
  readonly secretTo?: string;
  readonly secretFrom?: string;
  readonly flows: readonly string[];
}

export class ConfigError extends Error {
  readonly issues: string[];
  constructor(issues: string[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

const PEER_RE = /^SVC_(PEER_URL|SECRET_TO|SECRET_FROM|PEER_FLOWS)_([A-Z0-9_]+)$/;

function parsePeers(env: NodeJS.ProcessEnv, issues: string[]): Record<string, PeerConfig> {
  const peers: Record<string, { url?: string; secretTo?: string; secretFrom?: string; flows?: string[] }> = {};
  for (const [key, value] of Object.entries(env)) {
    const m = PEER_RE.exec(key);
    if (!m || value === undefined || value === '') continue;
    const [, kind, suffix] = m as unknown as [string, string, string];
    const p = (peers[suffix] ??= {});
    if (kind === 'PEER_URL') {
      if (!z.url({ protocol: /^https?$/ }).safeParse(value).success) issues.push(`${key}: must be an http(s) URL`);
      else p.url = value;
    } else if (kind === 'SECRET_TO') p.secretTo = value;
    else if (kind === 'SECRET_FROM') p.secretFrom = value;
    else
      p.flows = value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
  }
  // Flow allowlist alone does not make a peer (URL or secret entries define the list, docs/mesh.md §2).
  const out: Record<string, PeerConfig> = {};
  for (const [suffix, p] of Object.entries(peers)) {
    if (!p.url && !p.secretTo && !p.secretFrom) continue;
    out[suffix] = Object.freeze({ suffix, ...p, flows: Object.freeze(p.flows ?? ['ping', 'health_check']) });
  }
  return out;
}

/** Parses the environment once. Throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings mean "unset", as in most deployment tools.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(cleaned);
  const issues: string[] = [];
  if (!result.success) {
    for (const issue of result.error.issues) issues.push(`${issue.path.join('.') || '(env)'}: ${issue.message}`);
  }
  const peers = parsePeers(cleaned, issues);
  if (issues.length || !result.success) throw new ConfigError(issues);
  return Object.freeze({ ...result.data, peers: Object.freeze(peers) });
}
