// The template format: a documented subset of nuclei's HTTP templates (docs: the template-format
// section of docs/). Tenants upload their own, so everything is checked before a template runs:
// zod for the shape, then the regexes (RE2-compatible and ReDoS-resistant, regex.ts), the DSL
// expressions (dsl.ts) and the request paths (always under the scanned origin). Errors name the
// exact place, e.g. `http[0].matchers[1].regex[0]: lookahead (?=…) is not supported`.
import { parseDocument } from 'yaml';
import { z } from 'zod';
import type { Severity } from '../../../findings/index.ts';
import { DslError, parseDsl, type DslNode } from './dsl.ts';
import { compileTemplateRegex } from './regex.ts';

export const TEMPLATE_LIMITS = { bytes: 64 * 1024, blocks: 10, paths: 20, matchers: 50, extractors: 20, words: 200, redirects: 10 } as const;

/** Variables a path, header or body may use; all derive from the scanned URL. */
export const TEMPLATE_VARIABLES = ['BaseURL', 'RootURL', 'Hostname', 'Host', 'Port', 'Scheme', 'Path'] as const;

export interface Matcher {
  type: 'word' | 'regex' | 'binary' | 'status' | 'size' | 'dsl';
  name?: string;
  part: string;
  condition: 'and' | 'or';
  negative: boolean;
  caseInsensitive: boolean;
  words: string[];
  regexes: RegExp[];
  binary: Buffer[];
  status: number[];
  size: number[];
  dsl: DslNode[];
}

export interface Extractor {
  type: 'regex' | 'kval';
  name?: string;
  part: string;
  group: number;
  internal: boolean;
  regexes: RegExp[];
  /** kval keys, normalised to lower case with `_` for `-`. */
  keys: string[];
}

export interface RequestBlock {
  method: string;
  paths: string[];
  headers: Record<string, string>;
  body?: string;
  maxRedirects: number;
  stopAtFirstMatch: boolean;
  matchersCondition: 'and' | 'or';
  matchers: Matcher[];
  extractors: Extractor[];
}

export interface Template {
  id: string;
  info: {
    name: string;
    authors: string[];
    severity: Severity;
    description?: string;
    remediation?: string;
    references: string[];
    tags: string[];
    cve: string[];
    cwe: string[];
    cvssMetrics?: string;
    cvssScore?: number;
  };
  requests: RequestBlock[];
}

export interface TemplateError {
  path: string;
  message: string;
}

export type TemplateValidation = { ok: true; template: Template } | { ok: false; errors: TemplateError[] };

