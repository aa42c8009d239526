// The edge check of one host: per port, reachability, protocols (SSLv2/SSLv3 by raw hello, TLS 1.0–1.3
// by Node handshake with a raw-hello fallback for suites OpenSSL 3 lacks), accepted suites (raw hellos
// for TLS ≤ 1.2, removing the server's pick each round like testssl and sslscan; Node for TLS 1.3),
// the certificate, HSTS and headers, and a grade; once per host, the plain-HTTP redirect. All
// handshakes share one limiter, so a scan never has more than `concurrency` connections open.
// Over 500 lines on purpose: the per-port probe sequence (reachability, protocols, suites, key exchange,
// renegotiation, certificate) reads as one pipeline; the raw-hello parsing it needs is in its own files.
import type { X509Certificate } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { EgressRefusedError, egressRefusalMessage, type EgressPolicy } from '../../../lib/egress.ts';
import { createScopedHttp, sameHost } from '../http/scoped-http.ts';
import { analyzeCertificate, type CertificateReport } from './certificate.ts';
import {
  CIPHER_SUITES,
  suiteByCode,
  suiteByName,
  TLS13_SUITES,
  tls13Suite,
  type CipherSuite,
} from './cipher-suites.ts';
import { gradePort, type GradeResult } from './grade.ts';
import {
  handshake,
  limiter,
  type HandshakeOptions,
  type HandshakeResult,
  type Limiter,
  type TlsVersion,
} from './handshake.ts';
import {
  clientRenegotiation,
  fetchIssuers,
  keyExchange,
  type Handshake,
  type KeyExchangeReport,
} from './extra-checks.ts';
import { clientHello, sendHello, sslv2ClientHello, SSL3, TLS10, TLS11, TLS12, type HelloAnswer } from './hello.ts';
import { checkHttps, checkRedirect, type HttpsReport, type RedirectReport } from './http-checks.ts';

export const PROTOCOLS = ['SSLv2', 'SSLv3', 'TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const;
export type ProtocolName = (typeof PROTOCOLS)[number];

export interface EdgeScanOptions {
  /** Host name or IP address. */
  host: string;
  ports: readonly number[];
  /** SNI and the name the certificate must cover (default: the host). */
  sni?: string;
  anchors: X509Certificate[];
  /** Per connection: connect, handshake or HTTP request (default 5,000 ms). */
  timeoutMs?: number;
  /** Connections in flight at once (default 8). */
  concurrency?: number;
  /** Plain-HTTP port for the redirect check; null skips it. */
  httpPort: number | null;
  /** Fetch the intermediates a chain sent without them names in its AIA extension (default true). */
  fetchIssuers?: boolean;
  signal: AbortSignal;
  onProgress?: (done: number, total: number, message: string) => void;
  now?: Date;
  /** The hosted worker's policy: the scanned address, HTTP checks and issuer fetches go through it. */
  egress?: EgressPolicy;
}

export interface SuiteList {
  protocol: ProtocolName;
  /** IANA names in the order the server chose them (its preference when it enforces one). */
  suites: string[];
  /** The round limit stopped the enumeration. */
  truncated?: boolean;
  note?: string;
}

export interface EdgePortResult {
  port: number;
  /** tls-no-agreement: the server speaks TLS but accepted none of the hellos offered. */
  state: 'tls' | 'no-tls' | 'closed' | 'filtered' | 'tls-no-agreement';
  note?: string;
  protocols: Record<ProtocolName, boolean>;
  /** How each offered protocol was seen: a full Node handshake, or only a ServerHello to a raw hello. */
  seenBy: Partial<Record<ProtocolName, 'handshake' | 'server-hello'>>;
  ciphers: SuiteList[];
  /** The server picks its own favourite regardless of the client's order (null: not testable). */
  serverPreference: boolean | null;
  /** The server's ephemeral keys: the DH group of its DHE suites, its curves. */
  keyExchange?: KeyExchangeReport;
  /** The server completes a renegotiation the client starts (null: not testable: TLS 1.3 only). */
  clientRenegotiation?: boolean | null;
  /** Why some checks of this port could not be made (issuers not fetched, no DHE handshake). */
  notes?: string[];
  certificate?: CertificateReport;
  certificateError?: string;
  https?: HttpsReport;
  grade?: GradeResult;
}

export interface EdgeResult {
  host: string;
  address: string;
  serverName: string;
  ports: EdgePortResult[];
  httpRedirect?: RedirectReport;
}

export class EdgeScanError extends Error {
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean, opts: { cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'EdgeScanError';
    this.retryable = retryable;
  }
}

export const DEFAULT_TIMEOUT_MS = 5_000;
export const DEFAULT_CONCURRENCY = 8;
/** Rounds per protocol: more accepted suites than this is noted as truncated. */
export const MAX_SUITE_ROUNDS = 64;
const STEPS_PER_PORT = 4;

const RAW_VERSION: Record<'SSLv3' | 'TLSv1' | 'TLSv1.1' | 'TLSv1.2', number> = {
  SSLv3: SSL3,
  TLSv1: TLS10,
  'TLSv1.1': TLS11,
  'TLSv1.2': TLS12,
};
const RANK: Record<ProtocolName, number> = { SSLv2: 0, SSLv3: 1, TLSv1: 2, 'TLSv1.1': 3, 'TLSv1.2': 4, 'TLSv1.3': 5 };

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error
    ? signal.reason
    : Object.assign(new Error('The scan was cancelled'), { name: 'AbortError' });
}

