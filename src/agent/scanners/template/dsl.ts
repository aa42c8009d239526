// nuclei's expression language (govaluate with nuclei's helper functions), for `dsl` matchers and
// extractors, `{{…}}` placeholders in requests, variables and words. A small hand-written parser:
// no npm expression library speaks govaluate's grammar (`=~`, `**`, `??`, `in (…)`, bare
// identifiers of any case, backslash escapes in strings), see docs/decisions.md. Expressions are
// parsed and checked once when a template is validated (unknown functions, argument counts,
// literal regexes); evaluation walks the tree, and an error (a missing variable, a bad argument)
// makes the expression fail, never the scan. Nothing here reaches eval or Function.
import { DslEvalError, FUNCTIONS, type DslValue } from './dsl-functions.ts';
import { compileTemplateRegex, runtimeRegex as compiledAtRun } from './regex.ts';

export type { DslValue } from './dsl-functions.ts';
export const DSL_LIMITS = { length: 4_096, depth: 32, nodes: 512 } as const;

export type DslNode =
  | { k: 'lit'; v: DslValue }
  | { k: 'var'; name: string }
  | { k: 'un'; op: '!' | '-' | '~'; e: DslNode }
  | { k: 'bin'; op: string; a: DslNode; b: DslNode }
  | { k: 'tern'; c: DslNode; a: DslNode; b: DslNode }
  | { k: 'list'; items: DslNode[] }
  | { k: 'call'; fn: string; args: DslNode[] };

/** The variables an answer provides; any other name is a response header or cookie, or a template value. */
export const DSL_VARIABLES = [
  'status_code',
  'content_length',
  'duration',
  'body',
  'header',
  'all_headers',
  'response',
  'content_type',
  'request',
  'matched',
  'host',
] as const;

export class DslError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DslError';
  }
}

type Tok = { t: 'str'; v: string } | { t: 'num'; v: number } | { t: 'id'; v: string } | { t: 'op'; v: string };