const TEMPLATE_ID_RE = /^[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*$/;
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;

const list = z.union([z.string(), z.array(z.string())]).transform((v) => (typeof v === 'string' ? v.split(',') : v).map((x) => x.trim()).filter(Boolean));
const bool = z.boolean({ error: 'must be true or false' });
const condition = z.enum(['and', 'or'], { error: 'must be "and" or "or"' });
const strings = (max: number) => z.array(z.string(), { error: 'must be a list of strings' }).min(1, 'must list at least one value').max(max, `at most ${max} values`);
const ints = z.array(z.int().min(0).max(1_000_000_000), { error: 'must be a list of whole numbers' }).min(1, 'must list at least one value').max(100);
const matcherName = z.string().trim().max(100).regex(NAME_RE, 'letters, digits, dot, dash, underscore and colon only');

const matcherSchema = z
  .object({
    type: z.enum(['word', 'regex', 'binary', 'status', 'size', 'dsl'], { error: 'must be word, regex, binary, status, size or dsl (xpath matchers are not supported)' }),
    name: matcherName.optional(),
    part: z.string().trim().min(1).max(100).optional(),
    condition: condition.optional(),
    negative: bool.optional(),
    'case-insensitive': bool.optional(),
    words: strings(TEMPLATE_LIMITS.words).optional(),
    regex: strings(50).optional(),
    binary: strings(50).optional(),
    status: ints.optional(),
    size: ints.optional(),
    dsl: strings(50).optional(),
  })
  .strict();

const extractorSchema = z
  .object({
    type: z.enum(['regex', 'kval'], { error: 'must be regex or kval (json, xpath and dsl extractors are not supported)' }),
    name: matcherName.optional(),
    part: z.string().trim().min(1).max(100).optional(),
    regex: strings(50).optional(),
    group: z.int().min(0).max(99).optional(),
    kval: strings(50).optional(),
    internal: bool.optional(),
  })
  .strict();

const blockSchema = z
  .object({
    method: z
      .string()
      .trim()
      .toUpperCase()
      .pipe(z.enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], { error: 'must be GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS' }))
      .optional(),
    path: z.array(z.string().max(2_000), { error: 'must be a list of URLs such as "{{BaseURL}}/.git/config"' }).min(1, 'must list at least one path').max(TEMPLATE_LIMITS.paths, `at most ${TEMPLATE_LIMITS.paths} paths per request`),
    headers: z.record(z.string().max(200), z.string().max(8_192), { error: 'must map header names to strings' }).optional(),
    body: z.string().max(32_768).optional(),
    redirects: bool.optional(),
    'host-redirects': bool.optional(),
    'max-redirects': z.int().min(0).max(TEMPLATE_LIMITS.redirects, `at most ${TEMPLATE_LIMITS.redirects}`).optional(),
    'stop-at-first-match': bool.optional(),
    'matchers-condition': condition.optional(),
    matchers: z.array(matcherSchema).max(TEMPLATE_LIMITS.matchers, `at most ${TEMPLATE_LIMITS.matchers} matchers per request`).optional(),
    extractors: z.array(extractorSchema).max(TEMPLATE_LIMITS.extractors, `at most ${TEMPLATE_LIMITS.extractors} extractors per request`).optional(),
  })
  .strict();

/** `info`: unknown keys (metadata, impact, ...) are allowed and ignored. */
const infoSchema = z.looseObject(
  {
    name: z.string({ error: 'the template needs info.name' }).trim().min(1, 'the name must not be empty').max(300),
    author: list.optional(),
    severity: z
      .string({ error: 'the template needs info.severity: info, low, medium, high or critical' })
      .trim()
      .toLowerCase()
      .pipe(z.enum(['info', 'low', 'medium', 'high', 'critical', 'unknown'], { error: 'must be info, low, medium, high, critical or unknown' }))
      .transform((s): Severity => (s === 'unknown' ? 'info' : s)),
    description: z.string().max(10_000).optional(),
    remediation: z.string().max(5_000).optional(),
    reference: list.optional(),
    tags: list.optional(),
    classification: z
      .looseObject({
        'cve-id': list.optional(),
        'cwe-id': list.optional(),
        'cvss-metrics': z.string().max(200).optional(),
        'cvss-score': z.union([z.number(), z.string()]).optional(),
      })
      .optional(),
  },
  { error: 'the template needs an info block with name and severity' },
);

const templateSchema = z
  .object({
    id: z.string({ error: 'the template needs an id' }).trim().min(1).max(100, 'at most 100 characters').regex(TEMPLATE_ID_RE, 'letters and digits separated by single dashes, underscores or dots, e.g. exposed-git-config'),
    info: infoSchema,
    http: z.array(blockSchema).min(1, 'must hold at least one request').max(TEMPLATE_LIMITS.blocks, `at most ${TEMPLATE_LIMITS.blocks} requests per template`).optional(),
    requests: z.array(blockSchema).min(1).max(TEMPLATE_LIMITS.blocks, `at most ${TEMPLATE_LIMITS.blocks} requests per template`).optional(),
  })
  .strict();

type RawTemplate = z.output<typeof templateSchema>;
type RawBlock = z.output<typeof blockSchema>;
type RawMatcher = z.output<typeof matcherSchema>;

