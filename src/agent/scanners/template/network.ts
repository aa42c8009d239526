// nuclei's network (tcp) templates: connect to the scanned host (never another one) on the
// template's port, send each input (text with placeholders, or hex), read what an input asks
// for (kept under its name) and then `read-size` bytes (or, with `read-all`, until the peer
// stops), and run the block's matchers and extractors on `data` (the last read), `raw` (all
// that was read) and the named reads. Connections go through the port scanner's resolver and are
// bounded in time and bytes, so one template cannot hold a worker.
import net from 'node:net';
import type { EgressPolicy } from '../../../lib/egress.ts';
import { resolveTarget } from '../port/engine.ts';
import { bytesToString, stringBytes } from './dsl-functions.ts';
import type { DslValue } from './dsl.ts';
import { buildOperators, type BuildContext } from './build-http.ts';
import { checkText, type Extractor, type Matcher } from './model.ts';
import { resultsOf, runOperators, type ResultEntry, type Scope } from './operators.ts';
import { compileText, render, type CompiledText } from './render.ts';
import { NETWORK_MAX_READ as MAX_READ, type RawNetworkBlock } from './schema.ts';

export interface NetworkBlock {
  /** `{{Hostname}}`, `{{Host}}:22` or `tls://{{Host}}:443`-free forms, compiled. */
  hosts: CompiledText[];
  ports: number[];
  inputs: { data: CompiledText; hex: boolean; read: number; name?: string }[];
  readSize: number;
  readAll: boolean;
  stopAtFirstMatch: boolean;
  matchersCondition: 'and' | 'or';
  matchers: Matcher[];
  extractors: Extractor[];
}

export function buildNetworkBlock(b: RawNetworkBlock, at: string, ctx: BuildContext): NetworkBlock | null {
  const hosts: CompiledText[] = [];
  b.host.forEach((h, i) => {
    if (!/^\{\{(?:Hostname|Host)\}\}(?::\d{1,5})?$/.test(h.trim()))
      return ctx.err(
        `${at}.host[${i}]`,
        'must be {{Hostname}} or {{Host}}:port: network templates only reach the scanned host',
      );
    hosts.push(compileText(h.trim()));
  });
  const ports: number[] = [];
  for (const p of (b.port ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    if (!/^\d{1,5}$/.test(p) || Number(p) < 1 || Number(p) > 65_535)
      ctx.err(`${at}.port`, `${p.slice(0, 20)} is not a port`);
    else ports.push(Number(p));
  }
  const inputs = (b.inputs ?? []).map((x, i) => {
    const where = `${at}.inputs[${i}]`;
    const data = x.data ?? '';
    if (x.type === 'hex' && !/^(?:[0-9a-fA-F]{2})*$/.test(data.replace(/\{\{[^}]*\}\}/g, '00')))
      ctx.err(`${where}.data`, 'must be hex bytes with type: hex');
    const c = compileText(data);
    checkText(ctx, c, `${where}.data`);
    return { data: c, hex: x.type === 'hex', read: x.read ?? 0, ...(x.name ? { name: x.name } : {}) };
  });
  for (const x of b.inputs ?? []) if (x.name) ctx.known.add(x.name);
  const { matchers, extractors } = buildOperators(b, at, ctx);
  if (!matchers.length && !extractors.length)
    ctx.err(at, 'a request needs matchers or extractors, or it can never report anything');
  return {
    hosts,
    ports,
    inputs,
    readSize: b['read-size'] ?? 1024,
    readAll: b['read-all'] ?? false,
    stopAtFirstMatch: b['stop-at-first-match'] ?? false,
    matchersCondition: b['matchers-condition'] ?? 'or',
    matchers,
    extractors,
  };
}

/** One exchange as operators see it: `data` (body and the default part), `raw`, named reads. */
class NetworkData {
  readonly values: Map<string, string>;
  constructor(values: Map<string, string>) {
    this.values = values;
  }
  get(name: string): DslValue | undefined {
    return this.values.get(name === 'body' ? 'data' : name);
  }
  part(p: string): string | undefined {
    return this.values.get(p === 'body' || p === 'response' || p === 'all' ? (p === 'body' ? 'data' : 'raw') : p);
  }
  lowerPart(p: string): string | undefined {
    return this.part(p)?.toLowerCase();
  }
  bytes(p: string): Buffer | undefined {
    const v = this.part(p);
    return v === undefined ? undefined : stringBytes(v);
  }
}

