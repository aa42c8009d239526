// nuclei's ssl templates: one TLS handshake with the scanned host (never another one), within the
// block's version range and cipher suites, described by the fields nuclei's TLS client (tlsx)
// reports: `tls_version` (tls10 … tls13, ssl30), `cipher` (the IANA name), the leaf certificate's
// names, dates and fingerprints, and the verdicts `expired`, `self_signed`, `mismatched`,
// `untrusted` and `wildcard_certificate`. Operators read them by name and as the JSON text
// `response` (their default part), as in nuclei. The handshake and the certificate judgement are
// the edge scanner's; SSL 3.0, which Node's OpenSSL cannot speak, is probed with a hand-built hello
// (version and cipher only: SSL 3.0 servers are found, their certificates are not read).
import { createHash, type X509Certificate } from 'node:crypto';
import net from 'node:net';
import type { EgressPolicy } from '../../../lib/egress.ts';
import { analyzeCertificate, trustAnchors } from '../edge/certificate.ts';
import { CIPHER_SUITES, suiteByCode, TLS13_SUITES } from '../edge/cipher-suites.ts';
import { handshake, PERMISSIVE_CIPHERS, type TlsVersion } from '../edge/handshake.ts';
import { clientHello, sendHello, SSL3 } from '../edge/hello.ts';
import { resolveTarget } from '../port/engine.ts';
import { buildOperators, type BuildContext } from './build-http.ts';
import { dslVariables, type DslValue } from './dsl.ts';
import type { Extractor, Matcher } from './model.ts';
import { resultsOf, runOperators, type ResultEntry, type Scope } from './operators.ts';
import { compileText, render, type CompiledText } from './render.ts';
import type { RawSslBlock } from './schema.ts';

/** nuclei's version names, lowest first. */
export const SSL_VERSIONS = ['ssl30', 'tls10', 'tls11', 'tls12', 'tls13'] as const;
export type SslVersion = (typeof SSL_VERSIONS)[number];
const NODE_VERSION: Record<Exclude<SslVersion, 'ssl30'>, TlsVersion> = {
  tls10: 'TLSv1',
  tls11: 'TLSv1.1',
  tls12: 'TLSv1.2',
  tls13: 'TLSv1.3',
};
const FROM_NODE: Record<string, SslVersion> = {
  TLSv1: 'tls10',
  'TLSv1.1': 'tls11',
  'TLSv1.2': 'tls12',
  'TLSv1.3': 'tls13',
};

export interface SslBlock {
  address: CompiledText;
  minVersion: SslVersion;
  maxVersion: SslVersion;
  /** IANA names; empty: every suite the client has. */
  cipherSuites: string[];
  /** Also try each version alone and report the ones accepted (`version_enum`). */
  versionEnum: boolean;
  matchersCondition: 'and' | 'or';
  matchers: Matcher[];
  extractors: Extractor[];
}

const versionName = (v: string): SslVersion | null => {
  const l = v.trim().toLowerCase();
  if (l === 'sslv3' || l === 'ssl30' || l === 'ssl3') return 'ssl30';
  return (SSL_VERSIONS as readonly string[]).includes(l) ? (l as SslVersion) : null;
};

const KNOWN_SUITES = new Set([...CIPHER_SUITES.map((s) => s.name), ...TLS13_SUITES]);

export function buildSslBlock(b: RawSslBlock, at: string, ctx: BuildContext): SslBlock | null {
  const addr = b.address.trim();
  if (!/^\{\{(?:Hostname|Host)\}\}(?::(?:\{\{Port\}\}|\d{1,5}))?$/.test(addr))
    ctx.err(
      `${at}.address`,
      'must be {{Host}}:{{Port}}, {{Hostname}} or {{Host}}:port: ssl templates only reach the scanned host',
    );
  const min = b.min_version === undefined ? 'tls10' : versionName(b.min_version);
  const max = b.max_version === undefined ? 'tls13' : versionName(b.max_version);
  if (!min) ctx.err(`${at}.min_version`, 'must be ssl30, tls10, tls11, tls12 or tls13');
  if (!max) ctx.err(`${at}.max_version`, 'must be ssl30, tls10, tls11, tls12 or tls13');
  if (min && max && SSL_VERSIONS.indexOf(min) > SSL_VERSIONS.indexOf(max))
    ctx.err(`${at}.min_version`, 'is above max_version');
  if (min === 'ssl30' && max !== 'ssl30')
    ctx.err(`${at}.min_version`, 'ssl30 can only be asked for alone (min_version and max_version both ssl30)');
  (b.cipher_suites ?? []).forEach((s, i) => {
    if (!KNOWN_SUITES.has(s))
      ctx.err(
        `${at}.cipher_suites[${i}]`,
        `${s.slice(0, 80)} is not a cipher suite this scanner knows (IANA names such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)`,
      );
  });
  if (b.tls_cipher_enum)
    ctx.err(
      `${at}.tls_cipher_enum`,
      'cipher enumeration is not supported in templates: the edge scan lists and grades every suite a server accepts',
    );
  const { matchers, extractors } = buildOperators(b, at, ctx);
  if (!matchers.length && !extractors.length)
    ctx.err(at, 'a request needs matchers or extractors, or it can never report anything');
  // Revocation (OCSP, CRLs) is not checked: a template reading `revoked` could never match.
  const reads = new Set<string>();
  for (const m of matchers) {
    reads.add(m.part);
    for (const d of m.dsl) for (const n of dslVariables(d)) reads.add(n);
  }
  for (const x of extractors) {
    reads.add(x.part);
    for (const k of x.keys) reads.add(k);
    for (const d of x.dsl) for (const n of dslVariables(d)) reads.add(n);
  }
  if (reads.has('revoked'))
    ctx.err(at, 'revoked: certificate revocation (OCSP, CRL) is not checked, so this value is never known');
  if (!min || !max) return null;
  return {
    address: compileText(addr),
    minVersion: min,
    maxVersion: max,
    cipherSuites: b.cipher_suites ?? [],
    versionEnum: b.tls_version_enum ?? false,
    matchersCondition: b['matchers-condition'] ?? 'or',
    matchers,
    extractors,
  };
}

