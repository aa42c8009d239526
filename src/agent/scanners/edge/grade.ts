// A per-port grade from SSL Labs' rating guide (2009q) as testssl.sh applies it (set_grade_cap):
// each problem caps the grade and the worst cap wins; A+ rewards a configuration with no cap at
// all and HSTS of at least 180 days. Trust problems (SSL Labs' T) and a hostname mismatch (M) cap
// at F, and `gradeIgnoringTrust` gives what SSL Labs shows as "if trust issues are ignored".
// Scores (the 30/30/40 weighting) are not computed: caps alone decide. The table is in
// docs/scanners.md.
import { cipherWeaknesses, type CipherSuite, type CipherWeakness } from './cipher-suites.ts';
import type { CertificateReport } from './certificate.ts';
import type { KeyExchangeReport } from './extra-checks.ts';

export const GRADES = ['A+', 'A', 'A-', 'B', 'C', 'F'] as const;
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
  protocols: {
    SSLv2: boolean;
    SSLv3: boolean;
    TLSv1: boolean;
    'TLSv1.1': boolean;
    'TLSv1.2': boolean;
    'TLSv1.3': boolean;
  };
  /** Every suite accepted, all protocols together (TLS 1.3 suites included). */
  suites: CipherSuite[];
  certificate?: CertificateReport;
  /** HSTS on the HTTPS answer; absent when the port did not answer HTTP. */
  hsts?: { maxAge?: number };
  /** Suites accepted over SSLv3 (POODLE needs a CBC one). */
  sslv3Suites?: CipherSuite[];
  /** The server's ephemeral keys (DH group, curves). */
  keyExchange?: Pick<KeyExchangeReport, 'dh' | 'ecdh' | 'smallCurve'>;
  /** The server completes renegotiations the client starts. */
  clientRenegotiation?: boolean;
  /** The server enforces its own suite order (false: it follows the client's). */
  serverPreference?: boolean;
}

/** Quality of a suite for the cipher-order check: weak, no forward secrecy or no AEAD, strong. */
export function suiteQuality(s: CipherSuite): 0 | 1 | 2 {
  if (cipherWeaknesses(s).length) return 0;
  return s.forwardSecrecy && s.aead ? 2 : 1;
}

/** DH group and curve sizes as SSL Labs caps them (RSA-equivalent strength, NIST SP 800-57). */
export const KEY_EXCHANGE_LIMITS = { dh: { insecure: 1024, weak: 2048 }, ecdh: { insecure: 160, weak: 224 } } as const;

/** HSTS shorter than this is a warning (testssl's HSTS_MIN, 180 days). */
export const HSTS_MIN_SECONDS = 15_552_000;

const worse = (a: Grade, b: Grade): Grade => (GRADES.indexOf(a) >= GRADES.indexOf(b) ? a : b);

