// The server's certificate judged on its own terms: a path to a trust anchor (Node's root store plus
// any configured CA), dates, hostname, key size and signature hash. Trust is decided here rather than
// read from OpenSSL's verify result, which reports one error per chain: an expired certificate from
// an unknown CA must show as both.
import { X509Certificate } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';

const DAY_MS = 86_400_000;

export type TrustProblem = 'self-signed' | 'unknown-issuer' | 'untrusted-root';
export type KeyStrength = 'ok' | 'weak' | 'insecure';
export type SignatureStrength = 'ok' | 'sha1' | 'md5';

export interface CertificateReport {
  subject: string;
  issuer: string;
  serialNumber: string;
  fingerprint256: string;
  subjectAltName?: string;
  validFrom: string;
  validTo: string;
  /** Whole days until expiry; negative once expired. */
  daysLeft: number;
  expired: boolean;
  notYetValid: boolean;
  /** The name checked (SNI or target) and whether the certificate covers it. */
  hostname: { name: string; matches: boolean };
  key: { type: string; bits: number; curve?: string; strength: KeyStrength };
  signature: {
    algorithm: string;
    strength: SignatureStrength;
    /** The certificate whose signature is weakest. */ subject: string;
  };
  trusted: boolean;
  trustProblem?: TrustProblem;
  selfSigned: boolean;
  /** The path found, leaf first, ending at the anchor when trusted. */
  path: {
    subject: string;
    issuer: string;
    validTo: string;
    anchor: boolean;
    fingerprint256: string;
    /** Not sent by the server: fetched (AIA). */ fetched?: boolean;
  }[];
  /** Certificates the server sent, leaf first. */
  presented: number;
  /** The server left out intermediates the path needed: they were fetched from the chain's AIA URLs. */
  chainIncomplete?: boolean;
}

let systemRoots: X509Certificate[] | undefined;

/** Node's bundled root store, parsed once per process. */
function roots(): X509Certificate[] {
  systemRoots ??= tls.rootCertificates.map((pem) => new X509Certificate(pem));
  return systemRoots;
}

/** Certificates from PEM text (one or many per string, as a CA bundle file holds them). */
export function parsePemCertificates(pems: readonly string[]): X509Certificate[] {
  const out: X509Certificate[] = [];
  for (const pem of pems) {
    for (const block of pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [])
      out.push(new X509Certificate(block));
  }
  return out;
}

/** Trust anchors for a scan: the system roots plus extra CA certificates (PEM). */
export function trustAnchors(extraPem: readonly string[] = []): X509Certificate[] {
  return [...roots(), ...parsePemCertificates(extraPem)];
}

const CURVE_BITS: Record<string, number> = {
  prime192v1: 192,
  secp224r1: 224,
  prime256v1: 256,
  secp256k1: 256,
  secp384r1: 384,
  secp521r1: 521,
  brainpoolP256r1: 256,
  brainpoolP384r1: 384,
  brainpoolP512r1: 512,
};

function keyOf(cert: X509Certificate): CertificateReport['key'] {
  const k = cert.publicKey;
  const type = k.asymmetricKeyType ?? 'unknown';
  const d = k.asymmetricKeyDetails ?? {};
  if (type === 'rsa' || type === 'rsa-pss' || type === 'dsa') {
    const bits = d.modulusLength ?? 0;
    return { type, bits, strength: bits < 1024 ? 'insecure' : bits < 2048 ? 'weak' : 'ok' };
  }
  if (type === 'ec') {
    const curve = d.namedCurve ?? 'unknown';
    const bits = CURVE_BITS[curve] ?? 0;
    return { type, bits, curve, strength: bits < 160 ? 'insecure' : bits < 256 ? 'weak' : 'ok' };
  }
  return { type, bits: type === 'ed448' ? 456 : 256, strength: 'ok' };
}

function signatureStrength(cert: X509Certificate): SignatureStrength {
  const name = `${cert.signatureAlgorithm ?? ''} ${cert.signatureAlgorithmOid}`.toLowerCase();
  // md2/md5 with RSA: 1.2.840.113549.1.1.2 and .4; SHA-1: 1.2.840.113549.1.1.5, ECDSA 1.2.840.10045.4.1, DSA 1.2.840.10040.4.3.
  if (/\bmd[245]/.test(name) || /\b1\.2\.840\.113549\.1\.1\.[24]\b/.test(name)) return 'md5';
  if (
    /sha-?1(?!\d)/.test(name) ||
    /\b(1\.2\.840\.113549\.1\.1\.5|1\.2\.840\.10045\.4\.1|1\.2\.840\.10040\.4\.3)\b/.test(name)
  )
    return 'sha1';
  return 'ok';
}