async function resolveHost(host: string, egress: EgressPolicy | undefined): Promise<string> {
  if (egress) {
    // Every handshake goes to this one address, so checking it here binds the check.
    try {
      return (await egress.resolve(host))[0]!;
    } catch (e) {
      if (e instanceof EgressRefusedError) throw new EdgeScanError(egressRefusalMessage(host), false, { cause: e });
      if (!(e as NodeJS.ErrnoException).code) throw e;
      throw new EdgeScanError(`Cannot resolve ${host} (${(e as NodeJS.ErrnoException).code})`, true, { cause: e });
    }
  }
  if (net.isIP(host)) return host;
  try {
    return (await lookup(host)).address;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new EdgeScanError(
      `Cannot resolve ${host}${code ? ` (${code})` : ''}`,
      code !== 'ENOTFOUND' && code !== 'ENODATA',
      { cause: e },
    );
  }
}

function reach(
  address: string,
  port: number,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<'open' | 'closed' | 'filtered'> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: address, port });
    const finish = (s: 'open' | 'closed' | 'filtered') => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(s);
    };
    const timer = setTimeout(() => finish('filtered'), timeoutMs);
    const onAbort = () => finish('filtered');
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => finish('open'));
    socket.once('error', (e: NodeJS.ErrnoException) =>
      finish(e.code === 'ECONNREFUSED' || e.code === 'ECONNRESET' ? 'closed' : 'filtered'),
    );
  });
}

const urlHost = (host: string) => (net.isIPv6(host) ? `[${host}]` : host);

const suitesFor = (protocol: ProtocolName): CipherSuite[] =>
  protocol === 'TLSv1.2' ? [...CIPHER_SUITES] : CIPHER_SUITES.filter((s) => !s.tls12Only);

interface PortContext {
  /** The target host, unbracketed (URLs and scope). */
  host: string;
  address: string;
  port: number;
  serverName: string;
  timeoutMs: number;
  signal: AbortSignal;
  run: Limiter;
}

const raw = (c: PortContext, hello: Buffer) =>
  c.run(() => sendHello({ address: c.address, port: c.port, timeoutMs: c.timeoutMs, signal: c.signal }, hello));
const node = (
  c: PortContext,
  version: TlsVersion,
  o: Pick<HandshakeOptions, 'ciphers' | 'ecdhCurve' | 'renegotiate'> = {},
) =>
  c.run(() =>
    handshake({
      address: c.address,
      port: c.port,
      serverName: c.serverName,
      minVersion: version,
      maxVersion: version,
      ...o,
      timeoutMs: c.timeoutMs,
      signal: c.signal,
    }),
  );

interface ProtocolProbe {
  offered: boolean;
  /** The Node handshake that saw the protocol. */
  handshake?: HandshakeResult;
  seenBy?: 'handshake' | 'server-hello';
  chain?: X509Certificate[];
  /** The suite Node's handshake agreed (IANA name). */
  suite?: string;
  answer?: HelloAnswer;
}

