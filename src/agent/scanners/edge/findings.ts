// Findings of an edge check. Rule ids are stable (`edge/<check>`); the port or URL is in the
// location, the variable detail (suites, dates, header values) in evidence.data. Per TLS port: one
// info `edge/grade` finding with the grade and its caps, plus one finding per problem.
// Over 500 lines on purpose: a rule table: one finding builder per edge check, with its severity and advice.
import type { NormalizedFindingInput, Severity } from '../../../findings/index.ts';
import { cipherWeaknesses, SEVERE_WEAKNESSES, suiteByName, type CipherSuite } from './cipher-suites.ts';
import type { EdgePortResult, EdgeResult } from './engine.ts';
import { HSTS_MIN_SECONDS, KEY_EXCHANGE_LIMITS, suiteQuality } from './grade.ts';

interface Rule {
  title: string;
  severity: Severity;
  cwe?: number[];
  remediation: string;
}

export const EDGE_RULES = {
  'edge/grade': {
    title: 'TLS configuration grade',
    severity: 'info',
    remediation: 'Fix the problems listed as grade caps, worst first.',
  },
  'edge/no-tls': {
    title: 'No TLS on a checked port',
    severity: 'info',
    remediation: 'Check that the port list is right; a port meant for HTTPS should complete a TLS handshake.',
  },
  'edge/tls-unnegotiable': {
    title: 'TLS service accepted no protocol or suite offered',
    severity: 'info',
    remediation:
      'Check the TLS configuration: the server refused every protocol version and cipher suite the scanner offered.',
  },
  'edge/sslv2-enabled': {
    title: 'SSLv2 enabled',
    severity: 'high',
    cwe: [327],
    remediation: 'Disable SSLv2 (DROWN); offer TLS 1.2 and TLS 1.3 only.',
  },
  'edge/sslv3-enabled': {
    title: 'SSLv3 enabled',
    severity: 'high',
    cwe: [327],
    remediation: 'Disable SSLv3 (POODLE); offer TLS 1.2 and TLS 1.3 only.',
  },
  'edge/tls-1.0-enabled': {
    title: 'TLS 1.0 enabled',
    severity: 'medium',
    cwe: [327],
    remediation: 'Disable TLS 1.0 (deprecated by RFC 8996, not allowed by PCI DSS); offer TLS 1.2 and TLS 1.3.',
  },
  'edge/tls-1.1-enabled': {
    title: 'TLS 1.1 enabled',
    severity: 'medium',
    cwe: [327],
    remediation: 'Disable TLS 1.1 (deprecated by RFC 8996); offer TLS 1.2 and TLS 1.3.',
  },
  'edge/no-tls-1.2': {
    title: 'Neither TLS 1.2 nor TLS 1.3 offered',
    severity: 'high',
    cwe: [327],
    remediation: 'Enable TLS 1.2 and TLS 1.3; current clients refuse older protocols.',
  },
  'edge/no-tls-1.3': {
    title: 'TLS 1.3 not offered',
    severity: 'info',
    remediation: 'Enable TLS 1.3 alongside TLS 1.2.',
  },
  'edge/weak-cipher': {
    title: 'Weak cipher suites accepted',
    severity: 'medium',
    cwe: [327],
    remediation:
      'Accept only AEAD suites with forward secrecy (ECDHE with AES-GCM or ChaCha20-Poly1305); remove NULL, export, anonymous, RC4, DES and 3DES suites.',
  },
  'edge/no-forward-secrecy': {
    title: 'Cipher suites without forward secrecy accepted',
    severity: 'low',
    cwe: [327],
    remediation: 'Prefer and ideally require ECDHE (or DHE) key exchange; remove static RSA and static DH suites.',
  },
  'edge/no-aead': {
    title: 'No AEAD cipher suite accepted',
    severity: 'low',
    cwe: [327],
    remediation: 'Enable AES-GCM or ChaCha20-Poly1305 suites (TLS 1.2) and TLS 1.3.',
  },
  'edge/weak-dh': {
    title: 'Weak Diffie-Hellman group (Logjam)',
    severity: 'medium',
    cwe: [326],
    remediation:
      'Use a DH group of at least 2048 bits (RFC 7919 ffdhe2048 or larger) for DHE suites, or drop DHE and keep ECDHE.',
  },
  'edge/weak-ecdh': {
    title: 'Small elliptic curve accepted for key exchange',
    severity: 'medium',
    cwe: [326],
    remediation: 'Offer only X25519, P-256, P-384 and larger curves for ECDHE; remove curves under 224 bits.',
  },
  'edge/client-renegotiation': {
    title: 'Client-initiated renegotiation allowed',
    severity: 'low',
    cwe: [400],
    remediation:
      'Disable client-initiated renegotiation (nginx and current Apache do by default; OpenSSL: SSL_OP_NO_RENEGOTIATION); it lets one client make the server do handshake work at will.',
  },
  'edge/client-cipher-order': {
    title: "Server follows the client's cipher suite order",
    severity: 'low',
    cwe: [327],
    remediation:
      "Enforce the server's own suite order (ssl_prefer_server_ciphers on, SSLHonorCipherOrder on) with the strongest suites first, or accept only strong suites.",
  },
  'edge/cert-chain-incomplete': {
    title: 'Certificate chain incomplete (intermediate not sent)',
    severity: 'medium',
    cwe: [295],
    remediation:
      'Serve the leaf certificate followed by every intermediate up to (not including) the root; clients that do not fetch missing intermediates fail.',
  },
  'edge/cert-expired': {
    title: 'Certificate expired',
    severity: 'high',
    cwe: [298],
    remediation: 'Renew the certificate and automate renewal (ACME).',
  },
  'edge/cert-not-yet-valid': {
    title: 'Certificate not yet valid',
    severity: 'high',
    cwe: [298],
    remediation: 'Check the server clock and the certificate dates; deploy a currently valid certificate.',
  },
  'edge/cert-expiring-30d': {
    title: 'Certificate expires within 30 days',
    severity: 'medium',
    cwe: [298],
    remediation: 'Renew the certificate now and automate renewal (ACME).',
  },
  'edge/cert-expiring-60d': {
    title: 'Certificate expires within 60 days',
    severity: 'low',
    cwe: [298],
    remediation: 'Plan the renewal; automate it (ACME) so it happens well before expiry.',
  },
  'edge/cert-self-signed': {
    title: 'Self-signed certificate',
    severity: 'medium',
    cwe: [295],
    remediation: 'Use a certificate from a trusted CA (public, or your private CA distributed to clients).',
  },
  'edge/cert-untrusted': {
    title: 'Certificate chain not trusted',
    severity: 'medium',
    cwe: [295],
    remediation: 'Serve the full chain (leaf and intermediates) issued by a CA that clients trust.',
  },
  'edge/cert-hostname-mismatch': {
    title: 'Certificate does not match the host name',
    severity: 'medium',
    cwe: [297],
    remediation: 'Issue a certificate whose subjectAltName covers the name clients use.',
  },
  'edge/weak-key': {
    title: 'Weak certificate key',
    severity: 'medium',
    cwe: [326],
    remediation: 'Use an RSA key of at least 2048 bits or an EC key of at least 256 bits.',
  },
  'edge/weak-signature': {
    title: 'Weak certificate signature algorithm',
    severity: 'medium',
    cwe: [328],
    remediation: 'Reissue the certificate (and intermediates) signed with SHA-256 or stronger.',
  },
  'edge/no-https-redirect': {
    title: 'Plain HTTP does not redirect to HTTPS',
    severity: 'medium',
    cwe: [319],
    remediation: 'Answer every plain-HTTP request with a 301 or 308 redirect to the same URL over HTTPS.',
  },
  'edge/https-redirect-temporary': {
    title: 'HTTP to HTTPS redirect is temporary',
    severity: 'info',
    remediation: 'Use 301 or 308 so clients and caches remember the redirect.',
  },
  'edge/hsts-missing': {
    title: 'HSTS header missing',
    severity: 'low',
    cwe: [319],
    remediation: 'Send Strict-Transport-Security: max-age=31536000; includeSubDomains on HTTPS answers.',
  },
  'edge/hsts-short': {
    title: 'HSTS max-age under 180 days',
    severity: 'low',
    cwe: [319],
    remediation: 'Raise the HSTS max-age to at least 15552000 (180 days); one year is usual.',
  },
  'edge/hsts-disabled': {
    title: 'HSTS disabled (max-age=0)',
    severity: 'low',
    cwe: [319],
    remediation: 'Send a positive HSTS max-age of at least 180 days.',
  },
  'edge/header-csp-missing': {
    title: 'Content-Security-Policy header missing',
    severity: 'low',
    cwe: [693],
    remediation: 'Send a Content-Security-Policy that restricts script sources.',
  },
  'edge/header-xcto-missing': {
    title: 'X-Content-Type-Options: nosniff missing',
    severity: 'low',
    cwe: [693],
    remediation: 'Send X-Content-Type-Options: nosniff.',
  },
  'edge/header-frame-options-missing': {
    title: 'Clickjacking protection missing',
    severity: 'low',
    cwe: [1021],
    remediation: "Send Content-Security-Policy frame-ancestors 'self' (or X-Frame-Options: DENY/SAMEORIGIN).",
  },
  'edge/header-referrer-policy-missing': {
    title: 'Referrer-Policy header missing',
    severity: 'info',
    remediation: 'Send Referrer-Policy: strict-origin-when-cross-origin (or stricter).',
  },
} as const satisfies Record<string, Rule>;

