// The small expression language of `dsl` matchers, a safe subset of nuclei's: literals, response
// variables, comparison and boolean operators, and a fixed set of pure string functions. It is
// parsed and type-checked once when a template is validated (unknown functions, wrong argument
// counts and unsupported regexes are template errors); evaluation walks the tree and never
// throws, whatever the response holds. Nothing here reaches eval or Function.
import { compileTemplateRegex } from './regex.ts';

export const DSL_LIMITS = { length: 4_096, depth: 32, nodes: 512 } as const;

type Type = 'string' | 'number' | 'boolean';
export type DslValue = string | number | boolean;

export type DslNode =
  | { k: 'lit'; v: DslValue }
  | { k: 'var'; name: string }
  | { k: 'not'; e: DslNode }
  | { k: 'bin'; op: BinOp; a: DslNode; b: DslNode }
  | { k: 'call'; fn: string; args: DslNode[]; re?: RegExp };

type BinOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | '&&' | '||';

/** The variables a response provides; any other name is a response header (lower case, `-` as `_`). */
export const DSL_VARIABLES: Record<string, Type> = {
  status_code: 'number',
  content_length: 'number',
  body: 'string',
  header: 'string',
  all_headers: 'string',
  response: 'string',
  content_type: 'string',
};

interface FnSpec {
  min: number;
  max: number;
  returns: Type;
}
const FUNCTIONS: Record<string, FnSpec> = {
  contains: { min: 2, max: 2, returns: 'boolean' },
  contains_any: { min: 2, max: 32, returns: 'boolean' },
  contains_all: { min: 2, max: 32, returns: 'boolean' },
  starts_with: { min: 2, max: 32, returns: 'boolean' },
  ends_with: { min: 2, max: 32, returns: 'boolean' },
  regex: { min: 2, max: 2, returns: 'boolean' },
  len: { min: 1, max: 1, returns: 'number' },
  tolower: { min: 1, max: 1, returns: 'string' },
  toupper: { min: 1, max: 1, returns: 'string' },
};

export class DslError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DslError';
  }
}

type Tok = { t: 'str'; v: string } | { t: 'num'; v: number } | { t: 'id'; v: string } | { t: 'op'; v: string };

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i += 1;
      continue;
    }
    if (c === '"' || c === "'") {
      let s = '';
      let j = i + 1;
      for (; j < src.length && src[j] !== c; j++) {
        if (src[j] === '\\' && j + 1 < src.length) {
          const n = src[++j]!;
          s += n === 'n' ? '\n' : n === 't' ? '\t' : n === 'r' ? '\r' : n;
        } else s += src[j];
      }
      if (j >= src.length) throw new DslError(`unterminated string starting at column ${i + 1}`);
      out.push({ t: 'str', v: s });
      i = j + 1;
      continue;
    }
    const num = /^\d+(?:\.\d+)?/.exec(src.slice(i, i + 32));
    if (num) {
      out.push({ t: 'num', v: Number(num[0]) });
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i, i + 200));
    if (id) {
      out.push({ t: 'id', v: id[0] });
      i += id[0].length;
      continue;
    }
    const op = ['==', '!=', '<=', '>=', '&&', '||', '<', '>', '!', '(', ')', ','].find((o) => src.startsWith(o, i));
    if (!op) throw new DslError(`unexpected character ${JSON.stringify(c)} at column ${i + 1}`);
    out.push({ t: 'op', v: op });
    i += op.length;
  }
  return out;
}

