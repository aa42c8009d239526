// The YAML shape of a template, checked with zod before anything is compiled: field names, types
// and per-template limits (so one template cannot make a worker send or hold without bound).
// Keys nuclei has but this engine does not run are refused by name (UNSUPPORTED_KEYS).
import { z } from 'zod';

export const TEMPLATE_LIMITS = {
  bytes: 64 * 1024,
  blocks: 10,
  paths: 100,
  matchers: 50,
  extractors: 20,
  words: 500,
  redirects: 10,
  payloadValues: 2_000,
  /** Requests one template may generate (paths or raw requests times payload combinations). */
  requests: 2_000,
  variables: 100,
} as const;

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
/** A comma string or a list; empty values (`cve-id:` with nothing after it) are simply absent. */
export const list = z
  .union([scalar, z.array(scalar)])
  .nullish()
  .transform((v) =>
    (v === null || v === undefined
      ? []
      : typeof v === 'string'
        ? v.split(',')
        : Array.isArray(v)
          ? v.map((x) => (x === null ? '' : String(x)))
          : [String(v)]
    )
      .map((x) => x.trim())
      .filter(Boolean),
  );
const text = (max: number) =>
  z
    .union([z.string().max(max), z.number(), z.null()])
    .optional()
    .transform((v) => (v === null || v === undefined ? undefined : String(v)));
const bool = z.boolean({ error: 'must be true or false' });
const condition = z.enum(['and', 'or'], { error: 'must be "and" or "or"' });
/** YAML lists of strings where nuclei also reads numbers as text (`words: [200]`). */
const strings = (max: number) =>
  z
    .array(z.union([z.string(), z.number(), z.boolean()]).transform(String), { error: 'must be a list of strings' })
    .min(1, 'must list at least one value')
    .max(max, `at most ${max} values`);
const ints = z
  .array(z.coerce.number().int().min(0).max(1_000_000_000), { error: 'must be a list of whole numbers' })
  .min(1, 'must list at least one value')
  .max(100);
const name = z
  .union([z.string(), z.number()])
  .transform(String)
  .pipe(
    z
      .string()
      .trim()
      .max(100)
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, 'letters, digits, dot, dash, underscore and colon only'),
  );

export const matcherSchema = z
  .object({
    type: z.enum(['word', 'regex', 'binary', 'status', 'size', 'dsl', 'xpath'], {
      error: 'must be word, regex, binary, status, size, dsl or xpath',
    }),
    name: name.optional(),
    part: z.string().trim().min(1).max(100).optional(),
    condition: condition.optional(),
    negative: bool.optional(),
    internal: bool.optional(),
    'case-insensitive': bool.optional(),
    'match-all': bool.optional(),
    encoding: z.enum(['hex'], { error: 'the only encoding is hex' }).optional(),
    words: strings(TEMPLATE_LIMITS.words).optional(),
    regex: strings(100).optional(),
    binary: strings(100).optional(),
    status: ints.optional(),
    size: ints.optional(),
    dsl: strings(50).optional(),
    xpath: strings(50).optional(),
  })
  .strict();

export const extractorSchema = z
  .object({
    type: z.enum(['regex', 'kval', 'json', 'dsl', 'xpath'], {
      error: 'must be regex, kval, json, dsl or xpath',
    }),
    name: name.optional(),
    part: z.string().trim().min(1).max(100).optional(),
    regex: strings(50).optional(),
    group: z.int().min(0).max(99).optional(),
    kval: strings(50).optional(),
    json: strings(20).optional(),
    dsl: strings(20).optional(),
    xpath: strings(20).optional(),
    attribute: z.string().trim().min(1).max(100).optional(),
    internal: bool.optional(),
    'case-insensitive': bool.optional(),
  })
  .strict();

const payloadValues = z.union([
  z
    .array(z.union([z.string(), z.number(), z.boolean()]).transform(String))
    .max(TEMPLATE_LIMITS.payloadValues, `at most ${TEMPLATE_LIMITS.payloadValues} values`),
  z.string(),
  z.number().transform(String),
]);