export type EdgeRuleId = keyof typeof EDGE_RULES;

function finding(
  ruleId: EdgeRuleId,
  o: {
    title?: string;
    severity?: Severity;
    description: string;
    location: NormalizedFindingInput['location'];
    summary: string;
    data?: Record<string, unknown>;
  },
): NormalizedFindingInput {
  const rule: Rule = EDGE_RULES[ruleId];
  return {
    ruleId,
    title: o.title ?? rule.title,
    severity: o.severity ?? rule.severity,
    description: o.description,
    location: o.location,
    remediation: rule.remediation,
    ...(rule.cwe ? { cwe: [...rule.cwe] } : {}),
    evidence: { summary: o.summary, ...(o.data ? { data: o.data } : {}) },
  };
}

/** Each accepted suite once, with the protocols it was accepted on. */
function acceptedSuites(p: EdgePortResult): { suite: CipherSuite; protocols: string[] }[] {
  const out = new Map<string, { suite: CipherSuite; protocols: string[] }>();
  for (const list of p.ciphers) {
    for (const name of list.suites) {
      const suite = suiteByName(name);
      if (!suite) continue;
      const entry = out.get(name) ?? { suite, protocols: [] };
      entry.protocols.push(list.protocol);
      out.set(name, entry);
    }
  }
  return [...out.values()];
}