/** Parses and type-checks an expression; throws DslError with a readable reason. */
export function parseDsl(src: string): DslNode {
  if (src.length > DSL_LIMITS.length) throw new DslError(`the expression is ${src.length} characters long; at most ${DSL_LIMITS.length} are allowed`);
  const toks = tokenize(src);
  let pos = 0;
  let nodes = 0;
  const peek = () => toks[pos];
  const isOp = (v: string) => peek()?.t === 'op' && peek()!.v === v;
  const node = <T extends DslNode>(n: T): T => {
    if (++nodes > DSL_LIMITS.nodes) throw new DslError(`the expression has more than ${DSL_LIMITS.nodes} parts`);
    return n;
  };
  // Depth counts parentheses, negations and function calls: what makes the parser recurse.
  const enter = (depth: number) => {
    if (depth > DSL_LIMITS.depth) throw new DslError(`the expression nests deeper than ${DSL_LIMITS.depth} levels`);
  };
  const binary = (ops: readonly BinOp[], next: (d: number) => DslNode) => (depth: number): DslNode => {
    let left = next(depth);
    while (peek()?.t === 'op' && (ops as readonly string[]).includes(String(peek()!.v))) {
      const op = toks[pos++]!.v as BinOp;
      left = node({ k: 'bin', op, a: left, b: next(depth) });
    }
    return left;
  };
  const unary = (depth: number): DslNode => {
    enter(depth);
    if (isOp('!')) {
      pos += 1;
      return node({ k: 'not', e: unary(depth + 1) });
    }
    return primary(depth);
  };
  const compare = binary(['==', '!=', '<=', '>=', '<', '>'], unary);
  const and = binary(['&&'], compare);
  const or = binary(['||'], and);
  function primary(depth: number): DslNode {
    const t = toks[pos++];
    if (!t) throw new DslError('the expression ends too early');
    if (t.t === 'str' || t.t === 'num') return node({ k: 'lit', v: t.v });
    if (t.t === 'op' && t.v === '(') {
      const e = or(depth + 1);
      if (!isOp(')')) throw new DslError('missing )');
      pos += 1;
      return e;
    }
    if (t.t === 'id') {
      if (t.v === 'true' || t.v === 'false') return node({ k: 'lit', v: t.v === 'true' });
      if (!isOp('(')) return node({ k: 'var', name: t.v.toLowerCase() });
      pos += 1;
      const spec = FUNCTIONS[t.v];
      if (!spec) throw new DslError(`unknown function ${t.v}(); available: ${Object.keys(FUNCTIONS).join(', ')}`);
      const args: DslNode[] = [];
      if (!isOp(')')) {
        for (;;) {
          args.push(or(depth + 1));
          if (isOp(',')) {
            pos += 1;
            continue;
          }
          break;
        }
      }
      if (!isOp(')')) throw new DslError(`missing ) after the arguments of ${t.v}()`);
      pos += 1;
      if (args.length < spec.min || args.length > spec.max) {
        throw new DslError(`${t.v}() takes ${spec.min === spec.max ? spec.min : `${spec.min} to ${spec.max}`} argument${spec.max === 1 ? '' : 's'}, not ${args.length}`);
      }
      const call: DslNode = node({ k: 'call', fn: t.v, args });
      if (t.v === 'regex') {
        const p = args[0]!;
        if (p.k !== 'lit' || typeof p.v !== 'string') throw new DslError('regex() needs a quoted pattern as its first argument');
        const re = compileTemplateRegex(p.v);
        if (!re.ok) throw new DslError(`regex(${JSON.stringify(p.v.slice(0, 60))}): ${re.message}`);
        call.re = re.re;
      }
      return call;
    }
    throw new DslError(`unexpected ${JSON.stringify(t.v)}`);
  }
  const root = or(0);
  if (pos < toks.length) throw new DslError(`unexpected ${JSON.stringify(String(toks[pos]!.v))} after the end of the expression`);
  if (typeOf(root) !== 'boolean') throw new DslError('the expression must be a condition (true or false), e.g. status_code == 200');
  return root;
}

function typeOf(n: DslNode): Type {
  switch (n.k) {
    case 'lit':
      return typeof n.v as Type;
    case 'var':
      return DSL_VARIABLES[n.name] ?? 'string';
    case 'not':
      return 'boolean';
    case 'bin':
      return 'boolean';
    case 'call':
      return FUNCTIONS[n.fn]!.returns;
  }
}

/** What an expression reads from one response. Header variables are looked up lazily. */
export interface DslContext {
  vars: Record<string, DslValue>;
  header(name: string): string;
}

const str = (v: DslValue) => (typeof v === 'string' ? v : String(v));

function equal(a: DslValue, b: DslValue): boolean {
  if (typeof a === typeof b) return a === b;
  if (typeof a === 'number' || typeof b === 'number') return Number(a) === Number(b);
  return str(a) === str(b);
}

function evaluate(n: DslNode, ctx: DslContext): DslValue {
  switch (n.k) {
    case 'lit':
      return n.v;
    case 'var':
      return ctx.vars[n.name] ?? ctx.header(n.name);
    case 'not':
      return evaluate(n.e, ctx) !== true;
    case 'bin': {
      if (n.op === '&&') return evaluate(n.a, ctx) === true && evaluate(n.b, ctx) === true;
      if (n.op === '||') return evaluate(n.a, ctx) === true || evaluate(n.b, ctx) === true;
      const a = evaluate(n.a, ctx);
      const b = evaluate(n.b, ctx);
      if (n.op === '==') return equal(a, b);
      if (n.op === '!=') return !equal(a, b);
      const x = Number(a);
      const y = Number(b);
      if (Number.isNaN(x) || Number.isNaN(y)) return false;
      return n.op === '<' ? x < y : n.op === '<=' ? x <= y : n.op === '>' ? x > y : x >= y;
    }
    case 'call': {
      const args = n.args.map((a) => evaluate(a, ctx));
      const s = str(args[0]!);
      const rest = args.slice(1).map(str);
      switch (n.fn) {
        case 'contains':
          return s.includes(rest[0]!);
        case 'contains_any':
          return rest.some((x) => s.includes(x));
        case 'contains_all':
          return rest.every((x) => s.includes(x));
        case 'starts_with':
          return rest.some((x) => s.startsWith(x));
        case 'ends_with':
          return rest.some((x) => s.endsWith(x));
        case 'regex':
          n.re!.lastIndex = 0;
          return n.re!.test(str(args[1]!));
        case 'len':
          return s.length;
        case 'tolower':
          return s.toLowerCase();
        default:
          return s.toUpperCase();
      }
    }
  }
}

/** True when the expression holds for this response; false for anything else, never a throw. */
export function evaluateDsl(n: DslNode, ctx: DslContext): boolean {
  try {
    return evaluate(n, ctx) === true;
  } catch {
    return false;
  }
}
