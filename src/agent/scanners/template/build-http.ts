// One `http` block of a template, checked and compiled: its requests (paths under the scanned
// origin, or raw HTTP requests whose target is a path), placeholders, payloads and attack type,
// and its matchers and extractors. Problems go to `err` with their place in the template.
import { DslError, dslVariables, parseDsl, type DslNode } from './dsl.ts';
import { parseJsonPath, type JsonPath } from './json-path.ts';
import { checkText, RESPONSE_NAMES, type Extractor, type Matcher, type RequestBlock } from './model.ts';
import { compileTemplateRegex } from './regex.ts';
import { compileText, isPlain, type CompiledText } from './render.ts';
import { headerKey } from './response.ts';
import { TEMPLATE_LIMITS, type RawBlock, type RawExtractor, type RawMatcher } from './schema.ts';
import { compileXPath, type XPathQuery } from './xpath.ts';

export interface BuildContext {
  /** Names any request may read (URL variables, variables, constants, payloads). */
  known: Set<string>;
  /** Names left for the scan to supply (its variables); absent where none may be. */
  inputs?: Set<string>;
  /** Names of the template's extractors. */
  extracted: Set<string>;
  /** Ids of the template's blocks (their values are read as `<id>_<name>`). */
  blockIds?: Set<string>;
  selfContained: boolean;
  err: (path: string, message: string) => void;
  /** Which out-of-band callbacks the scan can receive; absent: none, and such templates are refused. */
  oob?: OobSupport;
  /** What of out-of-band checks the template uses (collected while building). */
  oobUse?: { url: boolean; protocols: Set<string> };
  /** Payload files uploaded with the template, by the path the template names. */
  payloadFiles?: ReadonlyMap<string, string>;
}

/**
 * A payload file's values as nuclei reads them: one per line, line ends (LF or CRLF) removed,
 * empty lines skipped.
 */
export function payloadFileValues(text: string): string[] {
  return text.split(/\r?\n/).filter((l) => l !== '');
}

/** The callbacks a Rampart server receives for out-of-band checks (nuclei's interactsh). */
export interface OobSupport {
  http: boolean;
  dns: boolean;
}

export const NO_OOB =
  'out-of-band (interactsh) checks need a callback address the target can reach, and this server has none (OOB_CALLBACKS, PUBLIC_BASE_URL)';
const OOB_NAMES = new Set(['interactsh_protocol', 'interactsh_request', 'interactsh_response', 'interactsh_ip']);

/** Null when an interactsh name may be read here, else why not. */
function oobName(name: string, ctx: BuildContext): string | null {
  if (!ctx.oob) return `${name}: ${NO_OOB}`;
  if (!OOB_NAMES.has(name)) return `${name}: unknown out-of-band value; ${[...OOB_NAMES].join(', ')} are`;
  return null;
}