/** Keys of nuclei templates outside the subset, with what to say about them. */
const UNSUPPORTED_KEYS: Record<string, string> = {
  raw: 'raw requests are not supported; use method, path, headers and body',
  payloads: 'payloads (fuzzing) are not supported',
  attack: 'payloads (fuzzing) are not supported',
  fuzzing: 'fuzzing rules are not supported',
  race: 'race requests are not supported',
  'race_count': 'race requests are not supported',
  pipeline: 'HTTP pipelining is not supported',
  unsafe: 'unsafe (raw socket) requests are not supported',
  'req-condition': 'req-condition (matching across requests) is not supported',
  'cookie-reuse': 'cookie-reuse is not supported',
  dns: 'only HTTP templates are supported',
  tcp: 'only HTTP templates are supported',
  network: 'only HTTP templates are supported',
  ssl: 'only HTTP templates are supported',
  file: 'only HTTP templates are supported',
  headless: 'only HTTP templates are supported',
  code: 'only HTTP templates are supported',
  javascript: 'only HTTP templates are supported',
  websocket: 'only HTTP templates are supported',
  whois: 'only HTTP templates are supported',
  workflows: 'workflows are not supported',
  flow: 'flow is not supported',
  variables: 'template variables are not supported',
};

const PARTS = new Set(['body', 'header', 'all', 'response']);

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out || '(template)';
}

