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
  /** The groups offered for ECDHE (OpenSSL names, colon-separated); Node's default otherwise. */
  ecdhCurve?: string;
  /** After the handshake (TLS 1.2 and below), ask the server to renegotiate. */
  renegotiate?: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** The server's ephemeral key of the key exchange: DH with its group size, or ECDH with its curve. */
export interface EphemeralKey {
  type: 'DH' | 'ECDH';
  /** The curve (ECDH): prime256v1, X25519, secp160r1 ... */
  name?: string;
  /** Bits: the DH prime's, or the curve's. */
  size: number;
}

export type HandshakeResult =
  | {
      ok: true;
      protocol: string;
      cipher: string;
      standardName: string;
      chain: X509Certificate[];
      ephemeral?: EphemeralKey;
      /** Whether the server completed a renegotiation the client started (when asked for one). */
      renegotiated?: boolean;
    }
  | { ok: false; reason: 'refused' | 'timeout' | 'tls-error'; message: string };

/** Every suite and protocol OpenSSL still has, keys and signatures of any size accepted. */
export const PERMISSIVE_CIPHERS = 'ALL:COMPLEMENTOFALL:@SECLEVEL=0';

export function handshake(o: HandshakeOptions): Promise<HandshakeResult> {
  return new Promise((resolve) => {
    if (o.signal?.aborted) return resolve({ ok: false, reason: 'timeout', message: 'cancelled' });
    let socket: tls.TLSSocket;
    try {
      socket = tls.connect({
        host: o.address,
        port: o.port,
        ...(o.serverName && !net.isIP(o.serverName) ? { servername: o.serverName } : {}),
        minVersion: o.minVersion,
        maxVersion: o.maxVersion,
        ciphers: o.ciphers ?? PERMISSIVE_CIPHERS,
        ...(o.ecdhCurve ? { ecdhCurve: o.ecdhCurve } : {}),
        rejectUnauthorized: false,
        // Hostname checks are certificate.ts's; here they would only hide the chain's own verdict.
        checkServerIdentity: () => undefined,
      });
    } catch (e) {
      // An option this OpenSSL refuses (a curve it does not know): no handshake.
      return resolve({
        ok: false,
        reason: 'tls-error',
        message: e instanceof Error ? e.message.slice(0, 300) : String(e),
      });
    }
    const finish = (r: HandshakeResult) => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(r);
    };
    const timer = setTimeout(
      () => finish({ ok: false, reason: 'timeout', message: `no handshake within ${o.timeoutMs} ms` }),
      o.timeoutMs,
    );
    const onAbort = () => finish({ ok: false, reason: 'timeout', message: 'cancelled' });
    o.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('secureConnect', () => {
      const cipher = socket.getCipher();
      const protocol = socket.getProtocol() ?? o.maxVersion;
      // An empty object when the exchange had no ephemeral key (static RSA).
      const key: { type?: string; name?: string; size?: number } = socket.getEphemeralKeyInfo() ?? {};
      const ephemeral: EphemeralKey | undefined =
        (key.type === 'DH' || key.type === 'ECDH') && typeof key.size === 'number'
          ? { type: key.type, ...(key.name ? { name: key.name } : {}), size: key.size }
          : undefined;
      const done = {
        ok: true as const,
        protocol,
        cipher: cipher.name,
        standardName: cipher.standardName,
        chain: peerChain(socket),
        ...(ephemeral ? { ephemeral } : {}),
      };
      if (!o.renegotiate || protocol === 'TLSv1.3') return finish(done);
      // A server that refuses answers with a no_renegotiation alert or closes the connection; one
      // that accepts completes a second handshake (secure renegotiation, RFC 5746: OpenSSL 3 asks
      // for nothing else).
      socket.removeAllListeners('error');
      socket.on('error', () => finish({ ...done, renegotiated: false }));
      socket.once('close', () => finish({ ...done, renegotiated: false }));
      const started = socket.renegotiate({ rejectUnauthorized: false }, (err) =>
        finish({ ...done, renegotiated: !err }),
      );
      if (!started) finish({ ...done, renegotiated: false });
    });
    socket.once('error', (e: NodeJS.ErrnoException) => {
      const code = e.code ?? '';
      if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH')
        return finish({ ok: false, reason: 'refused', message: code });
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
      if (signal.aborted)
        throw signal.reason instanceof Error
          ? signal.reason
          : Object.assign(new Error('The scan was cancelled'), { name: 'AbortError' });
      return await fn();
    } finally {
      active -= 1;
      waiting.shift()?.();
    }
  };
}
export type Limiter = ReturnType<typeof limiter>;
