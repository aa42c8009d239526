// Full handshakes through Node's TLS (OpenSSL 3): one protocol version at a time, at security level
// 0 so OpenSSL offers TLS 1.0/1.1 and accepts small keys and SHA-1 chains instead of refusing to
// look. Certificates are never trusted here (rejectUnauthorized: false); certificate.ts judges them.
import { X509Certificate } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';

export type TlsVersion = 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';

export interface HandshakeOptions {
  address: string;
  port: number;
  /** SNI; left out for an IP address (RFC 6066 forbids it). */
  serverName?: string;
  minVersion: TlsVersion;
  maxVersion: TlsVersion;
  /** OpenSSL cipher string; TLS 1.3 suite names (TLS_AES_…) select TLS 1.3 suites. */
  ciphers?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export type HandshakeResult =
  | { ok: true; protocol: string; cipher: string; standardName: string; chain: X509Certificate[] }
  | { ok: false; reason: 'refused' | 'timeout' | 'tls-error'; message: string };

/** Every suite and protocol OpenSSL still has, keys and signatures of any size accepted. */
export const PERMISSIVE_CIPHERS = 'ALL:COMPLEMENTOFALL:@SECLEVEL=0';

export function handshake(o: HandshakeOptions): Promise<HandshakeResult> {
  return new Promise((resolve) => {
    if (o.signal?.aborted) return resolve({ ok: false, reason: 'timeout', message: 'cancelled' });
    const socket = tls.connect({
      host: o.address,
      port: o.port,
      ...(o.serverName && !net.isIP(o.serverName) ? { servername: o.serverName } : {}),
      minVersion: o.minVersion,
      maxVersion: o.maxVersion,
      ciphers: o.ciphers ?? PERMISSIVE_CIPHERS,
      rejectUnauthorized: false,
      // Hostname checks are certificate.ts's; here they would only hide the chain's own verdict.
      checkServerIdentity: () => undefined,
    });
    const finish = (r: HandshakeResult) => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => finish({ ok: false, reason: 'timeout', message: `no handshake within ${o.timeoutMs} ms` }), o.timeoutMs);
    const onAbort = () => finish({ ok: false, reason: 'timeout', message: 'cancelled' });
    o.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('secureConnect', () => {
      const cipher = socket.getCipher();
      finish({ ok: true, protocol: socket.getProtocol() ?? o.maxVersion, cipher: cipher.name, standardName: cipher.standardName, chain: peerChain(socket) });
    });
    socket.once('error', (e: NodeJS.ErrnoException) => {
      const code = e.code ?? '';
      if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return finish({ ok: false, reason: 'refused', message: code });
      finish({ ok: false, reason: 'tls-error', message: e.message.split('\n')[0]!.slice(0, 300) });
    });
  });
}

/** The certificates the server sent, leaf first (Node links them through issuerCertificate). */
function peerChain(socket: tls.TLSSocket): X509Certificate[] {
  const out: X509Certificate[] = [];
  const seen = new Set<string>();
  let cert: tls.DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  while (cert?.raw && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    out.push(new X509Certificate(cert.raw));
    cert = cert.issuerCertificate;
  }
  return out;
}

/** A counting semaphore: at most `size` handshakes in flight for one scan. */
export function limiter(size: number, signal: AbortSignal) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async function run<T>(fn: () => Promise<T>): Promise<T> {
    if (active >= size) await new Promise<void>((r) => waiting.push(r));
    active += 1;
    try {
      if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : Object.assign(new Error('The scan was cancelled'), { name: 'AbortError' });
      return await fn();
    } finally {
      active -= 1;
      waiting.shift()?.();
    }
  };
}
export type Limiter = ReturnType<typeof limiter>;