const hostPort = (host: string) => (host.includes(':') ? `[${host}]` : host);

function portFindings(r: EdgeResult, p: EdgePortResult): NormalizedFindingInput[] {
  const where = `${hostPort(r.host)}:${p.port}`;
  const location = { host: r.host, port: p.port, protocol: 'tcp' };
  if (p.state === 'no-tls')
    return [
      finding('edge/no-tls', {
        description: `No TLS on port ${p.port} of ${r.host}: ${p.note ?? 'the port did not answer a TLS or SSL hello'}.`,
        location,
        summary: p.note ?? `no TLS on port ${p.port}`,
      }),
    ];
  if (p.state === 'tls-no-agreement')
    return [
      finding('edge/tls-unnegotiable', {
        description: `${where} answered TLS hellos with alerts only.`,
        location,
        summary: p.note ?? 'no protocol agreed',
      }),
    ];
  if (p.state !== 'tls') return [];
  const out: NormalizedFindingInput[] = [];
  const offered = Object.entries(p.protocols)
    .filter(([, on]) => on)
    .map(([name]) => name);
  const protocolData = { offered, seenBy: p.seenBy };

  if (p.grade) {
    const g = p.grade;
    out.push(
      finding('edge/grade', {
        title: `TLS grade ${g.grade} on ${where}`,
        description: `The TLS configuration of ${where} grades ${g.grade}${g.gradeIgnoringTrust !== g.grade ? ` (${g.gradeIgnoringTrust} if trust problems are ignored)` : ''}. ${g.caps.length ? `Caps: ${g.caps.map((c) => `${c.grade} — ${c.reason}`).join('; ')}.` : 'Nothing caps the grade.'}`,
        location,
        summary: `grade ${g.grade}${g.caps.length ? `: ${g.caps.map((c) => c.code).join(', ')}` : ''}`,
        data: { grade: g.grade, gradeIgnoringTrust: g.gradeIgnoringTrust, caps: g.caps, protocols: offered },
      }),
    );
  }

  const protocolRules: [string, EdgeRuleId, string][] = [
    ['SSLv2', 'edge/sslv2-enabled', 'SSLv2'],
    ['SSLv3', 'edge/sslv3-enabled', 'SSLv3'],
    ['TLSv1', 'edge/tls-1.0-enabled', 'TLS 1.0'],
    ['TLSv1.1', 'edge/tls-1.1-enabled', 'TLS 1.1'],
  ];
  for (const [name, ruleId, label] of protocolRules) {
    if (p.protocols[name as keyof typeof p.protocols])
      out.push(
        finding(ruleId, {
          description: `${where} accepts ${label} connections.`,
          location,
          summary: `${label} offered`,
          data: protocolData,
        }),
      );
  }
  if (!p.protocols['TLSv1.2'] && !p.protocols['TLSv1.3'])
    out.push(
      finding('edge/no-tls-1.2', {
        description: `${where} offers neither TLS 1.2 nor TLS 1.3 (offered: ${offered.join(', ')}).`,
        location,
        summary: `offered: ${offered.join(', ')}`,
        data: protocolData,
      }),
    );
  else if (!p.protocols['TLSv1.3'])
    out.push(
      finding('edge/no-tls-1.3', {
        description: `${where} does not offer TLS 1.3.`,
        location,
        summary: `offered: ${offered.join(', ')}`,
        data: protocolData,
      }),
    );

  const accepted = acceptedSuites(p);
  const weak = accepted
    .map((a) => ({ ...a, weaknesses: cipherWeaknesses(a.suite) }))
    .filter((a) => a.weaknesses.length);
  if (weak.length) {
    const severe = weak.some((w) => w.weaknesses.some((x) => SEVERE_WEAKNESSES.includes(x)));
    out.push(
      finding('edge/weak-cipher', {
        severity: severe ? 'high' : 'medium',
        description: `${where} accepts ${weak.length} weak cipher suite${weak.length === 1 ? '' : 's'}: ${weak.map((w) => `${w.suite.name} (${w.weaknesses.join(', ')})`).join('; ')}.`,
        location,
        summary: weak.map((w) => w.suite.name).join(', '),
        data: {
          suites: weak.map((w) => ({
            name: w.suite.name,
            protocols: w.protocols,
            weaknesses: w.weaknesses,
            bits: w.suite.bits,
          })),
        },
      }),
    );
  }
  const noFs = accepted.filter((a) => !a.suite.forwardSecrecy);
  if (noFs.length) {
    const none = noFs.length === accepted.length;
    out.push(
      finding('edge/no-forward-secrecy', {
        severity: none ? 'medium' : 'low',
        title: none ? 'No cipher suite with forward secrecy' : EDGE_RULES['edge/no-forward-secrecy'].title,
        description: `${where} accepts ${noFs.length} suite${noFs.length === 1 ? '' : 's'} without forward secrecy${none ? ' and none with it' : ''}: ${noFs.map((a) => a.suite.name).join(', ')}.`,
        location,
        summary: noFs.map((a) => a.suite.name).join(', '),
        data: {
          suites: noFs.map((a) => ({ name: a.suite.name, protocols: a.protocols })),
          forwardSecrecyAvailable: !none,
        },
      }),
    );
  }
  if (accepted.length && !accepted.some((a) => a.suite.aead)) {
    out.push(
      finding('edge/no-aead', {
        description: `${where} accepts only CBC or stream suites; none is AEAD.`,
        location,
        summary: `${accepted.length} suites, none AEAD`,
        data: { suites: accepted.map((a) => a.suite.name) },
      }),
    );
  }

  out.push(
    ...handshakeFindings(
      p,
      where,
      location,
      accepted.map((a) => a.suite),
    ),
  );
  out.push(...certificateFindings(p, where, location));
  out.push(...httpsFindings(p));
  return out;
}

