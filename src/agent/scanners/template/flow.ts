// nuclei's `flow`: which request blocks run, in which order, and on what condition. nuclei runs
// the flow as JavaScript; the flows public templates use are boolean chains of protocol calls
// (`http(1) && http(2)`, `http(1) && (http(2) || http(3))`), which this reads as such, with
// JavaScript's short-circuit: `http(2)` runs only when `http(1)` matched. A call runs one block
// (`http(2)`, `http("login")` by id) or, without an argument, every block of its protocol, and is
// true when a block matched (or, having no matchers, extracted a value). Flows that are programs
// (loops, `set`, `template[...]`) are refused: running tenant JavaScript in a worker is not an
// option, and a flow understood halfway would run other requests than nuclei does.

export type FlowProtocol = 'http' | 'network' | 'ssl';

export type FlowNode =
  | { kind: 'call'; protocol: FlowProtocol; block?: number | string }
  | { kind: 'not'; node: FlowNode }
  | { kind: 'and' | 'or'; left: FlowNode; right: FlowNode };

export class FlowError extends Error {}

const UNSUPPORTED =
  'only chains of protocol calls are supported: http(1) && http(2), with ||, ! and parentheses (flows with loops, set() or template[...] are not)';

const TOKEN = /\s*(?:(&&|\|\||[()!;])|(http|network|tcp|ssl)\b|(\d+)|"([^"\\]*)"|'([^'\\]*)'|(\S))/y;

type Token =
  | { t: 'op'; v: string }
  | { t: 'proto'; v: FlowProtocol }
  | { t: 'num'; v: number }
  | { t: 'str'; v: string }
  | { t: 'end' };

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let pos = 0;
  for (;;) {
    TOKEN.lastIndex = pos;
    const m = TOKEN.exec(text);
    if (!m) break; // only white space is left
    pos = TOKEN.lastIndex;
    if (m[1]) out.push({ t: 'op', v: m[1] });
    else if (m[2]) out.push({ t: 'proto', v: m[2] === 'tcp' ? 'network' : (m[2] as FlowProtocol) });
    else if (m[3]) out.push({ t: 'num', v: Number(m[3]) });
    else if (m[4] !== undefined || m[5] !== undefined) out.push({ t: 'str', v: (m[4] ?? m[5])! });
    else throw new FlowError(UNSUPPORTED);
  }
  // A trailing semicolon ends the one statement.
  while (out.length && out.at(-1)!.t === 'op' && (out.at(-1) as { v: string }).v === ';') out.pop();
  if (out.some((x) => x.t === 'op' && x.v === ';')) throw new FlowError(UNSUPPORTED);
  out.push({ t: 'end' });
  return out;
}

/** Parses a flow; throws FlowError saying what is not supported. */
export function parseFlow(text: string): FlowNode {
  const tokens = tokenize(text.length > 4_000 ? '' : text);
  if (tokens.length === 1) throw new FlowError('the flow is empty (or too long)');
  let i = 0;
  const peek = () => tokens[i]!;
  const isOp = (v: string) => {
    const x = peek();
    return x.t === 'op' && x.v === v;
  };
  const expect = (v: string) => {
    if (!isOp(v)) throw new FlowError(UNSUPPORTED);
    i += 1;
  };
  let depth = 0;
  const primary = (): FlowNode => {
    if (++depth > 50) throw new FlowError('the flow nests too deeply');
    try {
      if (isOp('!')) {
        i += 1;
        return { kind: 'not', node: primary() };
      }
      if (isOp('(')) {
        i += 1;
        const n = or();
        expect(')');
        return n;
      }
      const p = peek();
      if (p.t !== 'proto') throw new FlowError(UNSUPPORTED);
      i += 1;
      expect('(');
      const arg = peek();
      let block: number | string | undefined;
      if (arg.t === 'num' || arg.t === 'str') {
        block = arg.v;
        i += 1;
      }
      expect(')');
      return { kind: 'call', protocol: p.v, ...(block !== undefined ? { block } : {}) };
    } finally {
      depth -= 1;
    }
  };
  const and = (): FlowNode => {
    let left = primary();
    while (isOp('&&')) {
      i += 1;
      left = { kind: 'and', left, right: primary() };
    }
    return left;
  };
  const or = (): FlowNode => {
    let left = and();
    while (isOp('||')) {
      i += 1;
      left = { kind: 'or', left, right: and() };
    }
    return left;
  };
  const node = or();
  if (peek().t !== 'end') throw new FlowError(UNSUPPORTED);
  return node;
}

/** Every call of a flow, for validation against the template's blocks. */
export function flowCalls(n: FlowNode, out: Extract<FlowNode, { kind: 'call' }>[] = []) {
  if (n.kind === 'call') out.push(n);
  else if (n.kind === 'not') flowCalls(n.node, out);
  else {
    flowCalls(n.left, out);
    flowCalls(n.right, out);
  }
  return out;
}

/** Runs a flow with JavaScript's short-circuit; `call` runs the named blocks and says whether one matched. */
export async function runFlow(
  n: FlowNode,
  call: (protocol: FlowProtocol, block: number | string | undefined) => Promise<boolean>,
): Promise<boolean> {
  switch (n.kind) {
    case 'call':
      return call(n.protocol, n.block);
    case 'not':
      return !(await runFlow(n.node, call));
    case 'and':
      return (await runFlow(n.left, call)) && runFlow(n.right, call);
    case 'or':
      return (await runFlow(n.left, call)) || runFlow(n.right, call);
  }
}
