// nmap -oX: every open port is an info finding (port.open.<proto>.<port>); a service that should
// rarely face a network (telnet, redis, databases, RDP, SMB, Docker API, ...) adds an
// exposed-service finding (service.exposed.<name>) with its severity and a remediation; CVEs that
// the vulners NSE script lists for a port become one finding each (rule id = the CVE).
import type { Readable } from 'node:stream';
import type { NormalizedFinding, Severity } from '../../findings/index.ts';
import { ImportError, severityFromScore, skip, tryFinalize, type ReportMeta } from './common.ts';
import { tokenizeXml } from './xml-tokenizer.ts';

interface RiskyService {
  key: string;
  label: string;
  severity: Severity;
  why: string;
  remediation: string;
}

const RISKY: RiskyService[] = [
  { key: 'telnet', label: 'Telnet', severity: 'high', why: 'Telnet sends credentials and sessions in clear text.', remediation: 'Disable Telnet and use SSH; if the device cannot, restrict the port to a management network.' },
  { key: 'ftp', label: 'FTP', severity: 'medium', why: 'FTP sends credentials in clear text and often allows anonymous access.', remediation: 'Replace FTP with SFTP or FTPS, disable anonymous login, or restrict the port by firewall.' },
  { key: 'redis', label: 'Redis', severity: 'high', why: 'Redis has no authentication by default; an exposed instance allows data theft and often remote code execution.', remediation: 'Bind Redis to localhost or a private network, enable protected-mode and ACLs (requirepass), and firewall port 6379.' },
  { key: 'mongodb', label: 'MongoDB', severity: 'high', why: 'Internet-facing MongoDB instances are routinely wiped or ransomed.', remediation: 'Bind MongoDB to private interfaces, enable authorization, and firewall port 27017.' },
  { key: 'mysql', label: 'MySQL', severity: 'medium', why: 'A database listener reachable from untrusted networks invites credential brute force and exploits.', remediation: 'Bind MySQL to localhost or a private network (bind-address) and allow only application hosts by firewall.' },
  { key: 'postgresql', label: 'PostgreSQL', severity: 'medium', why: 'A database listener reachable from untrusted networks invites credential brute force and exploits.', remediation: 'Set listen_addresses to private interfaces, restrict pg_hba.conf, and firewall port 5432.' },
  { key: 'rdp', label: 'RDP', severity: 'high', why: 'Exposed RDP is a leading ransomware entry point (brute force, BlueKeep-class bugs).', remediation: 'Put RDP behind a VPN or RD Gateway with MFA and block port 3389 from the internet.' },
  { key: 'smb', label: 'SMB', severity: 'high', why: 'SMB exposed to untrusted networks enabled worms such as WannaCry.', remediation: 'Block ports 139 and 445 at the perimeter; SMB should only be reachable inside trusted networks.' },
  { key: 'elasticsearch', label: 'Elasticsearch', severity: 'high', why: 'Elasticsearch without security exposes all indexed data.', remediation: 'Enable Elasticsearch security (authentication and TLS), bind to private interfaces, and firewall ports 9200/9300.' },
  { key: 'memcached', label: 'Memcached', severity: 'high', why: 'Memcached has no authentication and is abused for data leaks and UDP amplification attacks.', remediation: 'Bind memcached to localhost (-l 127.0.0.1), disable UDP (-U 0), and firewall port 11211.' },
  { key: 'docker', label: 'Docker API', severity: 'critical', why: 'An unauthenticated Docker API gives root on the host to anyone who reaches it.', remediation: 'Do not expose the Docker socket over TCP; if required, enable TLS client authentication (--tlsverify) and firewall ports 2375/2376.' },
];

/** Maps nmap's service name (and product) to a risky-service entry. */
function riskyService(name: string, product: string, port: number): RiskyService | undefined {
  const n = name.toLowerCase();
  const p = product.toLowerCase();
  const key =
    n === 'telnet' ? 'telnet'
    : n === 'ftp' ? 'ftp'
    : n === 'redis' ? 'redis'
    : n === 'mongodb' || n === 'mongod' ? 'mongodb'
    : n === 'mysql' ? 'mysql'
    : n === 'postgresql' ? 'postgresql'
    : n === 'ms-wbt-server' || n === 'rdp' ? 'rdp'
    : n === 'microsoft-ds' || n === 'netbios-ssn' || n === 'smb' ? 'smb'
    : n === 'elasticsearch' || p.includes('elasticsearch') || (n === 'wap-wsp' && port === 9200) ? 'elasticsearch'
    : n === 'memcache' || n === 'memcached' ? 'memcached'
    : n === 'docker' || p.includes('docker') ? 'docker'
    : undefined;
  return key ? RISKY.find((r) => r.key === key) : undefined;
}

interface PortCtx {
  protocol: string;
  port: number;
  state: string;
  reason: string;
  service: Record<string, string>;
  scripts: { id: string; output: string }[];
}

