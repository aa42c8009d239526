// A per-port grade from testssl's caps (set_grade_cap; research notes §7): each problem caps the
// grade and the worst cap wins. Only A–F are reported: trust problems (testssl's T) and a hostname
// mismatch (M) cap at F, and `gradeIgnoringTrust` gives what SSL Labs shows as "if trust issues are
// ignored". Scores (SSL Labs' 30/30/40 weighting) are not computed: caps alone decide.
import { cipherWeaknesses, type CipherSuite, type CipherWeakness } from './cipher-suites.ts';
import type { CertificateReport } from './certificate.ts';

export const GRADES = ['A', 'A-', 'B', 'C', 'F'] as const;
export type Grade = (typeof GRADES)[number];

export interface GradeCap {
  /** Stable identifier of the cause, e.g. tls10, sweet32, cert-expired. */
  code: string;
  grade: Grade;
  reason: string;
  /** A trust or hostname problem (testssl's T and M): left out of gradeIgnoringTrust. */
  trust: boolean;
}

export interface GradeResult {
  grade: Grade;
  gradeIgnoringTrust: Grade;
  caps: GradeCap[];
}

export interface GradeInput {
  protocols: { SSLv2: boolean; SSLv3: boolean; TLSv1: boolean; 'TLSv1.1': boolean; 'TLSv1.2': boolean; 'TLSv1.3': boolean };
  /** Every suite accepted, all protocols together (TLS 1.3 suites included). */
  suites: CipherSuite[];
  certificate?: CertificateReport;
  /** HSTS on the HTTPS answer; absent when the port did not answer HTTP. */
  hsts?: { maxAge?: number };
}

/** HSTS shorter than this is a warning (testssl's HSTS_MIN, 180 days). */
export const HSTS_MIN_SECONDS = 15_552_000;

const worse = (a: Grade, b: Grade): Grade => (GRADES.indexOf(a) >= GRADES.indexOf(b) ? a : b);

export function gradePort(input: GradeInput): GradeResult {
  const caps: GradeCap[] = [];
  const cap = (code: string, grade: Grade, reason: string, trust = false) => caps.push({ code, grade, reason, trust });
  const p = input.protocols;

  if (p.SSLv2) cap('sslv2', 'F', 'SSLv2 is offered');
  if (p.SSLv3) cap('sslv3', 'F', 'SSLv3 is offered (POODLE)');
  const weak = (w: CipherWeakness) => input.suites.filter((s) => cipherWeaknesses(s).includes(w)).map((s) => s.name);
  const list = (names: string[]) => `${names.slice(0, 3).join(', ')}${names.length > 3 ? ` and ${names.length - 3} more` : ''}`;
  for (const [w, code, what] of [
    ['export', 'export-cipher', 'export-grade suites'],
    ['null', 'null-cipher', 'NULL (unencrypted) suites'],
    ['anonymous', 'anonymous-cipher', 'anonymous (unauthenticated) suites'],
    ['under-112-bit', 'cipher-under-112-bit', 'suites under 112 bits'],
  ] as const) {
    const names = weak(w);
    if (names.length) cap(code, 'F', `${what} accepted: ${list(names)}`);
  }

  const c = input.certificate;
  if (c) {
    if (c.signature.strength === 'md5') cap('md5-signature', 'F', `the certificate chain is signed with MD5/MD2 (${c.signature.algorithm})`);
    if (c.key.strength === 'insecure') cap('insecure-key', 'F', `the certificate key is insecure (${c.key.type} ${c.key.bits} bits)`);
    if (c.expired) cap('cert-expired', 'F', `the certificate expired on ${c.validTo.slice(0, 10)}`, true);
    if (c.notYetValid) cap('cert-not-yet-valid', 'F', `the certificate is not valid before ${c.validFrom.slice(0, 10)}`, true);
    if (c.selfSigned) cap('cert-self-signed', 'F', 'the certificate is self-signed', true);
    else if (!c.trusted) cap('cert-untrusted', 'F', `the certificate chain does not lead to a trusted root (${c.trustProblem ?? 'unknown issuer'})`, true);
    if (c.signature.strength === 'sha1') cap('sha1-signature', 'F', `the certificate chain is signed with SHA-1 (${c.signature.algorithm})`, true);
    if (!c.hostname.matches) cap('hostname-mismatch', 'F', `the certificate does not cover ${c.hostname.name}`, true);
    if (c.key.strength === 'weak') cap('weak-key', 'B', `the certificate key is weak (${c.key.type} ${c.key.bits} bits)`);
  }

  if (!p['TLSv1.2'] && !p['TLSv1.3']) cap('no-tls12', 'C', 'neither TLS 1.2 nor TLS 1.3 is offered');
  const sweet = weak('sweet32');
  if (sweet.length) cap('sweet32', 'C', `64-bit block ciphers accepted (SWEET32): ${list(sweet)}`);
  if (p.TLSv1) cap('tls10', 'B', 'TLS 1.0 is offered');
  if (p['TLSv1.1']) cap('tls11', 'B', 'TLS 1.1 is offered');
  const rc4 = weak('rc4');
  if (rc4.length) cap('rc4', 'B', `RC4 suites accepted: ${list(rc4)}`);
  if (input.suites.length && !input.suites.some((s) => s.forwardSecrecy)) cap('no-forward-secrecy', 'B', 'no suite with forward secrecy is accepted');
  if (input.suites.length && !input.suites.some((s) => s.aead)) cap('no-aead', 'B', 'no AEAD suite (GCM, CCM, ChaCha20-Poly1305) is accepted');

  if (!p['TLSv1.3']) cap('no-tls13', 'A-', 'TLS 1.3 is not offered');
  if (input.hsts) {
    if (input.hsts.maxAge === undefined || input.hsts.maxAge === 0) cap('no-hsts', 'A-', 'no HSTS on the HTTPS answer');
    else if (input.hsts.maxAge < HSTS_MIN_SECONDS) cap('hsts-short', 'A-', `HSTS max-age ${input.hsts.maxAge} s is under 180 days`);
  }

  let grade: Grade = 'A';
  let gradeIgnoringTrust: Grade = 'A';
  for (const k of caps) {
    grade = worse(grade, k.grade);
    if (!k.trust) gradeIgnoringTrust = worse(gradeIgnoringTrust, k.grade);
  }
  return { grade, gradeIgnoringTrust, caps };
}