/**
 * OpenSSL's name of an IANA suite, by OpenSSL's naming rules (TLS 1.3 suites keep their names).
 * Null for a suite OpenSSL does not name this way: it is then not offered.
 */
export function opensslSuiteName(iana: string): string | null {
  if ((TLS13_SUITES as readonly string[]).includes(iana)) return iana;
  const m = /^TLS_(.+)_WITH_(.+)$/.exec(iana);
  if (!m) return null;
  const kx = {
    RSA: '',
    ECDHE_RSA: 'ECDHE-RSA-',
    ECDHE_ECDSA: 'ECDHE-ECDSA-',
    DHE_RSA: 'DHE-RSA-',
    DHE_DSS: 'DHE-DSS-',
  }[m[1]!];
  if (kx === undefined) return null;
  let c = m[2]!;
  let mac = '';
  const hash = /_(SHA|SHA256|SHA384|MD5)$/.exec(c);
  if (hash) {
    mac = hash[1]!;
    c = c.slice(0, -hash[0].length);
  }
  const cipher: Record<string, string> = {
    AES_128_GCM: 'AES128-GCM',
    AES_256_GCM: 'AES256-GCM',
    AES_128_CBC: 'AES128',
    AES_256_CBC: 'AES256',
    CHACHA20_POLY1305: 'CHACHA20-POLY1305',
    CAMELLIA_128_CBC: 'CAMELLIA128',
    CAMELLIA_256_CBC: 'CAMELLIA256',
    '3DES_EDE_CBC': 'DES-CBC3',
    RC4_128: 'RC4',
    SEED_CBC: 'SEED',
    IDEA_CBC: 'IDEA-CBC',
  };
  const name = cipher[c];
  if (!name) return null;
  // AEAD suites name their PRF hash only when it is not SHA-256 (…-GCM-SHA384); ChaCha20 none.
  if (name === 'CHACHA20-POLY1305') return `${kx}${name}`;
  if (!mac) return null;
  if (name.endsWith('-GCM')) return `${kx}${name}-${mac}`;
  // CBC suites with the TLS 1.2 hashes name them; SHA-1 ones say SHA.
  return `${kx}${name}-${mac}`;
}

/** One handshake's fields as tlsx reports them (only what is known: false verdicts included). */
type Fields = Record<string, string | boolean | string[] | Record<string, string>>;

/**
 * A distinguished name as tlsx prints it: the attributes in reverse order of the certificate's
 * sequence, joined by ", " (`CN=host, OU=unit, O=org, L=city, ST=state, C=US`); public templates
 * match on such text.
 */
function dnText(dn: string): string {
  return dn.split('\n').filter(Boolean).reverse().join(', ');
}
const attrs = (dn: string, key: string) =>
  dn
    .split('\n')
    .filter((l) => l.startsWith(`${key}=`))
    .map((l) => l.slice(key.length + 1));

function certificateFields(chain: X509Certificate[], host: string): Fields {
  const leaf = chain[0]!;
  const report = analyzeCertificate(chain, trustAnchors(), host);
  const dns = (leaf.subjectAltName ?? '')
    .split(/,\s*/)
    .filter((e) => e.startsWith('DNS:'))
    .map((e) => e.slice(4));
  const hex = (algorithm: string) => createHash(algorithm).update(leaf.raw).digest('hex');
  const fields: Fields = {
    not_before: leaf.validFromDate.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    not_after: leaf.validToDate.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    subject_dn: dnText(leaf.subject),
    subject_cn: attrs(leaf.subject, 'CN')[0] ?? '',
    subject_org: attrs(leaf.subject, 'O'),
    subject_an: dns,
    serial: (leaf.serialNumber.length % 2 ? `0${leaf.serialNumber}` : leaf.serialNumber)
      .toUpperCase()
      .replace(/(..)(?!$)/g, '$1:'),
    issuer_dn: dnText(leaf.issuer),
    issuer_cn: attrs(leaf.issuer, 'CN')[0] ?? '',
    issuer_org: attrs(leaf.issuer, 'O'),
    fingerprint_hash: { md5: hex('md5'), sha1: hex('sha1'), sha256: hex('sha256') },
    expired: report.expired,
    self_signed: report.selfSigned,
    mismatched: !report.hostname.matches,
    untrusted: !report.trusted,
    wildcard_certificate: dns.some((d) => d.startsWith('*.')),
  };
  return fields;
}