/** Key exchange strength, renegotiation and suite order. */
function handshakeFindings(
  p: EdgePortResult,
  where: string,
  location: NormalizedFindingInput['location'],
  suites: CipherSuite[],
): NormalizedFindingInput[] {
  const out: NormalizedFindingInput[] = [];
  const kx = p.keyExchange;
  const L = KEY_EXCHANGE_LIMITS;
  if (kx?.dh && kx.dh.bits < L.dh.weak) {
    out.push(
      finding('edge/weak-dh', {
        severity: kx.dh.bits < L.dh.insecure ? 'high' : 'medium',
        description: `${where} uses a ${kx.dh.bits}-bit Diffie-Hellman group for its DHE suites; groups under ${L.dh.weak} bits are within reach of well-funded attackers (Logjam), under ${L.dh.insecure} bits of many.`,
        location,
        summary: `DH ${kx.dh.bits} bits`,
        data: { dhBits: kx.dh.bits },
      }),
    );
  }
  const curve = [kx?.ecdh, kx?.smallCurve].filter((x) => x !== undefined).sort((a, b) => a.bits - b.bits)[0];
  if (curve && curve.bits < L.ecdh.weak) {
    out.push(
      finding('edge/weak-ecdh', {
        severity: curve.bits < L.ecdh.insecure ? 'high' : 'medium',
        description: `${where} accepts ECDHE key exchange on ${curve.curve} (${curve.bits} bits), weaker than a 2048-bit RSA key; a client offering it (or an attacker in the middle of one that does) gets it.`,
        location,
        summary: `${curve.curve} (${curve.bits} bits)`,
        data: { curve: curve.curve, bits: curve.bits, ...(kx?.ecdh ? { preferred: kx.ecdh } : {}) },
      }),
    );
  }
  if (p.clientRenegotiation) {
    out.push(
      finding('edge/client-renegotiation', {
        description: `${where} completes a renegotiation the client starts, so one client can make it repeat expensive handshake work.`,
        location,
        summary: 'client-initiated renegotiation accepted',
      }),
    );
  }
  const qualities = new Set(suites.map(suiteQuality));
  if (p.serverPreference === false && qualities.size > 1) {
    out.push(
      finding('edge/client-cipher-order', {
        severity: qualities.has(0) ? 'medium' : 'low',
        description: `${where} picks the first suite of the client's list it accepts instead of its own best, and it accepts suites of different strength: a client that lists a weaker suite first gets it.`,
        location,
        summary: 'server follows the client order',
        data: {
          weakest: suites
            .filter((x) => suiteQuality(x) === Math.min(...qualities))
            .map((x) => x.name)
            .slice(0, 10),
        },
      }),
    );
  }
  return out;
}

