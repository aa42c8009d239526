// Checks of a TLS port beyond protocols and suites, each by a full Node handshake (OpenSSL 3 at
// security level 0): the server's ephemeral keys (the DH group of its DHE suites, the curve it
// picks, whether it accepts a small curve), whether it lets the client renegotiate, and the
// issuers a certificate chain sent without its intermediates names in its AIA extension.
import { X509Certificate } from 'node:crypto';
import net from 'node:net';
import type { EgressPolicy } from '../../../lib/egress.ts';
import { createScopedHttp, HttpTransportError } from '../http/scoped-http.ts';
import { parsePemCertificates } from './certificate.ts';
import type { HandshakeOptions, HandshakeResult, TlsVersion } from './handshake.ts';

/** Curves under 224 bits (RSA-2048 strength, NIST SP 800-57) a server may still accept in TLS 1.2. */
export const SMALL_CURVES = [
  'secp160k1',
  'secp160r1',
  'secp160r2',
  'secp192k1',
  'prime192v1',
  'secp224k1',
  'secp224r1',
] as const;
const CURVE_BITS: Record<string, number> = {
  secp160k1: 160,
  secp160r1: 160,
  secp160r2: 160,
  secp192k1: 192,
  prime192v1: 192,
  secp224k1: 224,
  secp224r1: 224,
  prime256v1: 256,
  secp256k1: 256,
  secp384r1: 384,
  secp521r1: 521,
  X25519: 253,
  X448: 448,
  brainpoolP256r1: 256,
  brainpoolP384r1: 384,
  brainpoolP512r1: 512,
};

export interface KeyExchangeReport {
  /** The DH group of the server's DHE suites, from a handshake offering only those. */
  dh?: { bits: number };
  /** The curve the server picks when offered the usual groups (its best handshake). */
  ecdh?: { curve: string; bits: number };
  /** A curve under 224 bits the server accepts when a client offers nothing else. */
  smallCurve?: { curve: string; bits: number };
  /** Why a key exchange could not be measured. */
  notes: string[];
}

export type Handshake = (
  version: TlsVersion,
  o?: Pick<HandshakeOptions, 'ciphers' | 'ecdhCurve' | 'renegotiate'>,
) => Promise<HandshakeResult>;

const curveOf = (name: string | undefined, size: number) => ({
  curve: name ?? `${size}-bit curve`,
  bits: (name && CURVE_BITS[name]) || size,
});

/**
 * The server's ephemeral keys. `legacy` is the best protocol below TLS 1.3 that Node can speak
 * with this server (DHE and the small curves are TLS 1.2-and-below matters); `best` are its
 * handshakes, best protocol first.
 */
export async function keyExchange(
  run: Handshake,
  o: { legacy: TlsVersion | undefined; best: (HandshakeResult | undefined)[]; dhe: boolean; ecdhe: boolean },
): Promise<KeyExchangeReport> {
  const report: KeyExchangeReport = { notes: [] };
  // Node reports the key of TLS 1.2 and older handshakes only: the first of the best that has one.
  const ecdh = o.best.map((h) => (h?.ok ? h.ephemeral : undefined)).find((k) => k?.type === 'ECDH');
  if (ecdh) report.ecdh = curveOf(ecdh.name, ecdh.size);
  if (!o.legacy) return report;
  const [dhe, small] = await Promise.all([
    o.dhe ? run(o.legacy, { ciphers: 'kDHE:!aNULL:@SECLEVEL=0' }) : undefined,
    o.ecdhe ? run(o.legacy, { ciphers: 'kECDHE:!aNULL:@SECLEVEL=0', ecdhCurve: SMALL_CURVES.join(':') }) : undefined,
  ]);
  if (dhe?.ok && dhe.ephemeral?.type === 'DH') report.dh = { bits: dhe.ephemeral.size };
  else if (dhe)
    report.notes.push(
      `the DH group could not be read: no DHE handshake completed (${dhe.ok ? 'no ephemeral key' : dhe.message})`,
    );
  if (small?.ok && small.ephemeral?.type === 'ECDH')
    report.smallCurve = curveOf(small.ephemeral.name, small.ephemeral.size);
  return report;
}

