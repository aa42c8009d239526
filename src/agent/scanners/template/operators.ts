// Matchers and extractors on one answer, in nuclei's order: extractors first (their values, internal
// or not, become variables the block's matchers can read), then matchers. The result says whether
// the block matched, which named matchers fired (each is its own result with `or`), what was
// extracted for the report (per named extractor, and in all), and the values of internal
// extractors that later requests of the template use.
import { evaluateDsl, evaluateValue, toStr, type DslValue } from './dsl.ts';
import { extractJson } from './json-path.ts';
import type { Extractor, Matcher, RequestBlock } from './model.ts';
import { render } from './render.ts';
import { nodeValue, selectNodes, type XPathQuery } from './xpath.ts';
import { headerKey, type ResponseData } from './response.ts';

/** What operators read from an answer: an HTTP response, or a network exchange. */
export type AnswerView = Pick<ResponseData, 'part' | 'lowerPart' | 'bytes' | 'get'>;

const MAX_EXTRACTED = 50;
const MAX_VALUE = 1_024;

/** Variables beyond the answer: template variables, earlier requests' values, payloads. */
export type Scope = (name: string) => DslValue | undefined;

export interface OperatorResult {
  /** A matcher fired (all of them with `matchers-condition: and`). */
  matched: boolean;
  /** Named matchers that fired in an `or` block. */
  names: string[];
  /** Values of named, non-internal extractors by name. */
  extracts: Map<string, string[]>;
  /** Every non-internal extracted value, once. */
  output: string[];
  /** Values of internal extractors by name, for later requests. */
  dynamic: Map<string, string[]>;
}

/** The lookup a DSL expression uses: extracted values, then the answer, then the scope. */
export function lookup(view: AnswerView, scope: Scope, extracted?: Map<string, DslValue>) {
  return (name: string): DslValue | undefined => extracted?.get(name) ?? view.get(name) ?? scope(name);
}

function matchOne(m: Matcher, view: AnswerView, get: ReturnType<typeof lookup>): boolean {
  const all = m.condition === 'and';
  let hit: boolean;
  if (m.type === 'dsl') {
    hit = all ? m.dsl.every((d) => evaluateDsl(d, get)) : m.dsl.some((d) => evaluateDsl(d, get));
    return m.negative ? !hit : hit;
  }
  // A part the answer lacks (a header it did not send) fails the matcher, negative or not.
  const text = m.type === 'word' && m.caseInsensitive ? view.lowerPart(m.part) : view.part(m.part);
  if (text === undefined) return false;
  switch (m.type) {
    case 'status': {
      const code = view.get('status_code');
      hit = typeof code === 'number' && m.status.includes(code);
      break;
    }
    case 'size':
      hit = m.size.includes(view.bytes(m.part)!.length);
      break;
    case 'word': {
      // Words with placeholders are rendered with this answer's values (nuclei renders each word).
      const word = (i: number) => {
        const c = m.wordTexts[i];
        if (!c) return m.words[i]!;
        const w = render(c, get);
        return w === undefined ? m.words[i]! : m.caseInsensitive ? w.toLowerCase() : w;
      };
      const idx = m.words.map((_, i) => i);
      hit = all || m.matchAll ? idx.every((i) => text.includes(word(i))) : idx.some((i) => text.includes(word(i)));
      break;
    }
    case 'regex':
      hit = all ? m.regexes.every((r) => r.test(text)) : m.regexes.some((r) => r.test(text));
      break;
    case 'binary': {
      const bytes = view.bytes(m.part)!;
      hit = all ? m.binary.every((b) => bytes.includes(b)) : m.binary.some((b) => bytes.includes(b));
      break;
    }
    case 'xpath': {
      // An expression matches when it selects at least one node.
      const selects = (q: XPathQuery) => selectNodes(q, text).length > 0;
      hit = all ? m.xpath.every(selects) : m.xpath.some(selects);
      break;
    }
  }
  return m.negative ? !hit : hit;
}

function extract(x: Extractor, view: AnswerView, get: ReturnType<typeof lookup>): string[] {
  const out = new Set<string>();
  const add = (v: string | undefined) => {
    if (v && out.size < MAX_EXTRACTED) out.add(v.slice(0, MAX_VALUE));
  };
  if (x.type === 'kval') {
    for (const k of x.keys) {
      const v = view.get(k);
      if (v !== undefined) add(x.caseInsensitive ? toStr(v).toLowerCase() : toStr(v));
    }
    return [...out];
  }
  if (x.type === 'dsl') {
    for (const d of x.dsl) {
      const v = evaluateValue(d, get);
      if (v !== undefined) add(toStr(v));
    }
    return [...out];
  }
  const text = view.part(x.part);
  if (text === undefined) return [];
  if (x.type === 'json') {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      return [];
    }
    for (const q of x.json) for (const v of extractJson(q, doc)) add(v);
    return [...out];
  }
  if (x.type === 'xpath') {
    for (const q of x.xpath) for (const node of selectNodes(q, text)) add(nodeValue(node, x.attribute));
    return [...out];
  }
  for (const re of x.regexes) {
    re.lastIndex = 0;
    for (const m of text.matchAll(re)) {
      add(m[x.group]);
      if (out.size >= MAX_EXTRACTED) break;
    }
  }
  return [...out];
}

/** Runs a block's extractors and matchers on one answer. */
export function runOperators(
  block: Pick<RequestBlock, 'matchers' | 'extractors' | 'matchersCondition'>,
  view: AnswerView,
  scope: Scope,
): OperatorResult {
  const extracted = new Map<string, DslValue | DslValue[]>();
  const r: OperatorResult = { matched: false, names: [], extracts: new Map(), output: [], dynamic: new Map() };
  const seen = new Set<string>();
  const get = lookup(view, scope, extracted);
  for (const x of block.extractors) {
    const values = extract(x, view, get);
    if (!values.length) continue;
    if (x.name) extracted.set(x.name, values.length === 1 ? values[0]! : values);
    if (x.internal) {
      if (x.name) r.dynamic.set(x.name, [...(r.dynamic.get(x.name) ?? []), ...values]);
      continue;
    }
    if (x.name) r.extracts.set(x.name, values);
    for (const v of values) {
      if (seen.has(v)) continue;
      seen.add(v);
      r.output.push(v);
    }
  }
  const and = block.matchersCondition === 'and';
  for (const m of block.matchers) {
    if (matchOne(m, view, get)) {
      r.matched = true;
      if (!and && m.name && !r.names.includes(m.name)) r.names.push(m.name);
    } else if (and) {
      r.matched = false;
      r.names = [];
      break;
    }
  }
  return r;
}

export interface ResultEntry {
  matcher?: string;
  extractor?: string;
  extracted: string[];
}

/**
 * What nuclei reports for one answer: nothing when matchers exist and none matched (or only
 * internal values were extracted); else one result per fired named matcher, or per named
 * extractor that extracted, or a single one. A match of matchers that are all `internal` is not
 * reported either: such a block only decides what a flow runs next.
 */
export function resultsOf(block: Pick<RequestBlock, 'matchers'>, r: OperatorResult): ResultEntry[] {
  if (r.dynamic.size && !r.matched) return [];
  if (block.matchers.length && !r.matched) return [];
  if (block.matchers.length && block.matchers.every((m) => m.internal)) return [];
  if (!block.matchers.length && !r.output.length) return [];
  if (r.names.length) return r.names.map((matcher) => ({ matcher, extracted: r.output }));
  if (r.extracts.size) return [...r.extracts].map(([extractor, values]) => ({ extractor, extracted: values }));
  return [{ extracted: r.output }];
}

export { headerKey };
