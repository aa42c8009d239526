// `rampart-worker scan edge`: flags, help and output of the edge (TLS and HTTP front door) check.
import { readFileSync } from 'node:fs';
import { UsageError, parseIntFlag } from '../../commands/common.ts';
import { renderTable } from '../../output-text.ts';
import type { CliFlagValue, LocalScanCli } from '../types.ts';
import type { EdgePortResult, EdgeResult } from './engine.ts';
import { createEdgeScanner, DEFAULT_TIMEOUT_MS, edgeTaskOptions, type EdgeScannerSettings } from './index.ts';

const str = (v: CliFlagValue) => (typeof v === 'string' ? v : undefined);

function parsePorts(spec: string): number[] {
  const parts = spec.split(',').map((p) => p.trim());
  if (!parts.every((p) => /^\d{1,5}$/.test(p)))
    throw new UsageError('--ports takes port numbers separated by commas, e.g. 443,8443');
  const ports = [...new Set(parts.map(Number))];
  if (ports.some((p) => p < 1 || p > 65_535)) throw new UsageError('--ports: port numbers run from 1 to 65535');
  if (ports.length > 16) throw new UsageError('--ports: at most 16 ports');
  return ports;
}

const shortProtocol = (p: string) => p.replace('TLSv1', 'TLS1').replace(/^TLS1$/, 'TLS1.0');

function portLines(p: EdgePortResult): string[] {
  if (p.state !== 'tls') return [`  ${p.note ?? p.state}`];
  const lines: string[] = [];
  const c = p.certificate;
  if (c) {
    const trust = c.trusted
      ? 'trusted'
      : c.selfSigned
        ? 'self-signed'
        : `untrusted (${c.trustProblem ?? 'unknown issuer'})`;
    lines.push(`  certificate ${c.subject}, issued by ${c.issuer}`);
    lines.push(
      `    expires ${c.validTo.slice(0, 10)} (${c.expired ? 'expired' : `${c.daysLeft} days`}), ${trust}, ${c.hostname.matches ? 'covers' : 'does NOT cover'} ${c.hostname.name}, ${c.key.type} ${c.key.bits}, ${c.signature.algorithm}`,
    );
  } else if (p.certificateError) lines.push(`  certificate not read: ${p.certificateError}`);
  const suites = p.ciphers.reduce((n, l) => n + l.suites.length, 0);
  lines.push(
    `  ${suites} suite${suites === 1 ? '' : 's'} accepted${p.serverPreference === null ? '' : p.serverPreference ? ', server order enforced' : ', client order followed'}`,
  );
  if (p.https?.status !== undefined)
    lines.push(`  HTTPS ${p.https.status}, HSTS ${p.https.hsts ? p.https.hsts.raw : 'none'}`);
  else if (p.https?.error) lines.push(`  HTTPS: ${p.https.error}`);
  for (const cap of p.grade?.caps ?? []) lines.push(`  cap ${cap.grade.padEnd(2)} ${cap.reason}`);
  return lines;
}

export const edgeCli: LocalScanCli = {
  kind: 'edge',
  help: `  --target T          host name, IP address or URL (its host is used; an http:// URL's port is the redirect check's)
  --ports LIST        TLS ports, comma-separated, at most 16 (default 443)
  --sni NAME          server name to send and to match the certificate against (default: the target's host)
  --ca-file PATH      extra trusted CA certificates (PEM bundle), e.g. a private CA
  --http-port N       plain-HTTP port for the redirect check (default 80; 0 skips the check)
  --timeout MS        per connection: connect, handshake or HTTP request (default ${DEFAULT_TIMEOUT_MS})
`,
  options: {
    ports: { type: 'string', short: 'p' },
    sni: { type: 'string' },
    'ca-file': { type: 'string' },
    'http-port': { type: 'string' },
    timeout: { type: 'string' },
  },
  prepare(values) {
    const ports = str(values.ports) !== undefined ? parsePorts(str(values.ports)!) : [443];
    const sni = str(values.sni);
    try {
      edgeTaskOptions({ ports, ...(sni !== undefined ? { sni } : {}) });
    } catch {
      throw new UsageError(`--sni: ${JSON.stringify(sni)} is not a host name`);
    }
    const settings: EdgeScannerSettings = {};
    const caFile = str(values['ca-file']);
    if (caFile !== undefined) {
      let pem: string;
      try {
        pem = readFileSync(caFile, 'utf8');
      } catch (e) {
        throw new UsageError(`--ca-file: cannot read ${caFile}: ${(e as Error).message}`);
      }
      if (!pem.includes('-----BEGIN CERTIFICATE-----'))
        throw new UsageError(`--ca-file: ${caFile} holds no PEM certificate`);
      settings.caCertificates = [pem];
    }
    const httpPort = parseIntFlag('http-port', str(values['http-port']), 0, 65_535);
    if (httpPort !== undefined) settings.httpPort = httpPort === 0 ? null : httpPort;
    const timeoutMs = parseIntFlag('timeout', str(values.timeout), 100, 60_000);
    if (timeoutMs !== undefined) settings.timeoutMs = timeoutMs;
    let scanner;
    try {
      scanner = createEdgeScanner(settings);
    } catch (e) {
      throw new UsageError(`--ca-file: ${caFile} holds a certificate that cannot be read: ${(e as Error).message}`);
    }
    return { scanner, options: { ports, ...(sni !== undefined ? { sni } : {}) } };
  },
  table(details, meta) {
    const d = details as unknown as EdgeResult;
    const lines = [
      `edge check of ${d.host}${d.address !== d.host ? ` (${d.address})` : ''}, SNI ${d.serverName}, in ${(meta.durationMs / 1000).toFixed(1)} s`,
      '',
    ];
    lines.push(
      renderTable(
        ['PORT', 'GRADE', 'IGNORING TRUST', 'PROTOCOLS'],
        d.ports.map((p) => [
          `${p.port}/tcp`,
          p.grade?.grade ?? '-',
          p.grade?.gradeIgnoringTrust ?? '-',
          p.state === 'tls'
            ? Object.entries(p.protocols)
                .filter(([, on]) => on)
                .map(([name]) => shortProtocol(name))
                .join(' ')
            : p.state,
        ]),
      ),
    );
    for (const p of d.ports) {
      lines.push('', `${p.port}/tcp`);
      lines.push(...portLines(p));
    }
    const r = d.httpRedirect;
    if (r)
      lines.push(
        '',
        `HTTP redirect: ${r.url} → ${r.location ?? '(none)'}: ${r.state}${r.status ? ` (${r.status})` : ''}${r.error ? `: ${r.error}` : ''}`,
      );
    return lines;
  },
  json(details) {
    const d = details as unknown as EdgeResult;
    return {
      host: d.host,
      address: d.address,
      serverName: d.serverName,
      ports: d.ports,
      ...(d.httpRedirect ? { httpRedirect: d.httpRedirect } : {}),
    };
  },
};