/** Parses and checks a template; never throws. */
export function validateTemplate(text: string): TemplateValidation {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > TEMPLATE_LIMITS.bytes) return fail('(template)', `the template is ${bytes} bytes; at most ${TEMPLATE_LIMITS.bytes} are allowed`);
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    return fail(e.linePos ? `line ${e.linePos[0].line}` : '(template)', `not valid YAML: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`);
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 50 });
  } catch (e) {
    return fail('(template)', `not valid YAML: ${(e as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail('(template)', 'a template is a YAML mapping with id, info and http');
  const errors = unsupportedKeys(raw as Record<string, unknown>);
  if (errors.length) return { ok: false, errors };
  const parsed = templateSchema.safeParse(raw);
  if (!parsed.success) {
    return { ok: false, errors: parsed.error.issues.slice(0, 50).map((i) => ({ path: formatPath(i.path), message: i.code === 'unrecognized_keys' ? `unknown field${i.keys.length > 1 ? 's' : ''} ${i.keys.join(', ')}` : i.message })) };
  }
  return build(parsed.data);
}

function fail(path: string, message: string): TemplateValidation {
  return { ok: false, errors: [{ path, message }] };
}

function unsupportedKeys(raw: Record<string, unknown>): TemplateError[] {
  const errors: TemplateError[] = [];
  for (const k of Object.keys(raw)) if (UNSUPPORTED_KEYS[k]) errors.push({ path: k, message: UNSUPPORTED_KEYS[k] });
  for (const key of ['http', 'requests']) {
    const blocks = raw[key];
    if (!Array.isArray(blocks)) continue;
    blocks.forEach((b, i) => {
      if (typeof b !== 'object' || b === null) return;
      for (const k of Object.keys(b)) if (UNSUPPORTED_KEYS[k]) errors.push({ path: `${key}[${i}].${k}`, message: UNSUPPORTED_KEYS[k] });
    });
  }
  return errors;
}

function build(t: RawTemplate): TemplateValidation {
  const errors: TemplateError[] = [];
  const err = (path: string, message: string) => errors.push({ path, message });
  if (t.http && t.requests) err('requests', 'give either http or requests (the older name), not both');
  const key = t.http ? 'http' : 'requests';
  const blocks = t.http ?? t.requests;
  if (!blocks) return fail('http', 'the template needs an http list of requests');
  const cls = t.info.classification ?? {};
  const score = cls['cvss-score'] === undefined ? undefined : Number(cls['cvss-score']);
  if (score !== undefined && !(score >= 0 && score <= 10)) err('info.classification.cvss-score', 'must be a number from 0 to 10');
  const requests = blocks.map((b, i) => buildBlock(b, `${key}[${i}]`, err));
  if (errors.length) return { ok: false, errors };
  return {
    ok: true,
    template: {
      id: t.id,
      info: {
        name: t.info.name,
        authors: t.info.author ?? [],
        severity: t.info.severity,
        ...(t.info.description?.trim() ? { description: t.info.description.trim() } : {}),
        ...(t.info.remediation?.trim() ? { remediation: t.info.remediation.trim() } : {}),
        references: t.info.reference ?? [],
        tags: [...new Set((t.info.tags ?? []).map((x) => x.toLowerCase()))],
        cve: (cls['cve-id'] ?? []).filter((c) => /^CVE-\d{4}-\d{4,9}$/i.test(c)),
        cwe: (cls['cwe-id'] ?? []).filter((c) => /^(?:CWE-)?\d{1,6}$/i.test(c)),
        ...(cls['cvss-metrics']?.trim() ? { cvssMetrics: cls['cvss-metrics'].trim() } : {}),
        ...(score !== undefined ? { cvssScore: score } : {}),
      },
      requests: requests.filter((r): r is RequestBlock => r !== null),
    },
  };
}

function checkVariables(text: string, path: string, err: (p: string, m: string) => void): void {
  for (const m of text.matchAll(/\{\{([^}]*)\}\}/g)) {
    const name = m[1]!.trim();
    if (!(TEMPLATE_VARIABLES as readonly string[]).includes(name)) err(path, `unknown variable {{${name.slice(0, 60)}}}; available: ${TEMPLATE_VARIABLES.map((v) => `{{${v}}}`).join(', ')}`);
  }
}

function buildBlock(b: RawBlock, at: string, err: (p: string, m: string) => void): RequestBlock | null {
  b.path.forEach((p, i) => {
    const m = /^\{\{(BaseURL|RootURL)\}\}(.*)$/.exec(p);
    if (!m) return err(`${at}.path[${i}]`, 'must start with {{BaseURL}} or {{RootURL}}: templates only request the scanned site');
    if (m[2] && !/^[/?#]/.test(m[2])) return err(`${at}.path[${i}]`, `what follows {{${m[1]}}} must start with /, ? or #`);
    checkVariables(p, `${at}.path[${i}]`, err);
  });
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(b.headers ?? {})) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k)) err(`${at}.headers.${k}`, 'not a valid header name');
    else if (k.toLowerCase() === 'host') err(`${at}.headers.${k}`, 'the Host header cannot be set: requests always go to the scanned site');
    else if (/[\r\n]/.test(v)) err(`${at}.headers.${k}`, 'header values cannot contain line breaks');
    checkVariables(v, `${at}.headers.${k}`, err);
    headers[k] = v;
  }
  if (b.body !== undefined) checkVariables(b.body, `${at}.body`, err);
  const matchers = (b.matchers ?? []).map((m, i) => buildMatcher(m, `${at}.matchers[${i}]`, err));
  const extractors = (b.extractors ?? []).map((x, i): Extractor => {
    const p = `${at}.extractors[${i}]`;
    const regexes: RegExp[] = [];
    if (x.type === 'regex') {
      if (!x.regex) err(p, 'a regex extractor needs a regex list');
      x.regex?.forEach((r, j) => {
        const c = compileTemplateRegex(r);
        if (c.ok) regexes.push(new RegExp(c.re.source, `${c.re.flags}g`));
        else err(`${p}.regex[${j}]`, c.message);
      });
    } else if (!x.kval) err(p, 'a kval extractor needs a kval list of header names');
    if (x.part !== undefined) checkPart(x.part, `${p}.part`, err);
    return { type: x.type, ...(x.name ? { name: x.name } : {}), part: normalisePart(x.part ?? (x.type === 'kval' ? 'header' : 'body')), group: x.group ?? 0, internal: x.internal ?? false, regexes, keys: (x.kval ?? []).map(kvalKey) };
  });
  if (!matchers.length && !extractors.length) err(at, 'a request needs matchers or extractors, or it can never report anything');
  return {
    method: b.method ?? 'GET',
    paths: b.path,
    headers,
    ...(b.body !== undefined ? { body: b.body } : {}),
    maxRedirects: b.redirects || b['host-redirects'] ? (b['max-redirects'] ?? TEMPLATE_LIMITS.redirects) : 0,
    stopAtFirstMatch: b['stop-at-first-match'] ?? false,
    matchersCondition: b['matchers-condition'] ?? 'or',
    matchers,
    extractors,
  };
}