async function probeProtocol(c: PortContext, protocol: ProtocolName): Promise<ProtocolProbe> {
  if (protocol === 'SSLv2') {
    const answer = await raw(c, sslv2ClientHello());
    return {
      offered: answer.kind === 'sslv2-server-hello',
      ...(answer.kind === 'sslv2-server-hello' ? { seenBy: 'server-hello' as const } : {}),
      answer,
    };
  }
  if (protocol !== 'SSLv3') {
    const done = await node(c, protocol);
    if (done.ok)
      return { offered: true, seenBy: 'handshake', chain: done.chain, suite: done.standardName, handshake: done };
    if (protocol === 'TLSv1.3') return { offered: false };
  }
  const version = RAW_VERSION[protocol];
  const answer = await raw(
    c,
    clientHello(
      version,
      suitesFor(protocol).map((s) => s.code),
      c.serverName,
    ),
  );
  const offered = answer.kind === 'server-hello' && answer.version === version;
  return { offered, ...(offered ? { seenBy: 'server-hello' as const } : {}), answer };
}

/** Suites accepted for a TLS ≤ 1.2 protocol: offer all, note the pick, offer the rest, until refused. */
async function enumerateRaw(
  c: PortContext,
  protocol: 'SSLv3' | 'TLSv1' | 'TLSv1.1' | 'TLSv1.2',
): Promise<{ list: SuiteList; accepted: CipherSuite[] }> {
  const version = RAW_VERSION[protocol];
  let remaining = suitesFor(protocol).map((s) => s.code);
  const accepted: CipherSuite[] = [];
  for (let round = 0; round < MAX_SUITE_ROUNDS && remaining.length; round += 1) {
    const answer = await raw(c, clientHello(version, remaining, c.serverName));
    if (answer.kind !== 'server-hello' || answer.version !== version) break;
    // A pick that was not offered (a broken server) would repeat forever: stop there.
    const suite = remaining.includes(answer.cipher) ? suiteByCode(answer.cipher) : undefined;
    if (!suite) break;
    accepted.push(suite);
    remaining = remaining.filter((code) => code !== answer.cipher);
  }
  const truncated = accepted.length === MAX_SUITE_ROUNDS;
  return { list: { protocol, suites: accepted.map((s) => s.name), ...(truncated ? { truncated } : {}) }, accepted };
}

async function enumerateTls13(c: PortContext): Promise<{ list: SuiteList; accepted: CipherSuite[] }> {
  let remaining: string[] = [...TLS13_SUITES];
  const accepted: CipherSuite[] = [];
  while (remaining.length) {
    const done = await node(c, 'TLSv1.3', { ciphers: remaining.join(':') });
    if (!done.ok || !remaining.includes(done.standardName)) break;
    accepted.push(tls13Suite(done.standardName));
    remaining = remaining.filter((n) => n !== done.standardName);
  }
  return { list: { protocol: 'TLSv1.3', suites: accepted.map((s) => s.name) }, accepted };
}

/** Offers the accepted suites in reverse: a server that still picks its first choice enforces its own order. */
async function serverPreference(
  c: PortContext,
  protocol: 'SSLv3' | 'TLSv1' | 'TLSv1.1' | 'TLSv1.2',
  accepted: CipherSuite[],
): Promise<boolean | null> {
  if (accepted.length < 2) return null;
  const reversed = accepted.map((s) => s.code).reverse();
  const answer = await raw(c, clientHello(RAW_VERSION[protocol], reversed, c.serverName));
  if (answer.kind !== 'server-hello') return null;
  return answer.cipher === accepted[0]!.code ? true : answer.cipher === reversed[0] ? false : null;
}

const noProtocols = (): Record<ProtocolName, boolean> => ({
  SSLv2: false,
  SSLv3: false,
  TLSv1: false,
  'TLSv1.1': false,
  'TLSv1.2': false,
  'TLSv1.3': false,
});