const OPS = [
  '**',
  '==',
  '!=',
  '<=',
  '>=',
  '=~',
  '!~',
  '&&',
  '||',
  '??',
  '<<',
  '>>',
  '<',
  '>',
  '!',
  '(',
  ')',
  ',',
  '+',
  '-',
  '*',
  '/',
  '%',
  '&',
  '|',
  '^',
  '~',
  '?',
  ':',
];

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i += 1;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      // govaluate: a backslash keeps the next character as it is.
      let s = '';
      let j = i + 1;
      for (; j < src.length && src[j] !== c; j++) s += src[j] === '\\' && j + 1 < src.length ? src[++j] : src[j];
      if (j >= src.length) throw new DslError(`unterminated string starting at column ${i + 1}`);
      out.push({ t: 'str', v: s });
      i = j + 1;
      continue;
    }
    const num = /^(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(src.slice(i, i + 40));
    if (num) {
      out.push({ t: 'num', v: Number(num[0]) });
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(src.slice(i, i + 200));
    if (id) {
      out.push({ t: 'id', v: id[0] });
      i += id[0].length;
      continue;
    }
    if (c === '[') {
      // govaluate's [name-with-any-characters] variable syntax.
      const end = src.indexOf(']', i);
      if (end < 0) throw new DslError(`missing ] for the name at column ${i + 1}`);
      out.push({ t: 'id', v: src.slice(i + 1, end) });
      i = end + 1;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new DslError(`unexpected character ${JSON.stringify(c)} at column ${i + 1}`);
    out.push({ t: 'op', v: op });
    i += op.length;
  }
  return out;
}

// Binary levels, lowest first (govaluate's precedence).
const LEVELS: readonly (readonly string[])[] = [
  ['||'],
  ['&&'],
  ['==', '!=', '<', '<=', '>', '>=', '=~', '!~', 'in'],
  ['&', '|', '^'],
  ['<<', '>>'],
  ['+', '-'],
  ['*', '/', '%'],
  ['**'],
];

/** Parses and checks an expression; throws DslError with a readable reason. */
export function parseDsl(src: string): DslNode {
  if (src.length > DSL_LIMITS.length)
    throw new DslError(`the expression is ${src.length} characters long; at most ${DSL_LIMITS.length} are allowed`);
  const toks = tokenize(src);
  if (!toks.length) throw new DslError('the expression is empty');
  let pos = 0;
  let nodes = 0;
  const peek = () => toks[pos];
  const isOp = (v: string) => peek()?.t === 'op' && peek()!.v === v;
  const opAt = (): string | null => {
    const t = peek();
    if (!t) return null;
    if (t.t === 'op') return t.v;
    return t.t === 'id' && t.v === 'in' ? 'in' : null;
  };
  const node = <T extends DslNode>(n: T): T => {
    if (++nodes > DSL_LIMITS.nodes) throw new DslError(`the expression has more than ${DSL_LIMITS.nodes} parts`);
    return n;
  };
  const enter = (depth: number) => {
    if (depth > DSL_LIMITS.depth) throw new DslError(`the expression nests deeper than ${DSL_LIMITS.depth} levels`);
  };
  function ternary(depth: number): DslNode {
    enter(depth);
    let c = level(0, depth);
    while (isOp('??')) {
      pos += 1;
      c = node({ k: 'bin', op: '??', a: c, b: level(0, depth) });
    }
    if (!isOp('?')) return c;
    pos += 1;
    const a = ternary(depth + 1);
    if (!isOp(':')) return node({ k: 'tern', c, a, b: node({ k: 'lit', v: '' }) });
    pos += 1;
    return node({ k: 'tern', c, a, b: ternary(depth + 1) });
  }
  function level(l: number, depth: number): DslNode {
    if (l >= LEVELS.length) return unary(depth);
    let left = level(l + 1, depth);
    for (let op = opAt(); op !== null && LEVELS[l]!.includes(op); op = opAt()) {
      pos += 1;
      const right = level(l + 1, depth);
      if ((op === '=~' || op === '!~') && right.k === 'lit') checkRegex(String(right.v), op);
      left = node({ k: 'bin', op, a: left, b: right });
    }
    return left;
  }
  function unary(depth: number): DslNode {
    enter(depth);
    const t = peek();
    if (t?.t === 'op' && (t.v === '!' || t.v === '-' || t.v === '~')) {
      pos += 1;
      return node({ k: 'un', op: t.v, e: unary(depth + 1) });
    }
    return primary(depth);
  }
  function args(depth: number): DslNode[] {
    const out: DslNode[] = [];
    if (isOp(')')) return out;
    for (;;) {
      out.push(ternary(depth + 1));
      if (!isOp(',')) return out;
      pos += 1;
    }
  }
  function primary(depth: number): DslNode {
    const t = toks[pos++];
    if (!t) throw new DslError('the expression ends too early');
    if (t.t === 'str' || t.t === 'num') return node({ k: 'lit', v: t.v });
    if (t.t === 'op' && t.v === '(') {
      const items = args(depth);
      if (!isOp(')')) throw new DslError('missing )');
      pos += 1;
      if (items.length === 1) return items[0]!;
      return node({ k: 'list', items });
    }
    if (t.t === 'id') {
      if (t.v === 'true' || t.v === 'false') return node({ k: 'lit', v: t.v === 'true' });
      if (!isOp('(')) return node({ k: 'var', name: t.v });
      pos += 1;
      const spec = FUNCTIONS[t.v];
      if (!spec) throw new DslError(`unknown function ${t.v}()`);
      const list = args(depth);
      if (!isOp(')')) throw new DslError(`missing ) after the arguments of ${t.v}()`);
      pos += 1;
      if (list.length < spec.min || list.length > spec.max) {
        const n =
          spec.max === Infinity
            ? `at least ${spec.min}`
            : spec.min === spec.max
              ? `${spec.min}`
              : `${spec.min} to ${spec.max}`;
        throw new DslError(`${t.v}() takes ${n} argument${spec.max === 1 ? '' : 's'}, not ${list.length}`);
      }
      if (spec.regexArg !== undefined) {
        const p = list[spec.regexArg];
        if (p?.k === 'lit') checkRegex(String(p.v), `${t.v}()`);
      }
      return node({ k: 'call', fn: t.v, args: list });
    }
    throw new DslError(`unexpected ${JSON.stringify(t.v)}`);
  }
  const root = ternary(0);
  if (pos < toks.length)
    throw new DslError(`unexpected ${JSON.stringify(String(toks[pos]!.v))} after the end of the expression`);
  return root;
}

function checkRegex(pattern: string, where: string): void {
  const re = compileTemplateRegex(pattern);
  if (!re.ok) throw new DslError(`${where} ${JSON.stringify(pattern.slice(0, 60))}: ${re.message}`);
}

/** The variable names an expression reads. */
export function dslVariables(n: DslNode, out = new Set<string>()): Set<string> {
  switch (n.k) {
    case 'var':
      out.add(n.name);
      break;
    case 'un':
      dslVariables(n.e, out);
      break;
    case 'bin':
      dslVariables(n.a, out);
      dslVariables(n.b, out);
      break;
    case 'tern':
      dslVariables(n.c, out);
      dslVariables(n.a, out);
      dslVariables(n.b, out);
      break;
    case 'list':
      for (const a of n.items) dslVariables(a, out);
      break;
    case 'call':
      for (const a of n.args) dslVariables(a, out);
      break;
  }
  return out;
}

/** What an expression reads: a variable by name, undefined when there is none (an error, as in nuclei). */
export type DslLookup = (name: string) => DslValue | undefined;

export { DslEvalError };

function runtimeRegex(pattern: string): RegExp {
  const re = compiledAtRun(pattern);
  if (!re) throw new DslEvalError(`unsupported regex ${JSON.stringify(pattern.slice(0, 60))}`);
  return re;
}

export const toStr = (v: DslValue): string =>
  Array.isArray(v) ? v.map(toStr).join(' ') : typeof v === 'number' ? formatNumber(v) : String(v);
function formatNumber(n: number): string {
  return Number.isInteger(n) && Math.abs(n) < 1e21 ? n.toFixed(0) : String(n);
}
const num = (v: DslValue): number => {
  if (typeof v === 'number') return v;
  throw new DslEvalError(`${JSON.stringify(toStr(v).slice(0, 40))} is not a number`);
};

function equal(a: DslValue, b: DslValue): boolean {
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]!));
  return a === b;
}

