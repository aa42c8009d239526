// Findings of a port scan, shaped like the nmap importer's (src/workers/importers/nmap.ts) so a
// port seen by either scanner has the same identity: `port.open.tcp.<port>` (info) for every
// open port and `service.exposed.<service>` for a service that should rarely face a network.
import type { NormalizedFindingInput, Severity } from '../../../findings/index.ts';
import type { PortScanResult, OpenPort } from './engine.ts';

interface RiskyService {
  key: string;
  label: string;
  severity: Severity;
  why: string;
  remediation: string;
}

export const RISKY_SERVICES: readonly RiskyService[] = [
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

/** The risky-service entry for an identified service name (ssl/ prefixes ignored). */
export function riskyService(service: string | undefined): RiskyService | undefined {
  const n = (service ?? '').toLowerCase().replace(/^ssl\//, '');
  const key =
    n === 'ms-wbt-server' || n === 'rdp' ? 'rdp'
    : n === 'microsoft-ds' || n === 'netbios-ssn' || n === 'smb' ? 'smb'
    : n === 'mongod' ? 'mongodb'
    : n === 'memcache' ? 'memcached'
    : n;
  return RISKY_SERVICES.find((r) => r.key === key);
}

const productOf = (p: OpenPort) => [p.product, p.version].filter(Boolean).join(' ');

function evidence(p: OpenPort, address: string, host: string) {
  const service = p.service ?? 'unknown';
  const product = productOf(p);
  const data: Record<string, unknown> = {
    service,
    identifiedBy: p.identifiedBy,
    ...(address !== host ? { address } : {}),
    ...(p.product ? { product: p.product } : {}),
    ...(p.version ? { version: p.version } : {}),
    ...(p.tls ? { tls: true } : {}),
    ...(p.banner ? { banner: p.banner } : {}),
    ...p.data,
  };
  return { summary: `${p.port}/tcp open ${service}${product ? ` ${product}` : ''}`, data, ...(p.banner ? { snippet: p.banner } : {}) };
}

/** The findings for a scan's open ports (valid NormalizedFinding input). */
export function portFindings(result: Pick<PortScanResult, 'host' | 'address' | 'open'>): NormalizedFindingInput[] {
  const out: NormalizedFindingInput[] = [];
  for (const p of result.open) {
    const location = { host: result.host, port: p.port, protocol: 'tcp' };
    const service = p.service ?? 'unknown';
    const product = productOf(p);
    const ev = evidence(p, result.address, result.host);
    out.push({
      ruleId: `port.open.tcp.${p.port}`,
      title: `Open port ${p.port}/tcp (${service})`,
      severity: 'info',
      description: `Port ${p.port}/tcp on ${result.host} accepts connections${p.service ? `; the service looks like ${service}${product ? ` (${product})` : ''}` : ''}${p.identifiedBy === 'port' ? ', judged by the port number only' : ''}.`,
      location,
      evidence: ev,
    });
    const risky = riskyService(p.service);
    if (!risky) continue;
    out.push({
      ruleId: `service.exposed.${risky.key}`,
      title: `${risky.label} exposed on ${p.port}/tcp`,
      severity: risky.severity,
      description: `${risky.label} answers on ${result.host}:${p.port}/tcp${product ? ` (${product})` : ''}${p.identifiedBy === 'port' ? ' (recognised by its port number; the service did not identify itself)' : ''}. ${risky.why}`,
      location,
      remediation: risky.remediation,
      evidence: ev,
    });
  }
  return out;
}