export const blockSchema = z
  .object({
    id: name.optional(),
    name: z.string().max(200).optional(),
    method: z
      .string()
      .trim()
      .toUpperCase()
      .pipe(
        z.enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT', 'PURGE', 'DEBUG'], {
          error: 'must be GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE, PURGE or DEBUG',
        }),
      )
      .optional(),
    path: z
      .array(z.string().max(8_192), { error: 'must be a list of URLs such as "{{BaseURL}}/.git/config"' })
      .min(1, 'must list at least one path')
      .max(TEMPLATE_LIMITS.paths, `at most ${TEMPLATE_LIMITS.paths} paths per request`)
      .optional(),
    raw: z
      .array(z.string().max(32_768), { error: 'must be a list of HTTP requests' })
      .min(1, 'must list at least one request')
      .max(TEMPLATE_LIMITS.paths, `at most ${TEMPLATE_LIMITS.paths} raw requests per block`)
      .optional(),
    // nuclei reads `Content-Length: 1` (a YAML number) as the text "1".
    headers: z
      .record(z.string().max(200), z.union([z.string().max(8_192), z.number(), z.boolean()]).transform(String), {
        error: 'must map header names to values',
      })
      .optional(),
    body: z.union([z.string().max(32_768), z.number().transform(String)]).optional(),
    payloads: z
      .record(z.string().max(100), payloadValues, { error: 'must map payload names to lists of values' })
      .optional(),
    attack: z
      .enum(['batteringram', 'pitchfork', 'clusterbomb'], { error: 'must be batteringram, pitchfork or clusterbomb' })
      .optional(),
    threads: z.int().min(0).max(1_000).optional(),
    redirects: bool.optional(),
    'host-redirects': bool.optional(),
    'max-redirects': z.int().min(0).max(100).optional(),
    'stop-at-first-match': bool.optional(),
    'cookie-reuse': bool.optional(),
    'disable-cookie': bool.optional(),
    'req-condition': bool.optional(),
    'iterate-all': bool.optional(),
    'skip-variables-check': bool.optional(),
    'disable-path-automerge': bool.optional(),
    'max-size': z.int().min(0).optional(),
    'read-all': bool.optional(),
    pipeline: bool.optional(),
    'pipeline-concurrent-connections': z.int().optional(),
    'pipeline-requests-per-connection': z.int().optional(),
    'matchers-condition': condition.optional(),
    matchers: z
      .array(matcherSchema)
      .max(TEMPLATE_LIMITS.matchers, `at most ${TEMPLATE_LIMITS.matchers} matchers per request`)
      .optional(),
    extractors: z
      .array(extractorSchema)
      .max(TEMPLATE_LIMITS.extractors, `at most ${TEMPLATE_LIMITS.extractors} extractors per request`)
      .optional(),
  })
  .strict();

/** `info`: unknown keys (metadata, impact, ...) are allowed and ignored. */
export const infoSchema = z.looseObject(
  {
    name: z
      .union([z.string(), z.number()], { error: 'the template needs info.name' })
      .transform(String)
      .pipe(z.string().trim().min(1, 'the name must not be empty').max(300)),
    author: list,
    severity: z
      .string({ error: 'the template needs info.severity: info, low, medium, high or critical' })
      .trim()
      .toLowerCase()
      .pipe(
        z.enum(['info', 'low', 'medium', 'high', 'critical', 'unknown'], {
          error: 'must be info, low, medium, high, critical or unknown',
        }),
      )
      .transform((s) => (s === 'unknown' ? 'info' : s)),
    description: text(10_000),
    remediation: text(5_000),
    reference: list,
    tags: list,
    classification: z
      .looseObject({
        'cve-id': list,
        'cwe-id': list,
        'cvss-metrics': text(200),
        'cvss-score': z.union([z.number(), z.string(), z.null()]).optional(),
      })
      .nullish(),
  },
  { error: 'the template needs an info block with name and severity' },
);

const variableValue = z.union([
  z.string().max(8_192),
  z.number().transform(String),
  z.boolean().transform(String),
  z.array(z.union([z.string(), z.number()]).transform(String)).max(1_000),
]);