export async function* parseNmap(stream: Readable, meta: ReportMeta): AsyncGenerator<NormalizedFinding> {
  let rootChecked = false;
  let host: { up: boolean; address: string | null; hostname: string | null } | null = null;
  let port: PortCtx | null = null;
  for await (const ev of tokenizeXml(stream)) {
    if (!rootChecked) {
      rootChecked = true;
      if (ev.type !== 'open' || ev.name !== 'nmaprun') throw new ImportError('invalid_report', 'nmap', 'Not an nmap XML report: the root element is not <nmaprun>', { line: ev.line });
      meta.tool = `nmap ${ev.attrs.version ?? ''}`.trim();
      continue;
    }
    if (ev.type === 'open') {
      const a = ev.attrs;
      if (ev.name === 'host') host = { up: true, address: null, hostname: null };
      else if (!host) continue;
      else if (ev.name === 'status') host.up = a.state !== 'down';
      else if (ev.name === 'address' && a.addrtype !== 'mac' && !host.address) host.address = a.addr ?? null;
      else if (ev.name === 'hostname' && !host.hostname && (a.type === 'user' || a.type === 'PTR' || !a.type)) host.hostname = a.name ?? null;
      else if (ev.name === 'port') port = { protocol: (a.protocol ?? 'tcp').toLowerCase(), port: Number(a.portid), state: '', reason: '', service: {}, scripts: [] };
      else if (port && ev.name === 'state') {
        port.state = a.state ?? '';
        port.reason = a.reason ?? '';
      } else if (port && ev.name === 'service') port.service = { ...a };
      else if (port && ev.name === 'script' && a.id) port.scripts.push({ id: a.id, output: a.output ?? '' });
      if (ev.name === 'port' && ev.selfClosing) port = null;
    } else if (ev.name === 'port' && port && host) {
      const p = port;
      port = null;
      if (p.state !== 'open' || !host.up) continue;
      const where = `${host.address ?? '?'}:${p.port}/${p.protocol}`;
      if (!Number.isInteger(p.port) || p.port < 0 || p.port > 65_535) {
        skip(meta, where, 'invalid port number');
        continue;
      }
      if (!host.address && !host.hostname) {
        skip(meta, where, 'host has no address');
        continue;
      }
      yield* portFindings(host.hostname ?? host.address!, host.address, p, meta, where);
    } else if (ev.name === 'host') host = null;
  }
}

function* portFindings(hostName: string, address: string | null, p: PortCtx, meta: ReportMeta, where: string): Generator<NormalizedFinding> {
  const s = p.service;
  const name = s.name ?? 'unknown';
  const product = [s.product, s.version, s.extrainfo ? `(${s.extrainfo})` : undefined].filter(Boolean).join(' ');
  const location = { host: hostName, port: p.port, protocol: p.protocol };
  const data: Record<string, unknown> = { service: name, ...(address && address !== hostName ? { address } : {}), reason: p.reason || undefined };
  for (const k of ['product', 'version', 'extrainfo', 'tunnel', 'method', 'conf', 'ostype'] as const) if (s[k]) data[k] = s[k];
  const scripts = p.scripts.slice(0, 20).map((x) => ({ id: x.id, output: x.output.slice(0, 2_000) }));
  if (scripts.length) data.scripts = scripts;
  const snippet = p.scripts.map((x) => `${x.id}:\n${x.output.trim()}`).join('\n\n');
  const service = `${s.tunnel === 'ssl' ? 'ssl/' : ''}${name}`;
  const open = tryFinalize(meta, where, {
      ruleId: `port.open.${p.protocol}.${p.port}`,
      title: `Open port ${p.port}/${p.protocol} (${service})`,
      severity: 'info',
      description: `Port ${p.port}/${p.protocol} on ${hostName} is open${product ? `; the service identifies as ${product}` : ''}.`,
      location,
      evidence: { summary: `${p.port}/${p.protocol} open ${service}${product ? ` ${product}` : ''}`, data, ...(snippet ? { snippet } : {}) },
  });
  if (open) yield open;
  yield* vulnersFindings(hostName, p, product, meta, where);
  const risky = riskyService(name, s.product ?? '', p.port);
  if (!risky) return;
  const exposed = tryFinalize(meta, where, {
      ruleId: `service.exposed.${risky.key}`,
      title: `${risky.label} exposed on ${p.port}/${p.protocol}`,
      severity: risky.severity,
      description: `${risky.label} answers on ${hostName}:${p.port}/${p.protocol}${product ? ` (${product})` : ''}. ${risky.why}`,
      location,
      remediation: risky.remediation,
      evidence: { summary: `${p.port}/${p.protocol} open ${service}${product ? ` ${product}` : ''}`, data },
  });
  if (exposed) yield exposed;
}

/** At most this many CVEs per port from vulners (it can list hundreds for an old daemon). */
const MAX_VULNERS_PER_PORT = 200;

function* vulnersFindings(hostName: string, p: PortCtx, product: string, meta: ReportMeta, where: string): Generator<NormalizedFinding> {
  const seen = new Set<string>();
  for (const script of p.scripts) {
    if (script.id !== 'vulners') continue;
    // Lines look like "\tCVE-2023-38408\t9.8\thttps://vulners.com/cve/CVE-2023-38408\t*EXPLOIT*".
    for (const line of script.output.split('\n')) {
      const m = /^\s*(CVE-\d{4}-\d{4,9})\s+(\d{1,2}(?:\.\d)?)\s*(https?:\/\/\S+)?/i.exec(line);
      if (!m || seen.has(m[1]!.toUpperCase()) || seen.size >= MAX_VULNERS_PER_PORT) continue;
      const id = m[1]!.toUpperCase();
      seen.add(id);
      const score = Number(m[2]);
      const f = tryFinalize(meta, where, {
        ruleId: id,
        title: `${id} in ${product || p.service.name || 'the service'} on ${p.port}/${p.protocol}`,
        description: `nmap's vulners script matched the detected version${product ? ` (${product})` : ''} to ${id}. The match is by version only; backported fixes can make it a false positive.`,
        severity: severityFromScore(score),
        cvss: { score },
        cve: [id],
        location: { host: hostName, port: p.port, protocol: p.protocol },
        references: m[3] ? [m[3]] : [],
        remediation: `Upgrade ${product || 'the service'} to a release that fixes ${id}, or confirm that the installed build carries the fix.`,
        evidence: { summary: line.trim(), data: { source: 'nmap vulners', exploit: /\*EXPLOIT\*/.test(line) } },
      });
      if (f) yield f;
    }
  }
}