export function gradePort(input: GradeInput): GradeResult {
  const caps: GradeCap[] = [];
  const cap = (code: string, grade: Grade, reason: string, trust = false) => caps.push({ code, grade, reason, trust });
  const p = input.protocols;

  if (p.SSLv2) cap('sslv2', 'F', 'SSLv2 is offered');
  if (p.SSLv3) {
    const tls = p.TLSv1 || p['TLSv1.1'] || p['TLSv1.2'] || p['TLSv1.3'];
    if (!tls) cap('sslv3-best', 'F', 'SSLv3 is the best protocol offered');
    const cbc = (input.sslv3Suites ?? []).filter((s) => /_CBC_/.test(s.name)).map((s) => s.name);
    if (cbc.length) cap('poodle', 'C', `SSLv3 is offered with CBC suites (POODLE): ${cbc.slice(0, 3).join(', ')}`);
    cap('sslv3', 'B', 'SSLv3 is offered');
  }
  const weak = (w: CipherWeakness) => input.suites.filter((s) => cipherWeaknesses(s).includes(w)).map((s) => s.name);
  const list = (names: string[]) =>
    `${names.slice(0, 3).join(', ')}${names.length > 3 ? ` and ${names.length - 3} more` : ''}`;
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
    if (c.signature.strength === 'md5')
      cap('md5-signature', 'F', `the certificate chain is signed with MD5/MD2 (${c.signature.algorithm})`);
    if (c.key.strength === 'insecure')
      cap('insecure-key', 'F', `the certificate key is insecure (${c.key.type} ${c.key.bits} bits)`);
    if (c.expired) cap('cert-expired', 'F', `the certificate expired on ${c.validTo.slice(0, 10)}`, true);
    if (c.notYetValid)
      cap('cert-not-yet-valid', 'F', `the certificate is not valid before ${c.validFrom.slice(0, 10)}`, true);
    if (c.selfSigned) cap('cert-self-signed', 'F', 'the certificate is self-signed', true);
    else if (!c.trusted)
      cap(
        'cert-untrusted',
        'F',
        `the certificate chain does not lead to a trusted root (${c.trustProblem ?? 'unknown issuer'})`,
        true,
      );
    if (c.signature.strength === 'sha1')
      cap('sha1-signature', 'F', `the certificate chain is signed with SHA-1 (${c.signature.algorithm})`, true);
    if (!c.hostname.matches) cap('hostname-mismatch', 'F', `the certificate does not cover ${c.hostname.name}`, true);
    if (c.key.strength === 'weak')
      cap('weak-key', 'B', `the certificate key is weak (${c.key.type} ${c.key.bits} bits)`);
    if (c.chainIncomplete)
      cap(
        'incomplete-chain',
        'B',
        'the server does not send the intermediate certificates (clients that do not fetch them fail)',
      );
  }

  const kx = input.keyExchange;
  const L = KEY_EXCHANGE_LIMITS;
  if (kx?.dh && kx.dh.bits < L.dh.insecure)
    cap(
      'insecure-dh',
      'F',
      `DHE suites use a ${kx.dh.bits}-bit DH group (Logjam; under ${L.dh.insecure} bits is insecure)`,
    );
  else if (kx?.dh && kx.dh.bits < L.dh.weak)
    cap('weak-dh', 'B', `DHE suites use a ${kx.dh.bits}-bit DH group (Logjam; under ${L.dh.weak} bits is weak)`);
  const curves = [kx?.ecdh, kx?.smallCurve].filter((x) => x !== undefined).sort((a, b) => a.bits - b.bits);
  const smallest = curves[0];
  if (smallest && smallest.bits < L.ecdh.insecure)
    cap(
      'insecure-ecdh',
      'F',
      `ECDHE with the ${smallest.bits}-bit curve ${smallest.curve} is accepted (under ${L.ecdh.insecure} bits is insecure)`,
    );
  else if (smallest && smallest.bits < L.ecdh.weak)
    cap(
      'weak-ecdh',
      'B',
      `ECDHE with the ${smallest.bits}-bit curve ${smallest.curve} is accepted (under ${L.ecdh.weak} bits is weak)`,
    );

  if (!p['TLSv1.2'] && !p['TLSv1.3']) cap('no-tls12', 'C', 'neither TLS 1.2 nor TLS 1.3 is offered');
  const sweet = weak('sweet32');
  if (sweet.length) cap('sweet32', 'C', `64-bit block ciphers accepted (SWEET32): ${list(sweet)}`);
  if (p.TLSv1) cap('tls10', 'B', 'TLS 1.0 is offered');
  if (p['TLSv1.1']) cap('tls11', 'B', 'TLS 1.1 is offered');
  const rc4 = weak('rc4');
  if (rc4.length) cap('rc4', 'B', `RC4 suites accepted: ${list(rc4)}`);
  if (input.suites.length && !input.suites.some((s) => s.forwardSecrecy))
    cap('no-forward-secrecy', 'B', 'no suite with forward secrecy is accepted');
  if (input.suites.length && !input.suites.some((s) => s.aead))
    cap('no-aead', 'B', 'no AEAD suite (GCM, CCM, ChaCha20-Poly1305) is accepted');

  if (!p['TLSv1.3']) cap('no-tls13', 'A-', 'TLS 1.3 is not offered');
  if (input.clientRenegotiation)
    cap('client-renegotiation', 'A-', 'the server lets clients start renegotiations (denial of service)');
  const qualities = input.suites.map(suiteQuality);
  if (input.serverPreference === false && new Set(qualities).size > 1)
    cap(
      'client-cipher-order',
      'A-',
      "the server follows the client's suite order although its suites differ in strength",
    );
  if (input.hsts) {
    if (input.hsts.maxAge === undefined || input.hsts.maxAge === 0) cap('no-hsts', 'A-', 'no HSTS on the HTTPS answer');
    else if (input.hsts.maxAge < HSTS_MIN_SECONDS)
      cap('hsts-short', 'A-', `HSTS max-age ${input.hsts.maxAge} s is under 180 days`);
  }

  // A+: nothing caps the grade and HSTS is long (SSL Labs: "exceptional", no warnings).
  const top: Grade = input.hsts?.maxAge !== undefined && input.hsts.maxAge >= HSTS_MIN_SECONDS ? 'A+' : 'A';
  let grade: Grade = top;
  let gradeIgnoringTrust: Grade = top;
  for (const k of caps) {
    grade = worse(grade, k.grade);
    if (!k.trust) gradeIgnoringTrust = worse(gradeIgnoringTrust, k.grade);
  }
  return { grade, gradeIgnoringTrust, caps };
}