export const templateSchema = z
  .object({
    id: z
      .string({ error: 'the template needs an id' })
      .trim()
      .min(1)
      .max(100, 'at most 100 characters')
      .regex(
        /^[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*$/,
        'letters and digits separated by single dashes, underscores or dots, e.g. exposed-git-config',
      ),
    info: infoSchema,
    'stop-at-first-match': bool.optional(),
    'self-contained': bool.optional(),
    flow: z.string({ error: 'must be text such as "http(1) && http(2)"' }).max(4_000).optional(),
    variables: z.record(z.string().max(100), variableValue).optional(),
    constants: z.record(z.string().max(100), variableValue).optional(),
    http: z
      .array(blockSchema)
      .min(1, 'must hold at least one request')
      .max(TEMPLATE_LIMITS.blocks, `at most ${TEMPLATE_LIMITS.blocks} requests per template`)
      .optional(),
    requests: z
      .array(blockSchema)
      .min(1)
      .max(TEMPLATE_LIMITS.blocks, `at most ${TEMPLATE_LIMITS.blocks} requests per template`)
      .optional(),
  })
  .strict();

/** The most a network template reads from one connection. */
export const NETWORK_MAX_READ = 1024 * 1024;
const MAX_READ = NETWORK_MAX_READ;

export const networkBlockSchema = z
  .object({
    id: z.string().max(100).optional(),
    host: z.array(z.string().max(500)).min(1, 'must list at least one host such as "{{Hostname}}"').max(10),
    port: z.union([z.string().max(100), z.number().transform(String)]).optional(),
    inputs: z
      .array(
        z
          .object({
            data: z.union([z.string().max(32_768), z.number().transform(String)]).optional(),
            type: z.enum(['hex', 'text'], { error: 'must be hex or text' }).optional(),
            read: z.int().min(0).max(MAX_READ).optional(),
            name: z.string().max(100).optional(),
          })
          .strict(),
      )
      .max(50)
      .optional(),
    'read-size': z.int().min(1).max(MAX_READ).optional(),
    'read-all': z.boolean().optional(),
    'stop-at-first-match': z.boolean().optional(),
    'matchers-condition': z.enum(['and', 'or']).optional(),
    matchers: z.array(matcherSchema).max(TEMPLATE_LIMITS.matchers).optional(),
    extractors: z.array(extractorSchema).max(TEMPLATE_LIMITS.extractors).optional(),
  })
  .strict();
export type RawNetworkBlock = z.output<typeof networkBlockSchema>;

export const sslBlockSchema = z
  .object({
    id: z.string().max(100).optional(),
    address: z.string().max(500),
    min_version: z.string().max(20).optional(),
    max_version: z.string().max(20).optional(),
    cipher_suites: z.array(z.string().max(100)).max(400).optional(),
    // One TLS client here: nuclei's choice of client library changes nothing a template reads.
    scan_mode: z.enum(['auto', 'ctls', 'ztls', 'openssl'], { error: 'must be auto, ctls, ztls or openssl' }).optional(),
    tls_version_enum: z.boolean().optional(),
    tls_cipher_enum: z.boolean().optional(),
    tls_cipher_types: z
      .array(z.enum(['weak', 'secure', 'insecure', 'all']))
      .max(4)
      .optional(),
    'matchers-condition': z.enum(['and', 'or']).optional(),
    matchers: z.array(matcherSchema).max(TEMPLATE_LIMITS.matchers).optional(),
    extractors: z.array(extractorSchema).max(TEMPLATE_LIMITS.extractors).optional(),
  })
  .strict();
export type RawSslBlock = z.output<typeof sslBlockSchema>;

export type RawTemplate = z.output<typeof templateSchema>;
export type RawBlock = z.output<typeof blockSchema>;
export type RawMatcher = z.output<typeof matcherSchema>;
export type RawExtractor = z.output<typeof extractorSchema>;

/** Keys of nuclei templates outside what this engine runs, with what to say about them. */
export const UNSUPPORTED_KEYS: Record<string, string> = {
  fuzzing: 'fuzzing rules (DAST) are not supported',
  race: 'race requests are not supported',
  race_count: 'race requests are not supported',
  unsafe: 'unsafe (raw socket) requests are not supported: they could frame requests the target forwards elsewhere',
  'digest-username': 'digest authentication is not supported',
  'digest-password': 'digest authentication is not supported',
  signature: 'request signing (AWS) is not supported',
  analyzer: 'analyzers (time-based detection) are not supported',
  dns: 'dns templates are not supported (http, network and ssl are)',
  file: 'file templates are not supported',
  headless: 'headless (browser) templates are not supported',
  code: 'code templates are not supported: they run programs on the worker',
  javascript: 'javascript templates are not supported',
  websocket: 'websocket templates are not supported',
  whois: 'whois templates are not supported',
  workflows: 'workflows are not supported',
};
