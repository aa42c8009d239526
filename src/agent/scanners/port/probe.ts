// Service identification on an open TCP port. First listen: many services speak first (SSH, SMTP,
// FTP, POP3, IMAP, MySQL, Telnet, VNC). A silent port gets probes on fresh connections, ranked
// most likely first for its number: a TLS handshake (then HTTP inside it), `HEAD / HTTP/1.0`,
// Redis PING, PostgreSQL's SSLRequest, memcached's `version`. Each probe reads at most a few KiB and
// gives up after its timeout; nothing here logs in or sends credentials.
import net from 'node:net';
import tls from 'node:tls';

export interface ServiceInfo {
  /** nmap-style service name: ssh, smtp, ftp, http, https, redis, mysql, postgresql, ... */
  service?: string;
  product?: string;
  version?: string;
  /** What the service said, printable and short. */
  banner?: string;
  /** The port completed a TLS handshake. */
  tls?: boolean;
  /** How the service was recognised: its own words, an answer to a probe, or only the port number. */
  identifiedBy: 'banner' | 'probe' | 'port' | 'none';
  /** Extra detail for the finding's evidence (TLS protocol, certificate subject, HTTP status, ...). */
  data?: Record<string, unknown>;
}

export interface ProbeOptions {
  /** The address to connect to (already resolved). */
  address: string;
  port: number;
  /** The name for TLS SNI and the HTTP Host header (a hostname target), else the address. */
  hostName: string;
  /** How long to wait for a service that speaks first. */
  bannerWaitMs: number;
  /** Connect + answer timeout of each active probe. */
  probeTimeoutMs: number;
  signal?: AbortSignal;
}

const MAX_READ = 4_096;
const MAX_BANNER = 256;

/** Printable text of a banner: control characters become spaces, cut to 256 characters. */
export function printable(buf: Buffer | string, max = MAX_BANNER): string {
  const s = (typeof buf === 'string' ? buf : buf.toString('latin1'))
    .replace(/[^\x20-\x7e]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/**
 * Reads from a socket until `done(buffer)` says enough, MAX_READ bytes arrived, the peer closed,
 * or the timeout passed. Never rejects: what was read so far is the answer.
 */
export function readSome(
  socket: net.Socket,
  timeoutMs: number,
  done: (b: Buffer) => boolean = () => false,
  signal?: AbortSignal,
): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = () => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', finish);
      socket.off('close', finish);
      socket.off('error', finish);
      signal?.removeEventListener('abort', finish);
      resolve(Buffer.concat(chunks, size));
    };
    const onData = (d: Buffer) => {
      chunks.push(d);
      size += d.length;
      if (size >= MAX_READ || done(Buffer.concat(chunks, size))) finish();
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', onData);
    socket.once('end', finish);
    socket.once('close', finish);
    socket.once('error', finish);
    signal?.addEventListener('abort', finish, { once: true });
  });
}

/** Opens a plain connection, writes `payload`, and reads the answer. Null when it cannot connect. */
async function exchange(
  o: ProbeOptions,
  payload: Buffer | string,
  done?: (b: Buffer) => boolean,
): Promise<Buffer | null> {
  const socket = await connectPlain(o.address, o.port, o.probeTimeoutMs, o.signal);
  if (!socket) return null;
  try {
    socket.write(payload);
    return await readSome(socket, o.probeTimeoutMs, done, o.signal);
  } finally {
    socket.destroy();
  }
}