const PARTS = new Set(['body', 'header', 'all', 'response']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function compile(text: string, at: string, ctx: BuildContext): CompiledText | null {
  try {
    const c = compileText(text);
    checkText(ctx, c, at);
    return c;
  } catch (e) {
    if (e instanceof DslError) ctx.err(at, e.message);
    else throw e;
    return null;
  }
}

const normalisePart = (p: string) => {
  const l = p.trim().toLowerCase();
  return l === 'headers' ? 'header' : PARTS.has(l) ? l : headerKey(l);
};

function checkPart(part: string, at: string, ctx: BuildContext): void {
  const { err } = ctx;
  const l = part.trim().toLowerCase();
  const why = l.startsWith('interactsh') ? oobName(l, ctx) : null;
  if (why) err(at, why);
  else if (l.startsWith('interactsh')) return;
  else if (!PARTS.has(l) && l !== 'headers' && !/^[a-z0-9_-]+$/.test(l))
    err(at, 'must be body, header, all, response or a response header name such as content_type');
}

/** Why a DSL name cannot be read in a matcher, or null (other names are headers or cookies). */
function unsupportedName(name: string, ctx: BuildContext): string | null {
  if (name.startsWith('interactsh')) return oobName(name, ctx);
  if (name === 'template_id') return `${name}: this variable is not supported in DSL expressions`;
  return null;
}

function dslList(list: string[] | undefined, at: string, ctx: BuildContext): DslNode[] {
  const out: DslNode[] = [];
  list?.forEach((d, i) => {
    try {
      // A `{{name}}` inside an expression is the value itself (nuclei resolves such markers first).
      // The protocols an out-of-band check waits for: contains(interactsh_protocol, "dns").
      for (const p of d.matchAll(/interactsh_protocol\w*\s*,\s*['"](\w+)['"]/g))
        ctx.oobUse?.protocols.add(p[1]!.toLowerCase());
      const node = parseDsl(d.replace(/\{\{\s*([A-Za-z_][\w.]*)\s*\}\}/g, '$1'));
      for (const name of dslVariables(node)) {
        const why = unsupportedName(name, ctx);
        if (why) ctx.err(`${at}[${i}]`, why);
      }
      out.push(node);
    } catch (e) {
      if (e instanceof DslError) ctx.err(`${at}[${i}]`, e.message);
      else throw e;
    }
  });
  return out;
}

function regexList(list: string[] | undefined, at: string, err: BuildContext['err']): RegExp[] {
  const out: RegExp[] = [];
  list?.forEach((r, j) => {
    const c = compileTemplateRegex(r);
    if (c.ok) out.push(c.re);
    else err(`${at}[${j}]`, c.message);
  });
  return out;
}

/** The first line of a raw request: its method and target; checks what the target may be. */
function rawRequestLine(raw: string, at: string, ctx: BuildContext): void {
  const lines = raw.replace(/^\s+/, '').split('\n');
  let i = 0;
  for (; i < lines.length && lines[i]!.startsWith('@'); i++) {
    const a = (/^@([A-Za-z-]+)/.exec(lines[i]!)?.[1] ?? '').toLowerCase();
    // @timeout only lengthens nuclei's wait; the scan's own timeout applies. @Host and the like
    // would change where the request goes.
    if (a !== 'timeout') ctx.err(at, `the @${a} annotation is not supported`);
  }
  const parts = (lines[i] ?? '').trim().split(/\s+/);
  if (parts.length < 2 || !TOKEN.test(parts[0]!))
    return ctx.err(at, 'must start with a request line such as GET /path HTTP/1.1');
  const target = parts.length === 2 && parts[1]!.includes('HTTP') ? '' : parts[1]!;
  if (
    target === '' ||
    target.startsWith('/') ||
    target.startsWith('?') ||
    /^\{\{(?:BaseURL|RootURL)\}\}(?:[/?#]|$)/.test(target)
  )
    return;
  if (/^https?:\/\//i.test(target) || target.startsWith('{{')) {
    if (!ctx.selfContained && !/^\{\{/.test(target))
      ctx.err(
        at,
        "an absolute URL in the request line needs self-contained: true (and still only reaches the scan's scope)",
      );
    return;
  }
  ctx.err(at, 'the request target must be a path (/…), {{BaseURL}}… or, in self-contained templates, a URL');
}

export function buildBlock(b: RawBlock, at: string, ctx: BuildContext): RequestBlock | null {
  const { err } = ctx;
  if (!b.path && !b.raw) {
    err(at, 'a request needs path or raw');
    return null;
  }
  if (b.path && b.raw) err(at, 'give either path or raw, not both');
  const sources = b.raw ?? b.path ?? [];
  const texts: CompiledText[] = [];
  sources.forEach((p, i) => {
    const where = `${at}.${b.raw ? 'raw' : 'path'}[${i}]`;
    if (b.raw) rawRequestLine(p, where, ctx);
    else if (!ctx.selfContained) {
      const m = /^\{\{(BaseURL|RootURL)\}\}(.*)$/s.exec(p.trim());
      if (!m) return err(where, 'must start with {{BaseURL}} or {{RootURL}}: templates only request the scanned site');
      // `{{BaseURL}}{{path}}` (a payload) is fine: a value that would leave the scan's scope is
      // not sent (the run checks every URL it builds).
      if (m[2] && !/^(?:[/?#]|:\d+(?:[/?#]|$)|:?\{\{)/.test(m[2]))
        return err(where, `what follows {{${m[1]}}} must start with /, ? or #`);
    } else if (!/^(?:https?:\/\/|\{\{)/i.test(p.trim())) return err(where, 'must be a URL');
    const c = compile(b.raw ? p : p.trim(), where, ctx);
    if (c) texts.push(c);
  });
  const headers: Record<string, string> = {};
  const headerTexts: [string, CompiledText][] = [];
  for (const [k, v] of Object.entries(b.headers ?? {})) {
    const where = `${at}.headers.${k}`;
    if (!TOKEN.test(k)) err(where, 'not a valid header name');
    else if (k.toLowerCase() === 'host' && !/^\{\{(?:Hostname|Host)\}\}$/.test(v.trim()))
      err(where, 'the Host header can only be {{Hostname}} or {{Host}}: requests always go to the scanned site');
    else if (/[\r\n]/.test(v)) err(where, 'header values cannot contain line breaks');
    const c = compile(v, where, ctx);
    if (c) headerTexts.push([k, c]);
    headers[k] = v;
  }
  const body = b.body === undefined ? undefined : compile(b.body, `${at}.body`, ctx);
  const payloads: [string, string[]][] = [];
  const payloadFiles: string[] = [];
  for (const [name, values] of Object.entries(b.payloads ?? {})) {
    if (!Array.isArray(values)) {
      const file = ctx.payloadFiles?.get(values);
      if (file === undefined) {
        err(
          `${at}.payloads.${name}`,
          `the payload file "${values}" was not uploaded with the template; upload it with the template or list the values`,
        );
        continue;
      }
      const lines = payloadFileValues(file);
      if (lines.length > TEMPLATE_LIMITS.payloadValues)
        err(
          `${at}.payloads.${name}`,
          `the payload file "${values}" has ${lines.length} values; at most ${TEMPLATE_LIMITS.payloadValues} are allowed`,
        );
      else payloads.push([name, lines]);
      payloadFiles.push(values);
      continue;
    }
    payloads.push([name, values]);
  }
  const attack = b.attack ?? 'batteringram';
  if (attack === 'batteringram' && payloads.length > 1)
    err(`${at}.attack`, 'batteringram takes a single payload list; set attack: pitchfork or clusterbomb');
  const combos =
    payloads.length === 0
      ? 1
      : attack === 'clusterbomb'
        ? payloads.reduce((n, [, v]) => n * v.length, 1)
        : Math.min(...payloads.map(([, v]) => v.length));
  if (combos * sources.length > TEMPLATE_LIMITS.requests)
    err(
      `${at}.payloads`,
      `this request would be sent ${combos * sources.length} times; at most ${TEMPLATE_LIMITS.requests} are allowed`,
    );
  const { matchers, extractors } = buildOperators(b, at, ctx);
  if (!matchers.length && !extractors.length)
    err(at, 'a request needs matchers or extractors, or it can never report anything');
  const follow = b.redirects || b['host-redirects'];
  const readsOob = (n: string) => n.startsWith('interactsh');
  const oob = [...matchers, ...extractors].some(
    (o) => readsOob(o.part) || o.dsl.some((d) => [...dslVariables(d)].some(readsOob)),
  );
  return {
    oob,
    ...(b.id ? { id: b.id } : {}),
    method: b.method ?? 'GET',
    paths: sources,
    texts,
    raw: Boolean(b.raw),
    headers,
    headerTexts,
    ...(body ? { body } : {}),
    payloads,
    payloadFiles,
    attack,
    maxRedirects: follow ? Math.min(b['max-redirects'] ?? TEMPLATE_LIMITS.redirects, TEMPLATE_LIMITS.redirects) : 0,
    stopAtFirstMatch: b['stop-at-first-match'] ?? false,
    cookies: !b['disable-cookie'],
    reqCondition:
      b['req-condition'] ??
      matchers.some((m) =>
        m.dsl.some((d) =>
          [...dslVariables(d)].some((n) => /_\d+$/.test(n) && RESPONSE_NAMES.has(n.replace(/_\d+$/, ''))),
        ),
      ),
    iterateAll: b['iterate-all'] ?? false,
    pathAutomerge: !b['disable-path-automerge'],
    matchersCondition: b['matchers-condition'] ?? 'or',
    matchers,
    extractors,
  };
}

/** A block's matchers and extractors (HTTP and network blocks share them). */
export function buildOperators(
  b: { matchers?: RawMatcher[] | undefined; extractors?: RawExtractor[] | undefined },
  at: string,
  ctx: BuildContext,
): { matchers: Matcher[]; extractors: Extractor[] } {
  return {
    matchers: (b.matchers ?? []).map((m, i) => buildMatcher(m, `${at}.matchers[${i}]`, ctx)),
    extractors: (b.extractors ?? []).map((x, i) => buildExtractor(x, `${at}.extractors[${i}]`, ctx)),
  };
}

function buildMatcher(m: RawMatcher, at: string, ctx: BuildContext): Matcher {
  const { err } = ctx;
  const field = {
    word: 'words',
    regex: 'regex',
    binary: 'binary',
    status: 'status',
    size: 'size',
    dsl: 'dsl',
    xpath: 'xpath',
  }[m.type] as keyof RawMatcher;
  if (m[field] === undefined) err(at, `a ${m.type} matcher needs a ${field} list`);
  for (const other of ['words', 'regex', 'binary', 'status', 'size', 'dsl', 'xpath'] as const) {
    if (other !== field && m[other] !== undefined) err(`${at}.${other}`, `a ${m.type} matcher does not use ${other}`);
  }
  if (m.part !== undefined) checkPart(m.part, `${at}.part`, ctx);
  if (m.part?.trim().toLowerCase() === 'interactsh_protocol')
    for (const w of m.words ?? []) ctx.oobUse?.protocols.add(w.toLowerCase());
  const binary: Buffer[] = [];
  m.binary?.forEach((h, i) => {
    if (!/^(?:[0-9a-fA-F]{2})+$/.test(h)) err(`${at}.binary[${i}]`, 'must be hex bytes, e.g. 504b0304');
    else binary.push(Buffer.from(h, 'hex'));
  });
  const caseInsensitive = m['case-insensitive'] ?? false;
  let words = m.words ?? [];
  if (m.encoding === 'hex') {
    words = words.map((w, i) => {
      if (/^(?:[0-9a-fA-F]{2})+$/.test(w)) return Buffer.from(w, 'hex').toString('latin1');
      err(`${at}.words[${i}]`, 'must be hex bytes with encoding: hex');
      return w;
    });
  }
  if (caseInsensitive) words = words.map((w) => w.toLowerCase());
  const wordTexts = words.map((w) => {
    if (!w.includes('{{') && !w.includes('§')) return null;
    try {
      const c = compileText(w);
      return isPlain(c) ? null : c;
    } catch (e) {
      // nuclei matches a word whose placeholder does not evaluate as it is written.
      if (e instanceof DslError) return null;
      throw e;
    }
  });
  return {
    type: m.type,
    ...(m.name ? { name: m.name } : {}),
    part: normalisePart(m.part ?? 'body'),
    internal: m.internal ?? false,
    condition: m.condition ?? 'or',
    negative: m.negative ?? false,
    caseInsensitive,
    matchAll: m['match-all'] ?? false,
    words,
    wordTexts,
    regexes: regexList(m.regex, `${at}.regex`, err),
    binary,
    status: m.status ?? [],
    size: m.size ?? [],
    dsl: dslList(m.dsl, `${at}.dsl`, ctx),
    xpath: xpathList(m.xpath, `${at}.xpath`, ctx),
  };
}

function xpathList(list: string[] | undefined, at: string, ctx: BuildContext): XPathQuery[] {
  const out: XPathQuery[] = [];
  list?.forEach((q, i) => {
    try {
      out.push(compileXPath(q));
    } catch (e) {
      ctx.err(`${at}[${i}]`, (e as Error).message);
    }
  });
  return out;
}

function buildExtractor(x: RawExtractor, at: string, ctx: BuildContext): Extractor {
  const { err } = ctx;
  const need = x.type;
  if (!x[need]) err(at, `a ${x.type} extractor needs a ${need} list`);
  if (x.attribute !== undefined && x.type !== 'xpath')
    err(`${at}.attribute`, 'only an xpath extractor reads an attribute');
  if (x.part !== undefined) checkPart(x.part, `${at}.part`, ctx);
  const json: JsonPath[] = [];
  x.json?.forEach((q, i) => {
    try {
      json.push(parseJsonPath(q));
    } catch (e) {
      err(`${at}.json[${i}]`, (e as Error).message);
    }
  });
  return {
    type: x.type,
    ...(x.name ? { name: x.name } : {}),
    part: normalisePart(x.part ?? (x.type === 'kval' ? 'header' : 'body')),
    group: x.group ?? 0,
    internal: x.internal ?? false,
    caseInsensitive: x['case-insensitive'] ?? false,
    regexes: regexList(x.regex, `${at}.regex`, err).map((r) => new RegExp(r.source, `${r.flags}g`)),
    keys: (x.kval ?? []).map(headerKey),
    json,
    dsl: dslList(x.dsl, `${at}.dsl`, ctx),
    xpath: xpathList(x.xpath, `${at}.xpath`, ctx),
    ...(x.attribute ? { attribute: x.attribute } : {}),
  };
}