async function scanPort(
  c: PortContext,
  o: EdgeScanOptions,
  http: ReturnType<typeof createScopedHttp>,
  step: (message: string) => void,
): Promise<EdgePortResult> {
  const result: EdgePortResult = {
    port: c.port,
    state: 'tls',
    protocols: noProtocols(),
    seenBy: {},
    ciphers: [],
    serverPreference: null,
  };
  const reachable = await c.run(() => reach(c.address, c.port, c.timeoutMs, c.signal));
  step(`${c.port}/tcp ${reachable}`);
  if (reachable !== 'open') {
    result.state = reachable;
    result.note =
      reachable === 'closed' ? `port ${c.port} is closed` : `no answer on port ${c.port} within ${c.timeoutMs} ms`;
    return result;
  }

  const probes = await Promise.all(PROTOCOLS.map(async (p) => [p, await probeProtocol(c, p)] as const));
  for (const [p, probe] of probes) {
    result.protocols[p] = probe.offered;
    if (probe.seenBy) result.seenBy[p] = probe.seenBy;
  }
  step(`${c.port}/tcp protocols`);
  if (!probes.some(([, probe]) => probe.offered)) {
    const answers = probes.map(([, probe]) => probe.answer).filter((a) => a !== undefined);
    const spokeTls = answers.some((a) => a.kind === 'alert' || a.kind === 'server-hello');
    const other = answers.find((a) => a.kind === 'not-tls');
    result.state = spokeTls ? 'tls-no-agreement' : 'no-tls';
    result.note = spokeTls
      ? `port ${c.port} answers TLS but accepted none of the protocols and suites offered`
      : `no TLS on port ${c.port}${other?.kind === 'not-tls' ? ` (it answered ${JSON.stringify(other.first)})` : ''}`;
    return result;
  }

  const rawProtocols = (['SSLv3', 'TLSv1', 'TLSv1.1', 'TLSv1.2'] as const).filter((p) => result.protocols[p]);
  const enumerations = await Promise.all([
    ...rawProtocols.map((p) => enumerateRaw(c, p)),
    ...(result.protocols['TLSv1.3'] ? [enumerateTls13(c)] : []),
  ]);
  // A server that completes Node's handshake but ignores raw hellos (an unusual extension
  // requirement) still has the suite that handshake agreed.
  const probeOf = new Map(probes);
  for (const e of enumerations) {
    const agreed = probeOf.get(e.list.protocol)?.suite;
    const suite = agreed ? suiteByName(agreed) : undefined;
    if (!e.accepted.length && suite) {
      e.accepted.push(suite);
      e.list.suites.push(suite.name);
      e.list.note = 'raw hellos went unanswered; only the suite of a full handshake is known';
    }
  }
  result.ciphers = enumerations.map((e) => e.list);
  const suites = new Map<string, CipherSuite>();
  for (const e of enumerations) for (const s of e.accepted) suites.set(s.name, s);
  const best = rawProtocols.at(-1);
  if (best) result.serverPreference = await serverPreference(c, best, enumerations[rawProtocols.length - 1]!.accepted);
  step(`${c.port}/tcp cipher suites`);

  // Key exchange and renegotiation, by Node handshakes of the best protocol below TLS 1.3 it speaks.
  const legacy = (['TLSv1.2', 'TLSv1.1', 'TLSv1'] as const).find((p) => result.seenBy[p] === 'handshake');
  const byRank = probes.filter(([, probe]) => probe.seenBy === 'handshake').sort((a, b) => RANK[b[0]] - RANK[a[0]]);
  const all = [...suites.values()];
  const run: Handshake = (version, ho) => node(c, version, ho);
  const [kx, renegotiation] = await Promise.all([
    keyExchange(run, {
      legacy,
      best: byRank.map(([, probe]) => probe.handshake),
      dhe: all.some((s) => /^DHE_/.test(s.kx)),
      ecdhe: all.some((s) => /^ECDHE_/.test(s.kx)),
    }),
    clientRenegotiation(run, legacy),
  ]);
  result.keyExchange = kx;
  result.clientRenegotiation = renegotiation;
  const notes = [...kx.notes];

  const withChain = probes.filter(([, probe]) => probe.chain?.length).sort((a, b) => RANK[b[0]] - RANK[a[0]])[0];
  if (withChain) {
    const chain = withChain[1].chain!;
    result.certificate = analyzeCertificate(chain, o.anchors, c.serverName, o.now);
    // Sent without its intermediates: fetch them as browsers do (AIA) and judge the completed chain.
    if (
      !result.certificate.trusted &&
      result.certificate.trustProblem === 'unknown-issuer' &&
      o.fetchIssuers !== false
    ) {
      const last = chain.find((x) => x.fingerprint256 === result.certificate!.path.at(-1)!.fingerprint256) ?? chain[0]!;
      const fetched = await c.run(() =>
        fetchIssuers(last, {
          scannedHost: c.host,
          timeoutMs: c.timeoutMs,
          signal: c.signal,
          ...(o.egress ? { egress: o.egress } : {}),
        }),
      );
      notes.push(...fetched.notes);
      if (fetched.certs.length) {
        const completed = analyzeCertificate(chain, o.anchors, c.serverName, o.now, fetched.certs);
        if (completed.trusted) result.certificate = completed;
      }
    }
  } else
    result.certificateError =
      'no handshake completed with Node TLS (OpenSSL 3), so the certificate was not read: the server offers only protocols or suites it lacks';

  if (result.seenBy['TLSv1.2'] === 'handshake' || result.seenBy['TLSv1.3'] === 'handshake') {
    result.https = await c.run(() => checkHttps(http, `https://${urlHost(c.host)}:${c.port}`));
  }
  step(`${c.port}/tcp certificate and HTTP`);

  if (notes.length) result.notes = notes;
  const hsts =
    result.https?.status !== undefined
      ? { ...(result.https.hsts?.maxAge !== undefined ? { maxAge: result.https.hsts.maxAge } : {}) }
      : undefined;
  const sslv3 = enumerations.find((e) => e.list.protocol === 'SSLv3')?.accepted ?? [];
  result.grade = gradePort({
    protocols: result.protocols,
    suites: all,
    sslv3Suites: sslv3,
    keyExchange: kx,
    ...(renegotiation !== null ? { clientRenegotiation: renegotiation } : {}),
    ...(result.serverPreference !== null ? { serverPreference: result.serverPreference } : {}),
    ...(result.certificate ? { certificate: result.certificate } : {}),
    ...(hsts ? { hsts } : {}),
  });
  return result;
}