const issuedBy = (cert: X509Certificate, issuer: X509Certificate) =>
  cert.checkIssued(issuer) && cert.verify(issuer.publicKey);

/** A path from the leaf to an anchor, dates ignored (they are judged on their own). */
function buildPath(
  chain: X509Certificate[],
  anchors: X509Certificate[],
): { path: { cert: X509Certificate; anchor: boolean }[]; trusted: boolean; problem?: TrustProblem } {
  const anchorPrints = new Set(anchors.map((a) => a.fingerprint256));
  const path: { cert: X509Certificate; anchor: boolean }[] = [];
  let current = chain[0]!;
  for (let depth = 0; depth < 10; depth += 1) {
    if (anchorPrints.has(current.fingerprint256)) {
      path.push({ cert: current, anchor: true });
      return { path, trusted: true };
    }
    path.push({ cert: current, anchor: false });
    const anchor = anchors.find((a) => issuedBy(current, a));
    if (anchor) {
      path.push({ cert: anchor, anchor: true });
      return { path, trusted: true };
    }
    if (issuedBy(current, current))
      return { path, trusted: false, problem: path.length === 1 ? 'self-signed' : 'untrusted-root' };
    const next = chain.find(
      (c) =>
        c !== current && c.ca && !path.some((p) => p.cert.fingerprint256 === c.fingerprint256) && issuedBy(current, c),
    );
    if (!next) return { path, trusted: false, problem: 'unknown-issuer' };
    current = next;
  }
  return { path, trusted: false, problem: 'unknown-issuer' };
}

/**
 * The chain the server sent (leaf first), judged against the anchors. `fetched` are intermediates
 * found elsewhere (AIA): a path that needs one is trusted but marked chainIncomplete.
 */
export function analyzeCertificate(
  chain: X509Certificate[],
  anchors: X509Certificate[],
  name: string,
  now = new Date(),
  fetched: X509Certificate[] = [],
): CertificateReport {
  const leaf = chain[0]!;
  const { path, trusted, problem } = buildPath([...chain, ...fetched], anchors);
  const sent = new Set(chain.map((x) => x.fingerprint256));
  const chainIncomplete = trusted && path.some((p) => !p.anchor && !sent.has(p.cert.fingerprint256));
  const validTo = leaf.validToDate;
  const validFrom = leaf.validFromDate;
  // Signatures that matter: every certificate on the path below the anchor (an anchor's own signature is not checked by clients).
  const signed = path.filter((p) => !p.anchor).map((p) => p.cert);
  const rank: Record<SignatureStrength, number> = { ok: 0, sha1: 1, md5: 2 };
  let weakest = leaf;
  for (const c of signed) if (rank[signatureStrength(c)] > rank[signatureStrength(weakest)]) weakest = c;
  return {
    subject: oneLine(leaf.subject),
    issuer: oneLine(leaf.issuer),
    serialNumber: leaf.serialNumber,
    fingerprint256: leaf.fingerprint256,
    ...(leaf.subjectAltName ? { subjectAltName: leaf.subjectAltName } : {}),
    validFrom: validFrom.toISOString(),
    validTo: validTo.toISOString(),
    daysLeft: Math.floor((validTo.getTime() - now.getTime()) / DAY_MS),
    expired: now > validTo,
    notYetValid: now < validFrom,
    hostname: { name, matches: net.isIP(name) ? leaf.checkIP(name) !== undefined : leaf.checkHost(name) !== undefined },
    key: keyOf(leaf),
    signature: {
      algorithm: weakest.signatureAlgorithm ?? weakest.signatureAlgorithmOid,
      strength: signatureStrength(weakest),
      subject: oneLine(weakest.subject),
    },
    trusted,
    ...(problem ? { trustProblem: problem } : {}),
    selfSigned: problem === 'self-signed',
    path: path.map((p) => ({
      subject: oneLine(p.cert.subject),
      issuer: oneLine(p.cert.issuer),
      validTo: p.cert.validToDate.toISOString(),
      anchor: p.anchor,
      fingerprint256: p.cert.fingerprint256,
      ...(!p.anchor && !sent.has(p.cert.fingerprint256) ? { fetched: true } : {}),
    })),
    presented: chain.length,
    ...(chainIncomplete ? { chainIncomplete } : {}),
  };
}

/** X.509 names print one attribute per line; findings want them on one. */
const oneLine = (dn: string) => dn.split('\n').filter(Boolean).join(', ');