/** Whether the server completes a renegotiation the client starts: null when no TLS ≤ 1.2 handshake completes. */
export async function clientRenegotiation(run: Handshake, legacy: TlsVersion | undefined): Promise<boolean | null> {
  if (!legacy) return null;
  const r = await run(legacy, { renegotiate: true });
  return r.ok ? (r.renegotiated ?? false) : null;
}

/** Issuer URLs of a certificate's Authority Information Access extension (http and https only). */
export function caIssuerUrls(cert: X509Certificate): string[] {
  const out: string[] = [];
  for (const m of (cert.infoAccess ?? '').matchAll(/CA Issuers - URI:(\S+)/g))
    if (/^https?:\/\//i.test(m[1]!)) out.push(m[1]!);
  return out;
}

/**
 * May the worker fetch this issuer URL? A chain's AIA URL is chosen by whoever made the
 * certificate, so it is fetched only on the scanned host itself, or by host name (never an IP
 * address literal) on the web's default ports: a public CA's issuer URL, not an arbitrary address.
 */
export function issuerUrlAllowed(url: URL, scannedHost: string): boolean {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === scannedHost.toLowerCase()) return true;
  return !net.isIP(host) && host.includes('.') && (url.port === '' || url.port === '80' || url.port === '443');
}

const MAX_ISSUER_BYTES = 64 * 1024;
/** Intermediates fetched at most to complete one chain. */
export const MAX_FETCHED_ISSUERS = 3;

/**
 * Fetches the missing issuers of a chain along AIA "CA Issuers" links, from `from` upwards, at
 * most MAX_FETCHED_ISSUERS, each a DER or PEM certificate of at most 64 KiB. Failures end the walk
 * quietly: the chain then stays untrusted, as a client without AIA fetching sees it.
 */
export async function fetchIssuers(
  from: X509Certificate,
  o: { scannedHost: string; timeoutMs: number; signal: AbortSignal; egress?: EgressPolicy },
): Promise<{ certs: X509Certificate[]; notes: string[] }> {
  const certs: X509Certificate[] = [];
  const notes: string[] = [];
  let current = from;
  for (let i = 0; i < MAX_FETCHED_ISSUERS; i += 1) {
    const url = caIssuerUrls(current)[0];
    if (!url) break;
    const u = new URL(url);
    if (!issuerUrlAllowed(u, o.scannedHost)) {
      notes.push(`the issuer URL ${url} was not fetched (only host names on ports 80 and 443, or the scanned host)`);
      break;
    }
    const http = createScopedHttp({
      inScope: (x) => x.origin === u.origin,
      signal: o.signal,
      timeoutMs: o.timeoutMs,
      concurrency: 1,
      ratePerSecond: 5,
      ...(o.egress ? { egress: o.egress } : {}),
    });
    let issuer: X509Certificate | undefined;
    try {
      const res = await http.request({ url: u.href, maxBodyBytes: MAX_ISSUER_BYTES, maxRedirects: 2 });
      if (res.status === 200) issuer = parseIssuer(res.body);
      if (!issuer) notes.push(`the issuer URL ${url} answered ${res.status} without a certificate`);
    } catch (e) {
      if (!(e instanceof HttpTransportError)) throw e;
      notes.push(`the issuer URL ${url} could not be fetched: ${e.message.slice(0, 200)}`);
    } finally {
      http.close();
    }
    if (!issuer || !current.checkIssued(issuer) || !current.verify(issuer.publicKey)) break;
    certs.push(issuer);
    if (issuer.checkIssued(issuer)) break;
    current = issuer;
  }
  return { certs, notes };
}

function parseIssuer(body: Buffer): X509Certificate | undefined {
  try {
    if (body[0] === 0x30) return new X509Certificate(body);
    return parsePemCertificates([body.toString('latin1')])[0];
  } catch {
    return undefined;
  }
}
