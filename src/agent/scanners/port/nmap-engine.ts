// nmap as an optional engine of the port scanner (`--engine nmap`): a TCP connect scan
// (`-sT`, no root needed, the same method as the native engine) of the same ports, with nmap's
// own version detection when identification is on. Its XML (`-oX -`) is read as it streams:
// `<taskprogress>` lines drive progress, `<port>` elements become the same OpenPort records the
// native engine returns, so findings, output and ingestion do not care which engine ran.
import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { SaxesParser } from 'saxes';
import type { EgressPolicy } from '../../../lib/egress.ts';
import { PortScanError, resolveTarget, type OpenPort, type PortScanResult } from './engine.ts';
import { toRanges } from './ports.ts';

export interface NmapScanOptions {
  host: string;
  /** The hosted worker's policy: nmap is given the checked address, never the name. */
  egress?: EgressPolicy;
  ports: readonly number[];
  /** Per-probe timeout: nmap's --max-rtt-timeout. */
  timeoutMs?: number;
  /** Probes per second at most: nmap's --max-rate. */
  rate?: number;
  /** nmap's -sV (light version detection). */
  identify?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: { done: number; total: number; open: number }) => void;
  /** The nmap binary (default `nmap` on PATH). */
  bin?: string;
}

/** nmap's version line, or null when it cannot be run. */
export function nmapVersion(bin = 'nmap'): Promise<string | null> {
  return new Promise((resolve) => {
    let out = '';
    const child = spawn(bin, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', () => resolve(null));
    child.on('close', (code) => resolve(code === 0 ? (/Nmap version (\S+)/.exec(out)?.[1] ?? 'unknown') : null));
  });
}

/** The arguments for a scan; exported for the tests and the docs. */
export function nmapArgs(
  address: string,
  ports: readonly number[],
  o: Pick<NmapScanOptions, 'timeoutMs' | 'rate' | 'identify'>,
): string[] {
  const spec = toRanges([...ports])
    .map(([a, b]) => (a === b ? String(a) : `${a}-${b}`))
    .join(',');
  return [
    '-sT', // connect scan: no raw sockets, like the native engine
    '-Pn', // the asset is known to exist; do not skip it when ping is filtered
    '-n',
    '-T4',
    '--max-retries',
    '1',
    ...(o.timeoutMs ? ['--max-rtt-timeout', `${o.timeoutMs}ms`] : []),
    ...(o.rate ? ['--max-rate', String(o.rate)] : []),
    ...(o.identify ? ['-sV', '--version-light'] : []),
    '--stats-every',
    '2s',
    '-p',
    spec,
    '-oX',
    '-',
    address,
  ];
}

const MAX_XML_BYTES = 64 * 1024 * 1024;

export async function scanPortsWithNmap(o: NmapScanOptions): Promise<PortScanResult> {
  const ports = [...new Set(o.ports)].filter((p) => Number.isInteger(p) && p >= 1 && p <= 65_535).sort((a, b) => a - b);
  const address = await resolveTarget(o.host, undefined, o.egress);
  const host = o.host.replace(/^\[(.*)\]$/, '$1');
  if (o.signal?.aborted) throw o.signal.reason;
  const args = nmapArgs(address, ports, o);
  if (address.includes(':')) args.splice(args.length - 1, 0, '-6');
  const child = spawn(o.bin ?? 'nmap', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const onAbort = () => child.kill('SIGTERM');
  o.signal?.addEventListener('abort', onAbort, { once: true });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    if (stderr.length < 4_000) stderr += d.toString();
  });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', (e) =>
      reject(
        new PortScanError(
          `nmap could not be started (${(e as NodeJS.ErrnoException).code ?? e.message}); install nmap or use the native engine`,
          false,
          { cause: e },
        ),
      ),
    );
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  await spawned;

  const open: OpenPort[] = [];
  let closed = 0;
  let filtered = 0;
  let bytes = 0;
  let port: { port: number; state: string; service: Record<string, string> } | null = null;
  // nmap's XML is read as it streams (saxes); its data sits in attributes, text is ignored.
  const parser = new SaxesParser();
  let xmlError: Error | null = null;
  parser.on('error', (e) => (xmlError ??= e));
  parser.on('opentag', (tag) => {
    const a = tag.attributes as Record<string, string>;
    if (tag.name === 'taskprogress' && a.percent) {
      const pct = Math.min(100, Number(a.percent) || 0);
      o.onProgress?.({ done: Math.round((pct / 100) * ports.length), total: ports.length, open: open.length });
    } else if (tag.name === 'extraports') {
      const n = Number(a.count) || 0;
      if (a.state === 'closed') closed += n;
      else filtered += n;
    } else if (tag.name === 'port')
      port = tag.isSelfClosing ? null : { port: Number(a.portid), state: '', service: {} };
    else if (port && tag.name === 'state') port.state = a.state ?? '';
    else if (port && tag.name === 'service') port.service = { ...a };
  });
  parser.on('closetag', (tag) => {
    if (tag.name !== 'port' || !port) return;
    const p = port;
    port = null;
    if (p.state === 'open') open.push(toOpenPort(p.port, p.service));
    else if (p.state === 'closed') closed += 1;
    else filtered += 1;
  });
  try {
    // Bytes are counted on the way in: a runaway output must not fill memory.
    const decoder = new StringDecoder('utf8');
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > MAX_XML_BYTES) {
        child.kill('SIGKILL');
        throw new PortScanError('nmap wrote more output than expected', false);
      }
      parser.write(decoder.write(chunk));
      if (xmlError) throw xmlError;
    }
    parser.write(decoder.end()).close();
    if (xmlError) throw xmlError;
  } catch (e) {
    child.kill('SIGKILL');
    if (o.signal?.aborted) throw o.signal.reason;
    if (e instanceof PortScanError) throw e;
    throw new PortScanError(`nmap's XML output could not be read: ${(e as Error).message}`, false, { cause: e });
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
  }
  const code = await exited;
  if (o.signal?.aborted) throw o.signal.reason;
  if (code !== 0)
    throw new PortScanError(
      `nmap exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' ') || 'no message'}`,
      false,
    );
  o.onProgress?.({ done: ports.length, total: ports.length, open: open.length });
  open.sort((a, b) => a.port - b.port);
  return { host, address, scanned: ports.length, open, closed, filtered };
}

function toOpenPort(port: number, s: Record<string, string>): OpenPort {
  const name = s.name && s.name !== 'unknown' ? `${s.tunnel === 'ssl' ? 'ssl/' : ''}${s.name}` : undefined;
  return {
    port,
    ...(name ? { service: name === 'ssl/http' ? 'https' : name } : {}),
    ...(s.product ? { product: s.product } : {}),
    ...(s.version ? { version: s.version } : {}),
    ...(s.tunnel === 'ssl' ? { tls: true } : {}),
    // nmap's method "probed" means its probes matched; "table" is the port-number guess.
    identifiedBy: !name ? 'none' : s.method === 'probed' ? 'probe' : 'port',
    ...(s.extrainfo ? { data: { extrainfo: s.extrainfo, engine: 'nmap' } } : { data: { engine: 'nmap' } }),
  };
}
