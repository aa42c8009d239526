// `{{…}}` placeholders in paths, raw requests, headers, bodies, variables and matcher words, as
// nuclei renders them: `{{name}}` (and `§name§`) is a value (a URL variable, a template variable
// or constant, a payload, a value extracted by an earlier request), anything else is a DSL
// expression such as `{{md5(username)}}`. Texts are compiled once; rendering yields undefined
// when a value is missing, and nuclei then skips the request.
import { DslError, dslVariables, evaluateValue, parseDsl, toStr, type DslLookup, type DslNode } from './dsl.ts';

// `late`: an expression with markers inside it (`{{md5({{num}})}}`): nuclei puts the values in as
// text first, then evaluates; the source is parsed once per distinct text.
type Part =
  { k: 'text'; v: string } | { k: 'name'; v: string } | { k: 'expr'; node: DslNode } | { k: 'late'; src: string };
export interface CompiledText {
  parts: Part[];
  /** Names the text reads (placeholders and the variables of its expressions). */
  names: Set<string>;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const INNER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

/** `{{…}}` markers (nested ones kept inside their outer marker) and `§name§` markers, in order. */
function* markers(text: string): Generator<{ index: number; end: number; inner: string }> {
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf('{{', i);
    const sect = text.indexOf('§', i);
    if (sect >= 0 && (open < 0 || sect < open)) {
      const m = /^§([A-Za-z0-9_.-]+)§/.exec(text.slice(sect));
      if (m) {
        yield { index: sect, end: sect + m[0].length, inner: m[1]! };
        i = sect + m[0].length;
      } else i = sect + 1;
      continue;
    }
    if (open < 0) return;
    let depth = 1;
    let j = open + 2;
    while (j < text.length && depth > 0) {
      if (text.startsWith('{{', j)) {
        depth++;
        j += 2;
      } else if (text.startsWith('}}', j)) {
        depth--;
        j += 2;
      } else j++;
    }
    if (depth > 0) return;
    yield { index: open, end: j, inner: text.slice(open + 2, j - 2) };
    i = j;
  }
}

const late = new Map<string, DslNode | null>();
function lateNode(src: string): DslNode | null {
  let n = late.get(src);
  if (n !== undefined) return n;
  try {
    n = parseDsl(src);
  } catch {
    n = null;
  }
  if (late.size > 1_000) late.clear();
  late.set(src, n);
  return n;
}
const cache = new Map<string, CompiledText>();

/** Compiles a text; throws DslError naming the placeholder that does not parse. */
export function compileText(text: string): CompiledText {
  const hit = cache.get(text);
  if (hit) return hit;
  const parts: Part[] = [];
  const names = new Set<string>();
  let last = 0;
  for (const m of markers(text)) {
    if (m.index > last) parts.push({ k: 'text', v: text.slice(last, m.index) });
    last = m.end;
    const inner = m.inner.trim();
    if (NAME.test(inner)) {
      parts.push({ k: 'name', v: inner });
      names.add(inner);
      continue;
    }
    const nested = inner.includes('{{');
    let node: DslNode;
    try {
      node = parseDsl(nested ? inner.replace(INNER, (_, n: string) => n.trim()) : inner);
    } catch (e) {
      if (e instanceof DslError) throw new DslError(`{{${inner.slice(0, 80)}}}: ${e.message}`);
      throw e;
    }
    for (const n of dslVariables(node)) names.add(n);
    parts.push(nested ? { k: 'late', src: inner } : { k: 'expr', node });
  }
  if (last < text.length) parts.push({ k: 'text', v: text.slice(last) });
  const out = { parts, names };
  if (cache.size > 5_000) cache.clear();
  cache.set(text, out);
  return out;
}

/** True when the text has no placeholder at all (rendering can be skipped). */
export const isPlain = (c: CompiledText) => c.parts.every((p) => p.k === 'text');

export function render(c: CompiledText, get: DslLookup): string | undefined {
  let out = '';
  for (const p of c.parts) {
    if (p.k === 'text') out += p.v;
    else if (p.k === 'late') {
      let missing = false;
      const src = p.src.replace(INNER, (_, n: string) => {
        const v = get(n.trim());
        if (v === undefined) missing = true;
        return v === undefined ? '' : toStr(v);
      });
      const node = missing ? null : lateNode(src);
      const v = node ? evaluateValue(node, get) : undefined;
      if (v === undefined) return undefined;
      out += toStr(v);
    } else {
      const v = p.k === 'name' ? get(p.v) : evaluateValue(p.node, get);
      if (v === undefined) return undefined;
      out += toStr(v);
    }
  }
  return out;
}

/** Renders a text compiled on the fly (for values that are only known at run time). */
export function renderString(text: string, get: DslLookup): string | undefined {
  if (!text.includes('{{') && !text.includes('§')) return text;
  try {
    return render(compileText(text), get);
  } catch {
    return undefined;
  }
}