/** Reads until `n` bytes arrived (or the peer closed, or the time ran out); `n` 0 means until then. */
function reader(socket: net.Socket, timeoutMs: number) {
  let buffered = Buffer.alloc(0);
  let ended = false;
  let wake: (() => void) | null = null;
  socket.on('data', (c: Buffer) => {
    if (buffered.length < MAX_READ) buffered = Buffer.concat([buffered, c]);
    wake?.();
  });
  socket.on('end', () => ((ended = true), wake?.()));
  socket.on('close', () => ((ended = true), wake?.()));
  return async (n: number): Promise<Buffer> => {
    const deadline = Date.now() + timeoutMs;
    while ((n === 0 || buffered.length < n) && !ended && Date.now() < deadline) {
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, Math.min(deadline - Date.now(), n === 0 ? 500 : deadline - Date.now()));
      });
      wake = null;
      if (n === 0 && !ended) break;
    }
    const take = n === 0 ? buffered.length : Math.min(n, buffered.length);
    const out = buffered.subarray(0, take);
    buffered = buffered.subarray(take);
    return out;
  };
}

export interface NetworkResult extends ResultEntry {
  address: string;
  request: string;
  data: string;
}

/** Runs one network block against the scanned host. */
export async function executeNetworkBlock(
  block: NetworkBlock,
  host: string,
  urlVars: Record<string, string>,
  scope: Scope,
  opts: { timeoutMs: number; signal: AbortSignal; resolve?: (h: string) => Promise<string>; egress?: EgressPolicy },
): Promise<{ results: NetworkResult[]; errors: string[] }> {
  const results: NetworkResult[] = [];
  const errors: string[] = [];
  for (const hostText of block.hosts) {
    const rendered = render(hostText, (n) => urlVars[n]);
    if (rendered === undefined) continue;
    const m = /:(\d{1,5})$/.exec(rendered);
    const ports = block.ports.length ? block.ports : [m ? Number(m[1]) : Number(urlVars.Port)];
    for (const port of ports) {
      if (opts.signal.aborted) throw opts.signal.reason ?? new DOMException('The scan was cancelled', 'AbortError');
      let address: string;
      try {
        address = await resolveTarget(host, opts.resolve, opts.egress);
      } catch (e) {
        errors.push(`${host}: ${(e as Error).message}`);
        continue;
      }
      const socket = net.connect({ host: address, port });
      socket.setTimeout(opts.timeoutMs);
      const connected = await new Promise<Error | null>((r) => {
        socket.once('connect', () => r(null));
        socket.once('error', (e) => r(e));
        socket.once('timeout', () => r(new Error(`no connection within ${opts.timeoutMs} ms`)));
      });
      if (connected) {
        socket.destroy();
        errors.push(`${host}:${port}: ${connected.message}`);
        continue;
      }
      socket.on('error', () => undefined);
      const read = reader(socket, opts.timeoutMs);
      const values = new Map<string, string>();
      const named = new Map<string, string>();
      let raw = '';
      let sent = '';
      const get = (n: string) => named.get(n) ?? scope(n);
      try {
        for (const input of block.inputs) {
          const text = render(input.data, get);
          if (text === undefined) throw new Error('an input has a placeholder without a value');
          const bytes = input.hex ? Buffer.from(text, 'hex') : stringBytes(text);
          sent += bytesToString(bytes);
          socket.write(bytes);
          if (input.read > 0) {
            const got = bytesToString(await read(input.read));
            raw += got;
            if (input.name) named.set(input.name, got);
          }
        }
        const last = bytesToString(await read(block.readAll ? 0 : block.readSize));
        raw += last;
        values.set('data', last);
        values.set('raw', raw);
        values.set('request', sent);
        values.set('host', host);
        values.set('matched', `${host}:${port}`);
        for (const [k, v] of named) values.set(k, v);
      } catch (e) {
        errors.push(`${host}:${port}: ${(e as Error).message}`);
        continue;
      } finally {
        socket.destroy();
      }
      const r = runOperators(block, new NetworkData(values), scope);
      for (const res of resultsOf(block, r))
        results.push({ ...res, address: `${host}:${port}`, request: sent, data: values.get('data')! });
      if (block.stopAtFirstMatch && r.matched) return { results, errors };
    }
  }
  return { results, errors };
}