export async function scanEdge(o: EdgeScanOptions): Promise<EdgeResult> {
  const { signal } = o;
  if (signal.aborted) throw abortError(signal);
  const host = o.host.replace(/^\[(.*)\]$/, '$1');
  const address = await resolveHost(host, o.egress);
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const run = limiter(Math.max(1, Math.min(o.concurrency ?? DEFAULT_CONCURRENCY, DEFAULT_CONCURRENCY)), signal);
  const serverName = o.sni ?? host;
  const ports = [...new Set(o.ports)];
  // HTTP goes to the target host only; the limiter above caps it along with the handshakes.
  const http = createScopedHttp({
    inScope: sameHost(host),
    signal,
    timeoutMs,
    concurrency: 4,
    ratePerSecond: 20,
    ...(o.egress ? { egress: o.egress } : {}),
  });
  const total = ports.length * STEPS_PER_PORT + (o.httpPort === null ? 0 : 1);
  let done = 0;
  const progress = (n: number, message: string) => o.onProgress?.((done += n), total, message);
  // A closed port skips the later steps: count them when it ends so progress still reaches 100 %.
  const portScan = async (port: number) => {
    let steps = 0;
    const r = await scanPort({ host, address, port, serverName, timeoutMs, signal, run }, o, http, (m) => {
      steps += 1;
      progress(1, m);
    });
    if (steps < STEPS_PER_PORT) progress(STEPS_PER_PORT - steps, `${port}/tcp done`);
    return r;
  };
  try {
    const [results, httpRedirect] = await Promise.all([
      Promise.all(ports.map(portScan)),
      o.httpPort === null
        ? undefined
        : run(() => checkRedirect(http, `http://${urlHost(host)}:${o.httpPort}/`, host)).then((r) => {
            progress(1, 'HTTP redirect');
            return r;
          }),
    ]);
    if (signal.aborted) throw abortError(signal);
    return {
      host,
      address,
      serverName,
      ports: results.sort((a, b) => a.port - b.port),
      ...(httpRedirect ? { httpRedirect } : {}),
    };
  } catch (e) {
    if (signal.aborted) throw abortError(signal);
    throw e;
  } finally {
    http.close();
  }
}