/** The answer as operators read it: every field by name, `response` the JSON of them all. */
class SslData {
  readonly fields: Fields;
  readonly json: string;
  constructor(fields: Fields) {
    this.fields = fields;
    this.json = JSON.stringify(fields);
  }
  get(name: string): DslValue | undefined {
    if (name === 'response' || name === 'body') return this.json;
    const v = this.fields[name];
    if (v === undefined) return undefined;
    return typeof v === 'object' ? (Array.isArray(v) ? v.join(',') : JSON.stringify(v)) : v;
  }
  part(p: string): string | undefined {
    const v = this.get(p);
    return v === undefined ? undefined : String(v);
  }
  lowerPart(p: string): string | undefined {
    return this.part(p)?.toLowerCase();
  }
  bytes(p: string): Buffer | undefined {
    const v = this.part(p);
    return v === undefined ? undefined : Buffer.from(v, 'latin1');
  }
}

export interface SslResult extends ResultEntry {
  address: string;
  response: string;
}

interface SslOptions {
  timeoutMs: number;
  signal: AbortSignal;
  resolve?: (h: string) => Promise<string>;
  egress?: EgressPolicy;
}

type Probe =
  { ok: true; version: SslVersion; cipher: string; chain: X509Certificate[] } | { ok: false; message: string };

async function probe(
  address: string,
  port: number,
  host: string,
  min: SslVersion,
  max: SslVersion,
  suites: string[],
  o: SslOptions,
): Promise<Probe> {
  if (max === 'ssl30') {
    const codes = suites.length
      ? CIPHER_SUITES.filter((s) => suites.includes(s.name)).map((s) => s.code)
      : CIPHER_SUITES.filter((s) => !s.tls12Only).map((s) => s.code);
    const a = await sendHello({ address, port, timeoutMs: o.timeoutMs, signal: o.signal }, clientHello(SSL3, codes));
    if (a.kind !== 'server-hello' || a.version !== SSL3) return { ok: false, message: 'SSL 3.0 was not accepted' };
    return {
      ok: true,
      version: 'ssl30',
      cipher: suiteByCode(a.cipher)?.name ?? `0x${a.cipher.toString(16)}`,
      chain: [],
    };
  }
  const names = suites.map(opensslSuiteName).filter((n): n is string => n !== null);
  if (suites.length && !names.length) return { ok: false, message: 'none of the cipher suites can be offered' };
  const r = await handshake({
    address,
    port,
    serverName: host,
    minVersion: NODE_VERSION[min === 'ssl30' ? 'tls10' : min],
    maxVersion: NODE_VERSION[max],
    ciphers: names.length ? `${names.join(':')}:@SECLEVEL=0` : PERMISSIVE_CIPHERS,
    timeoutMs: o.timeoutMs,
    signal: o.signal,
  });
  if (!r.ok) return { ok: false, message: r.message };
  return { ok: true, version: FROM_NODE[r.protocol] ?? 'tls12', cipher: r.standardName, chain: r.chain };
}

/** Runs one ssl block against the scanned host. */
export async function executeSslBlock(
  block: SslBlock,
  host: string,
  urlVars: Record<string, string>,
  scope: Scope,
  o: SslOptions,
): Promise<{ results: SslResult[]; errors: string[] }> {
  const rendered = render(block.address, (n) => urlVars[n]);
  const m = rendered === undefined ? null : /:(\d{1,5})$/.exec(rendered);
  const port = m ? Number(m[1]) : Number(urlVars.Port);
  if (o.signal.aborted) throw o.signal.reason ?? new DOMException('The scan was cancelled', 'AbortError');
  let address: string;
  try {
    address = await resolveTarget(host, o.resolve, o.egress);
  } catch (e) {
    return { results: [], errors: [`${host}: ${(e as Error).message}`] };
  }
  const got = await probe(address, port, host, block.minVersion, block.maxVersion, block.cipherSuites, o);
  if (!got.ok) return { results: [], errors: [`${host}:${port}: ${got.message}`] };
  const fields: Fields = {
    host,
    ip: address,
    port: String(port),
    probe_status: true,
    tls_version: got.version,
    cipher: got.cipher,
    tls_connection: 'ctls',
    ...(net.isIP(host) ? {} : { sni: host }),
    ...(got.chain.length ? certificateFields(got.chain, host) : {}),
  };
  if (block.versionEnum) {
    const accepted: string[] = [];
    for (const v of SSL_VERSIONS) {
      const p = await probe(address, port, host, v, v, [], o);
      if (p.ok) accepted.push(v);
    }
    fields.version_enum = accepted;
  }
  const data = new SslData(fields);
  const r = runOperators(block, data, scope);
  const results = resultsOf(block, r).map((res) => ({ ...res, address: `${host}:${port}`, response: data.json }));
  return { results, errors: [] };
}