function connectPlain(
  address: string,
  port: number,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<net.Socket | null> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(null);
    const socket = net.connect({ host: address, port });
    const timer = setTimeout(() => settle(null), timeoutMs);
    const settle = (s: net.Socket | null) => {
      clearTimeout(timer);
      socket.off('error', onError);
      signal?.removeEventListener('abort', onAbort);
      if (!s) socket.destroy();
      else socket.on('error', () => undefined); // later errors end reads through 'close'
      resolve(s);
    };
    const onError = () => settle(null);
    const onAbort = () => settle(null);
    socket.once('connect', () => settle(socket));
    socket.once('error', onError);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const lineEnd = (b: Buffer) => b.includes(0x0a);

/** Recognises a service from what it said first. */
export function fromBanner(buf: Buffer, port: number): ServiceInfo | null {
  if (buf.length === 0) return null;
  const text = buf.toString('latin1');
  const first = printable(text.split(/\r?\n/)[0] ?? '');
  // Telnet opens with option negotiation: IAC (0xff) then WILL/WONT/DO/DONT.
  if (buf[0] === 0xff && buf.length >= 2 && buf[1]! >= 0xfb && buf[1]! <= 0xfe)
    return { service: 'telnet', banner: printable(buf) || undefined, identifiedBy: 'banner' };
  let m: RegExpExecArray | null;
  if ((m = /^SSH-(\d+\.\d+)-(\S+)/.exec(text))) {
    const [product, version] = m[2]!.split('_', 2);
    return {
      service: 'ssh',
      product,
      ...(version ? { version } : {}),
      banner: first,
      identifiedBy: 'banner',
      data: { protocol: m[1] },
    };
  }
  // MySQL/MariaDB: a packet (3-byte length, sequence 0) holding protocol 10 and a version string,
  // or an error packet (0xff) such as "Host ... is not allowed to connect to this MySQL server".
  const packetLength = buf.length >= 6 ? buf.readUIntLE(0, 3) : 0;
  if (packetLength > 0 && packetLength < 1_024 && buf[3] === 0 && (buf[4] === 0x0a || buf[4] === 0xff)) {
    if (buf[4] === 0x0a) {
      const end = buf.indexOf(0, 5);
      const version = buf.subarray(5, end === -1 ? Math.min(buf.length, 64) : end).toString('latin1');
      if (/^\d+\.\d+/.test(version))
        return {
          service: 'mysql',
          product: /mariadb/i.test(version) ? 'MariaDB' : 'MySQL',
          version,
          banner: printable(version),
          identifiedBy: 'banner',
        };
    }
    if (buf[4] === 0xff && /mysql|mariadb/i.test(text))
      return { service: 'mysql', banner: printable(buf.subarray(7)), identifiedBy: 'banner' };
  }
  if (/^220[ -]/.test(text)) {
    const smtp = /\bE?SMTP\b|postfix|exim|sendmail|mail/i.test(text);
    const ftp = /\bFTP\b|filezilla|vsftpd|proftpd|pure-ftpd/i.test(text);
    const service = smtp && !ftp ? 'smtp' : ftp && !smtp ? 'ftp' : [25, 465, 587, 2525].includes(port) ? 'smtp' : 'ftp';
    const product =
      /(postfix|exim|sendmail|microsoft esmtp|vsftpd|proftpd|filezilla server|pure-ftpd)[ /]?([\w.-]*\d[\w.-]*)?/i.exec(
        text,
      );
    return {
      service,
      ...(product ? { product: product[1] } : {}),
      ...(product?.[2] ? { version: product[2] } : {}),
      banner: first,
      identifiedBy: 'banner',
    };
  }
  if (/^\+OK\b/.test(text)) return { service: 'pop3', banner: first, identifiedBy: 'banner' };
  if (/^\* (OK|PREAUTH)\b/.test(text)) return { service: 'imap', banner: first, identifiedBy: 'banner' };
  if ((m = /^RFB (\d{3}\.\d{3})/.exec(text)))
    return { service: 'vnc', version: m[1], banner: first, identifiedBy: 'banner' };
  // Redis in protected mode refuses outsiders on connect.
  if (/^-(DENIED|NOAUTH|ERR)\b/.test(text) && /redis|protected mode|auth/i.test(text))
    return { service: 'redis', banner: first, identifiedBy: 'banner' };
  if (/^HTTP\/\d/.test(text)) return { ...fromHttp(text, false), identifiedBy: 'banner' };
  return { banner: first || printable(buf) || undefined, identifiedBy: 'none' };
}

/** Reads an HTTP answer: status, Server header, and the products that matter (Elasticsearch, Docker API). */
export function fromHttp(text: string, overTls: boolean): ServiceInfo {
  const head = text.split(/\r?\n\r?\n/)[0] ?? '';
  const lines = head.split(/\r?\n/);
  const status = /^HTTP\/\d(?:\.\d)?\s+(\d{3})/.exec(lines[0] ?? '')?.[1];
  const headers = new Map<string, string>();
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    if (i > 0) headers.set(l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim());
  }
  const server = headers.get('server');
  const data: Record<string, unknown> = {
    ...(status ? { httpStatus: Number(status) } : {}),
    ...(server ? { server: printable(server, 200) } : {}),
  };
  const banner = printable(server ? `${lines[0]} Server: ${server}` : (lines[0] ?? ''));
  if (headers.get('x-elastic-product')?.toLowerCase() === 'elasticsearch' || /elasticsearch/i.test(text))
    return {
      service: 'elasticsearch',
      product: 'Elasticsearch',
      banner,
      identifiedBy: 'probe',
      ...(overTls ? { tls: true } : {}),
      data,
    };
  if (/^docker\//i.test(server ?? '') || (headers.has('api-version') && headers.has('docker-experimental'))) {
    const version = /^docker\/(\S+)/i.exec(server ?? '')?.[1];
    return {
      service: 'docker',
      product: 'Docker API',
      ...(version ? { version } : {}),
      banner,
      identifiedBy: 'probe',
      ...(overTls ? { tls: true } : {}),
      data,
    };
  }
  const product = server ? /^([^/\s]+)(?:\/(\S+))?/.exec(server) : null;
  return {
    service: overTls ? 'https' : 'http',
    ...(product ? { product: product[1] } : {}),
    ...(product?.[2] ? { version: product[2] } : {}),
    banner,
    identifiedBy: 'probe',
    ...(overTls ? { tls: true } : {}),
    data,
  };
}

