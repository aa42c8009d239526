// The template format: nuclei's HTTP templates (docs/scanners.md lists what runs). Tenants upload
// their own, so everything is checked before a template runs: zod for the shape (schema.ts), then
// the requests, placeholders, regexes (RE2-compatible and linear-time, regex.ts) and DSL
// expressions (dsl.ts) of each block (build-http.ts). Errors name the exact place, e.g.
// `http[0].matchers[1].regex[0]: lookahead (?=…) is not supported`.
import { parseDocument } from 'yaml';
import type { Severity } from '../../../findings/index.ts';
import { buildBlock, NO_OOB, type BuildContext, type OobSupport } from './build-http.ts';
import { DSL_VARIABLES, type DslNode } from './dsl.ts';
import type { JsonPath } from './json-path.ts';
import type { XPathQuery } from './xpath.ts';
import { compileText, type CompiledText } from './render.ts';
import { buildNetworkBlock, type NetworkBlock } from './network.ts';
import {
  networkBlockSchema,
  sslBlockSchema,
  TEMPLATE_LIMITS,
  templateSchema,
  UNSUPPORTED_KEYS,
  type RawTemplate,
} from './schema.ts';
import { buildSslBlock, type SslBlock } from './ssl.ts';
import { flowCalls, FlowError, parseFlow, type FlowNode } from './flow.ts';
import { z } from 'zod';
import { TEMPLATE_VARIABLES } from './variables.ts';

const fullSchema = templateSchema.extend({
  network: z
    .array(networkBlockSchema)
    .min(1)
    .max(TEMPLATE_LIMITS.blocks, `at most ${TEMPLATE_LIMITS.blocks} network requests per template`)
    .optional(),
  tcp: z.array(networkBlockSchema).min(1).max(TEMPLATE_LIMITS.blocks).optional(),
  ssl: z
    .array(sslBlockSchema)
    .min(1)
    .max(TEMPLATE_LIMITS.blocks, `at most ${TEMPLATE_LIMITS.blocks} ssl requests per template`)
    .optional(),
});

export { TEMPLATE_LIMITS } from './schema.ts';

export { TEMPLATE_VARIABLES } from './variables.ts';

export interface Matcher {
  type: 'word' | 'regex' | 'binary' | 'status' | 'size' | 'dsl' | 'xpath';
  name?: string;
  /** Decides, is not reported (nuclei: a match of only internal matchers prints nothing). */
  internal: boolean;
  part: string;
  condition: 'and' | 'or';
  negative: boolean;
  caseInsensitive: boolean;
  matchAll: boolean;
  words: string[];
  /** Words with placeholders, rendered per answer (null for plain words). */
  wordTexts: (CompiledText | null)[];
  regexes: RegExp[];
  binary: Buffer[];
  status: number[];
  size: number[];
  dsl: DslNode[];
  xpath: XPathQuery[];
}

export interface Extractor {
  type: 'regex' | 'kval' | 'json' | 'dsl' | 'xpath';
  name?: string;
  part: string;
  group: number;
  internal: boolean;
  caseInsensitive: boolean;
  regexes: RegExp[];
  /** kval keys, normalised to lower case with `_` for `-`. */
  keys: string[];
  json: JsonPath[];
  dsl: DslNode[];
  xpath: XPathQuery[];
  /** xpath: the attribute to take from each selected element instead of its text. */
  attribute?: string;
}

export interface RequestBlock {
  /** The block's id: its answer's values are also named `<id>_<name>` for later blocks. */
  id?: string;
  method: string;
  /** The paths or raw requests as written (for docs and errors). */
  paths: string[];
  /** The same, compiled: a URL per path, or a whole HTTP request per raw entry. */
  texts: CompiledText[];
  raw: boolean;
  headers: Record<string, string>;
  headerTexts: [string, CompiledText][];
  body?: CompiledText;
  payloads: [string, string[]][];
  /** The payload files the block reads (paths as the template names them). */
  payloadFiles: string[];
  attack: 'batteringram' | 'pitchfork' | 'clusterbomb';
  maxRedirects: number;
  stopAtFirstMatch: boolean;
  /** Send the template's cookies (nuclei's default; `disable-cookie: true` turns it off). */
  cookies: boolean;
  /** Keep each answer's values as `<name>_<n>` for later matchers (nuclei's req-condition). */
  reqCondition: boolean;
  iterateAll: boolean;
  pathAutomerge: boolean;
  matchersCondition: 'and' | 'or';
  matchers: Matcher[];
  extractors: Extractor[];
  /** Operators read out-of-band values: an answer to a request with a callback URL waits for it. */
  oob: boolean;
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
  /** Template-level stop-at-first-match: no further request blocks after a result. */
  stopAtFirstMatch: boolean;
  /** Requests name their own URLs (nuclei's self-contained); they still only go to the scan's scope. */
  selfContained: boolean;
  /** Template variables in order (each may read the ones before it), and constants. */
  variables: [string, CompiledText | string[]][];
  constants: Record<string, string | string[]>;
  requests: RequestBlock[];
  /**
   * Names the template reads that nothing in it defines: values the scan gives (its `variables`,
   * nuclei's -var). A request needing one the scan lacks is not sent, as in nuclei.
   */
  inputs: string[];
  /** The template sends {{interactsh-url}}: its scan needs the server's callbacks. */
  oob: boolean;
  /** network (tcp) requests, run after the HTTP ones. */
  network: NetworkBlock[];
  /** ssl requests (one TLS handshake each), run after the network ones. */
  ssl: SslBlock[];
  /** Which blocks run and when (nuclei's flow); absent: every block, in order. */
  flow?: FlowNode;
}