/** kval keys as nuclei compares them: lower case, `-` as `_`. */
export const kvalKey = (k: string) => k.trim().toLowerCase().replace(/-/g, '_');

const normalisePart = (p: string) => {
  const l = p.trim().toLowerCase();
  return l === 'response' ? 'all' : l === 'headers' ? 'header' : PARTS.has(l) ? l : kvalKey(l);
};

function checkPart(part: string, at: string, err: (p: string, m: string) => void): void {
  const l = part.trim().toLowerCase();
  if (!PARTS.has(l) && l !== 'headers' && !/^[a-z0-9_-]+$/.test(l)) err(at, 'must be body, header, all, response or a response header name such as content_type');
}

function buildMatcher(m: RawMatcher, at: string, err: (p: string, m: string) => void): Matcher {
  const field = { word: 'words', regex: 'regex', binary: 'binary', status: 'status', size: 'size', dsl: 'dsl' }[m.type] as keyof RawMatcher;
  if (m[field] === undefined) err(at, `a ${m.type} matcher needs a ${field} list`);
  for (const other of ['words', 'regex', 'binary', 'status', 'size', 'dsl'] as const) {
    if (other !== field && m[other] !== undefined) err(`${at}.${other}`, `a ${m.type} matcher does not use ${other}`);
  }
  if (m.part !== undefined) checkPart(m.part, `${at}.part`, err);
  if ((m.type === 'status' || m.type === 'size') && m.condition === 'and' && (m[field] as number[] | undefined)?.length !== 1) {
    err(`${at}.condition`, `a response has one ${m.type === 'status' ? 'status code' : 'size'}: condition and cannot hold for several values`);
  }
  const regexes: RegExp[] = [];
  m.regex?.forEach((r, i) => {
    const c = compileTemplateRegex(r);
    if (c.ok) regexes.push(c.re);
    else err(`${at}.regex[${i}]`, c.message);
  });
  const binary: Buffer[] = [];
  m.binary?.forEach((h, i) => {
    if (!/^(?:[0-9a-fA-F]{2})+$/.test(h)) err(`${at}.binary[${i}]`, 'must be hex bytes, e.g. 504b0304');
    else binary.push(Buffer.from(h, 'hex'));
  });
  const dsl: DslNode[] = [];
  m.dsl?.forEach((d, i) => {
    try {
      dsl.push(parseDsl(d));
    } catch (e) {
      if (e instanceof DslError) err(`${at}.dsl[${i}]`, e.message);
      else throw e;
    }
  });
  const caseInsensitive = m['case-insensitive'] ?? false;
  return {
    type: m.type,
    ...(m.name ? { name: m.name } : {}),
    part: normalisePart(m.part ?? 'body'),
    condition: m.condition ?? 'or',
    negative: m.negative ?? false,
    caseInsensitive,
    words: caseInsensitive ? (m.words ?? []).map((w) => w.toLowerCase()) : (m.words ?? []),
    regexes,
    binary,
    status: m.status ?? [],
    size: m.size ?? [],
    dsl,
  };
}