const httpRequest = (host: string) =>
  `HEAD / HTTP/1.0\r\nHost: ${host}\r\nUser-Agent: rampart-worker\r\nAccept: */*\r\n\r\n`;
const httpDone = (b: Buffer) => b.includes('\r\n\r\n') || b.includes('\n\n');

async function probeHttp(o: ProbeOptions): Promise<ServiceInfo | null> {
  const hostHeader = net.isIPv6(o.hostName) ? `[${o.hostName}]` : o.hostName;
  const answer = await exchange(o, httpRequest(o.port === 80 ? hostHeader : `${hostHeader}:${o.port}`), httpDone);
  if (!answer || !/^HTTP\/\d/.test(answer.toString('latin1'))) return null;
  return fromHttp(answer.toString('latin1'), false);
}

/** A TLS handshake (any certificate: this identifies, it does not trust); then HTTP inside it. */
async function probeTls(o: ProbeOptions): Promise<ServiceInfo | null> {
  const socket = await new Promise<tls.TLSSocket | null>((resolve) => {
    if (o.signal?.aborted) return resolve(null);
    const s = tls.connect({
      host: o.address,
      port: o.port,
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
      ...(net.isIP(o.hostName) ? {} : { servername: o.hostName }),
    });
    const timer = setTimeout(() => settle(false), o.probeTimeoutMs);
    const settle = (ok: boolean) => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      s.off('error', onError);
      if (!ok) s.destroy();
      else s.on('error', () => undefined);
      resolve(ok ? s : null);
    };
    const onError = () => settle(false);
    const onAbort = () => settle(false);
    s.once('secureConnect', () => settle(true));
    s.once('error', onError);
    o.signal?.addEventListener('abort', onAbort, { once: true });
  });
  if (!socket) return null;
  try {
    const cert = socket.getPeerCertificate();
    const subject =
      cert && typeof cert.subject === 'object' ? (cert.subject as unknown as Record<string, unknown>).CN : undefined;
    const data: Record<string, unknown> = {
      tlsProtocol: socket.getProtocol(),
      ...(socket.getCipher()?.name ? { cipher: socket.getCipher().name } : {}),
      ...(typeof subject === 'string' ? { certificateSubject: printable(subject, 200) } : {}),
      ...(cert?.valid_to ? { certificateValidTo: cert.valid_to } : {}),
    };
    // A service that speaks first inside TLS (SMTPS, IMAPS, POP3S, FTPS) answers before we ask.
    const first = await readSome(socket, Math.min(o.bannerWaitMs, o.probeTimeoutMs), lineEnd, o.signal);
    if (first.length) {
      const inner = fromBanner(first, o.port);
      if (inner?.service)
        return { ...inner, service: `ssl/${inner.service}`, tls: true, data: { ...data, ...inner.data } };
    }
    socket.write(httpRequest(o.hostName));
    const answer = await readSome(socket, o.probeTimeoutMs, httpDone, o.signal);
    if (/^HTTP\/\d/.test(answer.toString('latin1'))) {
      const http = fromHttp(answer.toString('latin1'), true);
      return {
        ...http,
        service: http.service === 'https' ? 'https' : `ssl/${http.service}`,
        tls: true,
        data: { ...data, ...http.data },
      };
    }
    return { service: 'ssl', tls: true, identifiedBy: 'probe', data };
  } finally {
    socket.destroy();
  }
}

async function probeRedis(o: ProbeOptions): Promise<ServiceInfo | null> {
  const answer = await exchange(o, '*1\r\n$4\r\nPING\r\n', lineEnd);
  const text = answer?.toString('latin1') ?? '';
  if (/^\+PONG\r?\n/.test(text))
    return { service: 'redis', banner: '+PONG', identifiedBy: 'probe', data: { authentication: 'none' } };
  if (/^-(NOAUTH|WRONGPASS|DENIED)\b/.test(text))
    return {
      service: 'redis',
      banner: printable(text.split(/\r?\n/)[0] ?? ''),
      identifiedBy: 'probe',
      data: { authentication: 'required' },
    };
  return null;
}