function certificateFindings(
  p: EdgePortResult,
  where: string,
  location: NormalizedFindingInput['location'],
): NormalizedFindingInput[] {
  const c = p.certificate;
  if (!c) return [];
  const out: NormalizedFindingInput[] = [];
  const certData = {
    subject: c.subject,
    issuer: c.issuer,
    serialNumber: c.serialNumber,
    fingerprint256: c.fingerprint256,
    validFrom: c.validFrom,
    validTo: c.validTo,
    ...(c.subjectAltName ? { subjectAltName: c.subjectAltName } : {}),
  };
  const day = (iso: string) => iso.slice(0, 10);
  if (c.expired)
    out.push(
      finding('edge/cert-expired', {
        description: `The certificate of ${where} (${c.subject}) expired on ${day(c.validTo)}.`,
        location,
        summary: `expired ${day(c.validTo)}`,
        data: { ...certData, daysLeft: c.daysLeft },
      }),
    );
  else if (c.daysLeft < 30)
    out.push(
      finding('edge/cert-expiring-30d', {
        description: `The certificate of ${where} (${c.subject}) expires on ${day(c.validTo)}, in ${c.daysLeft} days.`,
        location,
        summary: `expires ${day(c.validTo)}`,
        data: { ...certData, daysLeft: c.daysLeft },
      }),
    );
  else if (c.daysLeft < 60)
    out.push(
      finding('edge/cert-expiring-60d', {
        description: `The certificate of ${where} (${c.subject}) expires on ${day(c.validTo)}, in ${c.daysLeft} days.`,
        location,
        summary: `expires ${day(c.validTo)}`,
        data: { ...certData, daysLeft: c.daysLeft },
      }),
    );
  if (c.notYetValid)
    out.push(
      finding('edge/cert-not-yet-valid', {
        description: `The certificate of ${where} (${c.subject}) is not valid before ${day(c.validFrom)}.`,
        location,
        summary: `valid from ${day(c.validFrom)}`,
        data: certData,
      }),
    );
  if (c.chainIncomplete) {
    const missing = c.path.filter((x) => x.fetched).map((x) => x.subject);
    out.push(
      finding('edge/cert-chain-incomplete', {
        description: `${where} sends ${c.presented} certificate${c.presented === 1 ? '' : 's'} but not the intermediate${missing.length === 1 ? '' : 's'} its chain needs (${missing.join('; ')}); they were fetched from the certificate's issuer URL, as browsers that do so would.`,
        location,
        summary: `missing: ${missing.join('; ')}`,
        data: { ...certData, presented: c.presented, path: c.path },
      }),
    );
  }
  if (c.selfSigned)
    out.push(
      finding('edge/cert-self-signed', {
        description: `${where} presents a self-signed certificate (${c.subject}) that is not a trusted root.`,
        location,
        summary: `self-signed ${c.subject}`,
        data: certData,
      }),
    );
  else if (!c.trusted) {
    const why =
      c.trustProblem === 'untrusted-root'
        ? 'its chain ends at a root that is not trusted'
        : 'no trusted issuer was found for it (a missing intermediate or a private CA)';
    out.push(
      finding('edge/cert-untrusted', {
        description: `The certificate of ${where} (${c.subject}, issued by ${c.issuer}) is not trusted: ${why}.`,
        location,
        summary: `untrusted: ${c.trustProblem ?? 'unknown issuer'}`,
        data: { ...certData, trustProblem: c.trustProblem, path: c.path, presented: c.presented },
      }),
    );
  }
  if (!c.hostname.matches)
    out.push(
      finding('edge/cert-hostname-mismatch', {
        description: `The certificate of ${where} (${c.subject}${c.subjectAltName ? `; ${c.subjectAltName}` : ''}) does not cover ${c.hostname.name}.`,
        location,
        summary: `does not cover ${c.hostname.name}`,
        data: { ...certData, name: c.hostname.name },
      }),
    );
  if (c.key.strength !== 'ok') {
    out.push(
      finding('edge/weak-key', {
        severity: c.key.strength === 'insecure' ? 'high' : 'medium',
        description: `The certificate of ${where} has a ${c.key.bits}-bit ${c.key.type.toUpperCase()} key${c.key.curve ? ` (${c.key.curve})` : ''}; at least 2048-bit RSA or 256-bit EC is expected.`,
        location,
        summary: `${c.key.type} ${c.key.bits} bits`,
        data: { ...certData, key: c.key },
      }),
    );
  }
  if (c.signature.strength !== 'ok') {
    out.push(
      finding('edge/weak-signature', {
        severity: c.signature.strength === 'md5' ? 'high' : 'medium',
        description: `${c.signature.subject === c.subject ? `The certificate of ${where}` : `The chain of ${where} (${c.signature.subject})`} is signed with ${c.signature.algorithm}, which is open to collision attacks.`,
        location,
        summary: c.signature.algorithm,
        data: { ...certData, signature: c.signature },
      }),
    );
  }
  return out;
}