function compare(op: string, a: DslValue, b: DslValue): boolean {
  if (typeof a === 'string' && typeof b === 'string')
    return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
  const x = num(a);
  const y = num(b);
  return op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
}

function binary(op: string, a: DslValue, b: DslValue): DslValue {
  switch (op) {
    case '==':
      return equal(a, b);
    case '!=':
      return !equal(a, b);
    case '<':
    case '<=':
    case '>':
    case '>=':
      return compare(op, a, b);
    case '=~':
      return runtimeRegex(toStr(b)).test(toStr(a));
    case '!~':
      return !runtimeRegex(toStr(b)).test(toStr(a));
    case 'in':
      return (Array.isArray(b) ? b : [b]).some((x) => equal(a, x));
    case '+':
      return typeof a === 'string' || typeof b === 'string' ? toStr(a) + toStr(b) : num(a) + num(b);
    case '-':
      return num(a) - num(b);
    case '*':
      return num(a) * num(b);
    case '/':
      return num(a) / num(b);
    case '%':
      return num(a) % num(b);
    case '**':
      return num(a) ** num(b);
    case '&':
      return Number(BigInt.asIntN(64, BigInt(Math.trunc(num(a))) & BigInt(Math.trunc(num(b)))));
    case '|':
      return Number(BigInt.asIntN(64, BigInt(Math.trunc(num(a))) | BigInt(Math.trunc(num(b)))));
    case '^':
      return Number(BigInt.asIntN(64, BigInt(Math.trunc(num(a))) ^ BigInt(Math.trunc(num(b)))));
    case '<<':
      return Number(BigInt.asIntN(64, BigInt(Math.trunc(num(a))) << BigInt(Math.trunc(num(b)))));
    default:
      return Number(BigInt.asIntN(64, BigInt(Math.trunc(num(a))) >> BigInt(Math.trunc(num(b)))));
  }
}

const truthy = (v: DslValue): boolean => {
  if (typeof v !== 'boolean') throw new DslEvalError('not a condition');
  return v;
};

function evaluate(n: DslNode, ctx: DslLookup): DslValue {
  switch (n.k) {
    case 'lit':
      return n.v;
    case 'var': {
      const v = ctx(n.name);
      if (v === undefined) throw new DslEvalError(`no value named ${n.name}`);
      return v;
    }
    case 'un': {
      const v = evaluate(n.e, ctx);
      return n.op === '!' ? !truthy(v) : n.op === '-' ? -num(v) : ~Math.trunc(num(v));
    }
    case 'bin': {
      if (n.op === '&&') return truthy(evaluate(n.a, ctx)) && truthy(evaluate(n.b, ctx));
      if (n.op === '||') return truthy(evaluate(n.a, ctx)) || truthy(evaluate(n.b, ctx));
      if (n.op === '??') {
        try {
          return evaluate(n.a, ctx);
        } catch (e) {
          if (e instanceof DslEvalError) return evaluate(n.b, ctx);
          throw e;
        }
      }
      return binary(n.op, evaluate(n.a, ctx), evaluate(n.b, ctx));
    }
    case 'tern':
      return truthy(evaluate(n.c, ctx)) ? evaluate(n.a, ctx) : evaluate(n.b, ctx);
    case 'list':
      return n.items.map((x) => evaluate(x, ctx));
    case 'call': {
      const spec = FUNCTIONS[n.fn]!;
      const r = spec.fn(n.args.map((a) => evaluate(a, ctx)));
      if (r === undefined) throw new DslEvalError(`${n.fn}() failed`);
      return r;
    }
  }
}

/** The value of an expression, or undefined when it cannot be evaluated (nuclei's error). */
export function evaluateValue(n: DslNode, ctx: DslLookup): DslValue | undefined {
  try {
    return evaluate(n, ctx);
  } catch (e) {
    if (e instanceof DslEvalError || e instanceof RangeError || e instanceof SyntaxError || e instanceof TypeError)
      return undefined;
    throw e;
  }
}

/** True when the expression holds; false for anything else (not a boolean, an error), never a throw. */
export function evaluateDsl(n: DslNode, ctx: DslLookup): boolean {
  return evaluateValue(n, ctx) === true;
}