/** PostgreSQL answers an SSLRequest with one byte: S (TLS offered) or N. */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);
async function probePostgres(o: ProbeOptions): Promise<ServiceInfo | null> {
  const answer = await exchange(o, SSL_REQUEST, (b) => b.length >= 1);
  if (answer?.length === 1 && (answer[0] === 0x53 || answer[0] === 0x4e))
    return {
      service: 'postgresql',
      product: 'PostgreSQL',
      identifiedBy: 'probe',
      data: { sslOffered: answer[0] === 0x53 },
    };
  return null;
}

async function probeMemcached(o: ProbeOptions): Promise<ServiceInfo | null> {
  const answer = await exchange(o, 'version\r\n', lineEnd);
  const m = /^VERSION (\S+)/.exec(answer?.toString('latin1') ?? '');
  return m
    ? {
        service: 'memcached',
        product: 'memcached',
        version: m[1],
        banner: printable(`VERSION ${m[1]}`),
        identifiedBy: 'probe',
      }
    : null;
}

type Probe = (o: ProbeOptions) => Promise<ServiceInfo | null>;
const PROBES = {
  tls: probeTls,
  http: probeHttp,
  redis: probeRedis,
  postgres: probePostgres,
  memcached: probeMemcached,
} satisfies Record<string, Probe>;
type ProbeName = keyof typeof PROBES;

const TLS_PORTS = new Set([
  443, 465, 563, 636, 853, 989, 990, 992, 993, 994, 995, 2376, 4443, 5061, 5986, 6443, 8443, 9443,
]);
/**
 * Probes in the order worth trying for a port: the likeliest first; TLS before plain HTTP, since a TLS server
 * may answer plain HTTP with an HTTP error page.
 */
export function probeOrder(port: number): ProbeName[] {
  const first: ProbeName[] =
    port === 6379 || port === 6380
      ? ['redis']
      : port === 5432 || port === 5433
        ? ['postgres']
        : port === 11211
          ? ['memcached']
          : [];
  const rest: ProbeName[] = ['tls', 'http', 'redis', 'postgres'];
  if (TLS_PORTS.has(port)) rest.splice(0, 2, 'tls', 'http');
  return [...first, ...rest.filter((p) => !first.includes(p))];
}

/** What a silent port probably is, from its number alone (reported as identified by port). */
const PORT_GUESS: Record<number, string> = {
  23: 'telnet',
  135: 'msrpc',
  139: 'netbios-ssn',
  445: 'microsoft-ds',
  1433: 'ms-sql-s',
  1521: 'oracle',
  2375: 'docker',
  2376: 'docker',
  3389: 'ms-wbt-server',
  5900: 'vnc',
  5985: 'wsman',
  9200: 'elasticsearch',
  11211: 'memcached',
  27017: 'mongodb',
  27018: 'mongodb',
  27019: 'mongodb',
};

/** How long a port may stay quiet before the probes go out (its banner is still awaited in full). */
const QUIET_MS = 500;

/**
 * Identifies the service on an open port. `socket` is the scanner's own connection to it (already
 * connected); it is read for a banner and then closed. A port that has said nothing after
 * QUIET_MS gets every probe at once, each on its own connection, and the first in probeOrder()
 * that recognises the service wins: a silent port costs one probe timeout after that (about 2.5 s
 * by default), not the sum of them. A banner that arrives while they run still wins.
 */
export async function identifyService(socket: net.Socket, o: ProbeOptions): Promise<ServiceInfo> {
  const stopProbes = new AbortController();
  const onAbort = () => stopProbes.abort();
  o.signal?.addEventListener('abort', onAbort, { once: true });
  const withStop = { ...o, signal: stopProbes.signal };
  let probes: Promise<ServiceInfo | null>[] | null = null;
  const startProbes = () => (probes ??= probeOrder(o.port).map((name) => PROBES[name](withStop).catch(() => null)));
  const quiet = setTimeout(startProbes, Math.min(QUIET_MS, o.bannerWaitMs));
  try {
    let said: Buffer;
    try {
      said = await readSome(socket, o.bannerWaitMs, lineEnd, o.signal);
    } finally {
      clearTimeout(quiet);
      socket.destroy();
    }
    const byBanner = fromBanner(said, o.port);
    if (byBanner?.service) return byBanner;
    if (!o.signal?.aborted) {
      for (const probe of startProbes()) {
        const found = await probe;
        if (found) return found;
      }
    }
    const guess = PORT_GUESS[o.port];
    if (guess)
      return { service: guess, identifiedBy: 'port', ...(byBanner?.banner ? { banner: byBanner.banner } : {}) };
    return { identifiedBy: 'none', ...(byBanner?.banner ? { banner: byBanner.banner } : {}) };
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    stopProbes.abort();
  }
}