export interface TemplateError {
  path: string;
  message: string;
}

export type TemplateValidation = { ok: true; template: Template } | { ok: false; errors: TemplateError[] };

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out || '(template)';
}

export interface ValidateOptions {
  /** Out-of-band callbacks the scan can receive; without, templates using them are refused. */
  oob?: OobSupport;
  /** Payload files uploaded with the template: path as the template names it → text. */
  payloadFiles?: Readonly<Record<string, string>>;
}

/** Parses and checks a template; never throws. */
export function validateTemplate(text: string, opts: ValidateOptions = {}): TemplateValidation {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > TEMPLATE_LIMITS.bytes)
    return fail('(template)', `the template is ${bytes} bytes; at most ${TEMPLATE_LIMITS.bytes} are allowed`);
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    return fail(
      e.linePos ? `line ${e.linePos[0].line}` : '(template)',
      `not valid YAML: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`,
    );
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 50 });
  } catch (e) {
    return fail('(template)', `not valid YAML: ${(e as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return fail('(template)', 'a template is a YAML mapping with id, info and http');
  const errors = unsupportedKeys(raw as Record<string, unknown>);
  if (errors.length) return { ok: false, errors };
  const parsed = fullSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      errors: parsed.error.issues.slice(0, 50).map((i) => ({
        path: formatPath(i.path),
        message:
          i.code === 'unrecognized_keys'
            ? `unknown field${i.keys.length > 1 ? 's' : ''} ${i.keys.join(', ')}`
            : i.message,
      })),
    };
  }
  return build(parsed.data, opts);
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
      for (const [k, v] of Object.entries(b))
        if (UNSUPPORTED_KEYS[k] && v !== false)
          errors.push({ path: `${key}[${i}].${k}`, message: UNSUPPORTED_KEYS[k] });
    });
  }
  return errors;
}

function build(t: RawTemplate & z.output<typeof fullSchema>, opts: ValidateOptions): TemplateValidation {
  const errors: TemplateError[] = [];
  const err = (path: string, message: string) => errors.push({ path, message });
  if (t.http && t.requests) err('requests', 'give either http or requests (the older name), not both');
  const key = t.http ? 'http' : 'requests';
  const blocks = t.http ?? t.requests ?? [];
  const netKey = t.network ? 'network' : 'tcp';
  const netBlocks = t.network ?? t.tcp ?? [];
  const sslBlocks = t.ssl ?? [];
  if (!blocks.length && !netBlocks.length && !sslBlocks.length)
    return fail('http', 'the template needs an http, network or ssl list of requests');
  const cls = t.info.classification ?? {
    'cve-id': [],
    'cwe-id': [],
    'cvss-metrics': undefined,
    'cvss-score': undefined,
  };
  const rawScore = cls['cvss-score'];
  const score = rawScore === undefined || rawScore === null || rawScore === '' ? undefined : Number(rawScore);
  if (score !== undefined && !(score >= 0 && score <= 10))
    err('info.classification.cvss-score', 'must be a number from 0 to 10');

  // Names any request may read: the URL's, constants, variables (in order), payloads, extracted values.
  const known = new Set<string>(TEMPLATE_VARIABLES);
  const constants: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(t.constants ?? {})) {
    constants[k] = v;
    known.add(k);
  }
  const variables: [string, CompiledText | string[]][] = [];
  const vars = Object.entries(t.variables ?? {});
  if (vars.length > TEMPLATE_LIMITS.variables) err('variables', `at most ${TEMPLATE_LIMITS.variables} variables`);
  for (const [k, v] of vars) {
    if (Array.isArray(v)) variables.push([k, v]);
    else {
      try {
        variables.push([k, compileText(v)]);
      } catch (e) {
        err(`variables.${k}`, (e as Error).message);
      }
    }
    known.add(k);
  }
  const inputs = new Set<string>();
  const oobUse = { url: false, protocols: new Set<string>() };
  const ctx: BuildContext = {
    known,
    inputs,
    oobUse,
    ...(opts.oob ? { oob: opts.oob } : {}),
    ...(opts.payloadFiles ? { payloadFiles: new Map(Object.entries(opts.payloadFiles)) } : {}),
    extracted: new Set(),
    blockIds: new Set(blocks.flatMap((b) => (b.id ? [b.id] : []))),
    selfContained: t['self-contained'] ?? false,
    err,
  };
  for (const b of blocks) for (const x of b.extractors ?? []) if (x.name) ctx.extracted.add(x.name);
  for (const b of blocks) for (const p of Object.keys(b.payloads ?? {})) known.add(p);
  const requests = blocks.map((b, i) => buildBlock(b, `${key}[${i}]`, ctx));
  const network = netBlocks.map((b, i) => buildNetworkBlock(b, `${netKey}[${i}]`, ctx));
  const ssl = sslBlocks.map((b, i) => buildSslBlock(b, `ssl[${i}]`, ctx));
  let flow: FlowNode | undefined;
  if (t.flow !== undefined) {
    try {
      flow = parseFlow(t.flow);
      const count = { http: blocks.length, network: netBlocks.length, ssl: sslBlocks.length };
      const ids = {
        http: blocks.map((b) => b.id),
        network: netBlocks.map((b) => b.id),
        ssl: sslBlocks.map((b) => b.id),
      };
      for (const c of flowCalls(flow)) {
        if (
          c.block === undefined
            ? count[c.protocol] === 0
            : typeof c.block === 'number'
              ? c.block < 1 || c.block > count[c.protocol]
              : !ids[c.protocol].includes(c.block)
        )
          err(
            'flow',
            `${c.protocol}(${c.block === undefined ? '' : JSON.stringify(c.block)}) names no ${c.protocol} request of this template`,
          );
      }
    } catch (e) {
      if (!(e instanceof FlowError)) throw e;
      err('flow', e.message);
    }
  }
  for (const [k, v] of variables) if (!Array.isArray(v)) checkText(ctx, v, `variables.${k}`);
  // A check waiting only for callbacks this server cannot receive would never match.
  const can = opts.oob ? (['http', 'dns'] as const).filter((p) => opts.oob![p]) : [];
  if (opts.oob && oobUse.protocols.size && ![...oobUse.protocols].some((p) => (can as readonly string[]).includes(p)))
    err(
      key,
      `the out-of-band check waits for ${[...oobUse.protocols].join(' or ')} callbacks; this server receives ${can.join(' and ') || 'none'} callbacks only`,
    );
  if (errors.length) return { ok: false, errors: errors.slice(0, 50) };
  return {
    ok: true,
    template: {
      id: t.id,
      info: {
        name: t.info.name,
        authors: t.info.author,
        severity: t.info.severity as Severity,
        ...(t.info.description?.trim() ? { description: t.info.description.trim() } : {}),
        ...(t.info.remediation?.trim() ? { remediation: t.info.remediation.trim() } : {}),
        references: t.info.reference,
        tags: [...new Set(t.info.tags.map((x) => x.toLowerCase()))],
        cve: cls['cve-id'].filter((c) => /^CVE-\d{4}-\d{4,9}$/i.test(c)),
        cwe: cls['cwe-id'].filter((c) => /^(?:CWE-)?\d{1,6}$/i.test(c)),
        ...(cls['cvss-metrics']?.trim() ? { cvssMetrics: cls['cvss-metrics'].trim() } : {}),
        ...(score !== undefined ? { cvssScore: score } : {}),
      },
      stopAtFirstMatch: t['stop-at-first-match'] ?? false,
      selfContained: t['self-contained'] ?? false,
      variables,
      constants,
      requests: requests.filter((r): r is RequestBlock => r !== null),
      inputs: [...inputs].sort(),
      oob: oobUse.url,
      network: network.filter((r): r is NetworkBlock => r !== null),
      ssl: ssl.filter((r): r is SslBlock => r !== null),
      ...(flow ? { flow } : {}),
    },
  };
}

/** Every placeholder of a request text must name a value the template provides. */
export function checkText(ctx: BuildContext, c: CompiledText, at: string): void {
  for (const name of c.names) {
    const why = unknownName(name, ctx);
    if (why) ctx.err(at, why);
  }
}

function unknownName(name: string, ctx: BuildContext): string | null {
  if (ctx.known.has(name) || ctx.extracted.has(name) || /^randstr(?:_\w+)?$/.test(name)) return null;
  if (name === 'interactsh-url') {
    if (!ctx.oob) return `{{${name}}}: ${NO_OOB}`;
    if (ctx.oobUse) ctx.oobUse.url = true;
    return null;
  }
  if (name.startsWith('interactsh'))
    return `{{${name}}}: unknown out-of-band value; {{interactsh-url}} is the callback address`;
  const indexed = /^(.+)_(\d+)$/.exec(name);
  if (indexed && (ctx.extracted.has(indexed[1]!) || RESPONSE_NAMES.has(indexed[1]!))) return null;
  for (const id of ctx.blockIds ?? []) if (name.startsWith(`${id}_`)) return null;
  // Anything else is a value the scan supplies (nuclei's -var), as the scan's variables.
  if (INPUT_NAME.test(name) && !RESPONSE_NAMES.has(name)) {
    ctx.inputs?.add(name);
    return null;
  }
  return `unknown variable {{${name.slice(0, 60)}}}: it has no value; requests can use ${TEMPLATE_VARIABLES.map((v) => `{{${v}}}`).join(', ')}, template variables, constants, payloads, extracted values and the scan's variables`;
}

/** What a scan variable may be called (scans-schemas has the same rule). */
const INPUT_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

export const RESPONSE_NAMES = new Set<string>(DSL_VARIABLES);