function httpsFindings(p: EdgePortResult): NormalizedFindingInput[] {
  const h = p.https;
  if (!h || h.status === undefined) return [];
  const out: NormalizedFindingInput[] = [];
  const location = { url: h.url };
  if (!h.hsts)
    out.push(
      finding('edge/hsts-missing', {
        description: `${h.url} answers without a Strict-Transport-Security header.`,
        location,
        summary: `HTTP ${h.status} without Strict-Transport-Security`,
      }),
    );
  else if (h.hsts.maxAge === 0)
    out.push(
      finding('edge/hsts-disabled', {
        description: `${h.url} sends Strict-Transport-Security with max-age=0, which tells browsers to forget HSTS.`,
        location,
        summary: h.hsts.raw,
        data: { ...h.hsts },
      }),
    );
  else if (h.hsts.maxAge === undefined || h.hsts.maxAge < HSTS_MIN_SECONDS) {
    out.push(
      finding('edge/hsts-short', {
        description: `${h.url} sends Strict-Transport-Security with max-age ${h.hsts.maxAge ?? '(none)'} s; at least 15552000 s (180 days) is expected.`,
        location,
        summary: h.hsts.raw,
        data: { ...h.hsts },
      }),
    );
  }
  const hd = h.headers;
  if (!hd) return out;
  const at = { location: { url: h.headersUrl ?? h.url } };
  const page = h.headersUrl ?? h.url;
  if (!hd.contentSecurityPolicy)
    out.push(
      finding('edge/header-csp-missing', {
        ...at,
        description: `${page} answers without a Content-Security-Policy header.`,
        summary: 'no Content-Security-Policy',
      }),
    );
  if (hd.xContentTypeOptions?.trim().toLowerCase() !== 'nosniff')
    out.push(
      finding('edge/header-xcto-missing', {
        ...at,
        description: `${page} does not send X-Content-Type-Options: nosniff.`,
        summary: hd.xContentTypeOptions
          ? `X-Content-Type-Options: ${hd.xContentTypeOptions}`
          : 'no X-Content-Type-Options',
      }),
    );
  if (!hd.xFrameOptions && !hd.frameAncestors)
    out.push(
      finding('edge/header-frame-options-missing', {
        ...at,
        description: `${page} sends neither X-Frame-Options nor a CSP frame-ancestors directive, so other sites may frame it.`,
        summary: 'no X-Frame-Options, no frame-ancestors',
      }),
    );
  if (!hd.referrerPolicy)
    out.push(
      finding('edge/header-referrer-policy-missing', {
        ...at,
        description: `${page} answers without a Referrer-Policy header.`,
        summary: 'no Referrer-Policy',
      }),
    );
  return out;
}

function redirectFindings(r: EdgeResult): NormalizedFindingInput[] {
  const x = r.httpRedirect;
  if (!x) return [];
  const location = { url: x.url };
  const data = { status: x.status, ...(x.location ? { location: x.location } : {}) };
  if (x.state === 'none') {
    return [
      finding('edge/no-https-redirect', {
        description:
          `${x.url} answers ${x.status ?? ''} ${x.location ? `with a redirect to ${x.location}` : 'without redirecting'}; visitors who type the bare name stay on plain HTTP.`.replace(
            /\s+/g,
            ' ',
          ),
        location,
        summary: `HTTP ${x.status}${x.location ? ` → ${x.location}` : ''}`,
        data,
      }),
    ];
  }
  if (x.state === 'temporary')
    return [
      finding('edge/https-redirect-temporary', {
        description: `${x.url} redirects to ${x.location} with ${x.status}, a temporary redirect.`,
        location,
        summary: `HTTP ${x.status} → ${x.location}`,
        data,
      }),
    ];
  return [];
}

export function edgeFindings(r: EdgeResult): NormalizedFindingInput[] {
  return [...r.ports.flatMap((p) => portFindings(r, p)), ...redirectFindings(r)];
}
