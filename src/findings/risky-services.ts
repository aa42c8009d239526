// Services that should rarely face a network, with why and what to do: one table for the port
// scanner (src/agent/scanners/port) and the nmap importer, so a service seen by either has the
// same rule id (`service.exposed.<key>`), severity and advice.
import type { Severity } from './findings-schemas.ts';

export interface RiskyService {
  key: string;
  label: string;
  severity: Severity;
  why: string;
  remediation: string;
}

export const RISKY_SERVICES: readonly RiskyService[] = [
  {
    key: 'telnet',
    label: 'Telnet',
    severity: 'high',
    why: 'Telnet sends credentials and sessions in clear text.',
    remediation: 'Disable Telnet and use SSH; if the device cannot, restrict the port to a management network.',
  },
  {
    key: 'ftp',
    label: 'FTP',
    severity: 'medium',
    why: 'FTP sends credentials in clear text and often allows anonymous access.',
    remediation: 'Replace FTP with SFTP or FTPS, disable anonymous login, or restrict the port by firewall.',
  },
  {
    key: 'redis',
    label: 'Redis',
    severity: 'high',
    why: 'Redis has no authentication by default; an exposed instance allows data theft and often remote code execution.',
    remediation:
      'Bind Redis to localhost or a private network, enable protected-mode and ACLs (requirepass), and firewall port 6379.',
  },
  {
    key: 'mongodb',
    label: 'MongoDB',
    severity: 'high',
    why: 'Internet-facing MongoDB instances are routinely wiped or ransomed.',
    remediation: 'Bind MongoDB to private interfaces, enable authorization, and firewall port 27017.',
  },
  {
    key: 'mysql',
    label: 'MySQL',
    severity: 'medium',
    why: 'A database listener reachable from untrusted networks invites credential brute force and exploits.',
    remediation:
      'Bind MySQL to localhost or a private network (bind-address) and allow only application hosts by firewall.',
  },
  {
    key: 'postgresql',
    label: 'PostgreSQL',
    severity: 'medium',
    why: 'A database listener reachable from untrusted networks invites credential brute force and exploits.',
    remediation: 'Set listen_addresses to private interfaces, restrict pg_hba.conf, and firewall port 5432.',
  },
  {
    key: 'rdp',
    label: 'RDP',
    severity: 'high',
    why: 'Exposed RDP is a leading ransomware entry point (brute force, BlueKeep-class bugs).',
    remediation: 'Put RDP behind a VPN or RD Gateway with MFA and block port 3389 from the internet.',
  },
  {
    key: 'smb',
    label: 'SMB',
    severity: 'high',
    why: 'SMB exposed to untrusted networks enabled worms such as WannaCry.',
    remediation: 'Block ports 139 and 445 at the perimeter; SMB should only be reachable inside trusted networks.',
  },
  {
    key: 'elasticsearch',
    label: 'Elasticsearch',
    severity: 'high',
    why: 'Elasticsearch without security exposes all indexed data.',
    remediation:
      'Enable Elasticsearch security (authentication and TLS), bind to private interfaces, and firewall ports 9200/9300.',
  },
  {
    key: 'memcached',
    label: 'Memcached',
    severity: 'high',
    why: 'Memcached has no authentication and is abused for data leaks and UDP amplification attacks.',
    remediation: 'Bind memcached to localhost (-l 127.0.0.1), disable UDP (-U 0), and firewall port 11211.',
  },
  {
    key: 'docker',
    label: 'Docker API',
    severity: 'critical',
    why: 'An unauthenticated Docker API gives root on the host to anyone who reaches it.',
    remediation:
      'Do not expose the Docker socket over TCP; if required, enable TLS client authentication (--tlsverify) and firewall ports 2375/2376.',
  },
];

/** nmap's and other scanners' names for the same services. */
const ALIASES: Readonly<Record<string, string>> = {
  'ms-wbt-server': 'rdp',
  'microsoft-ds': 'smb',
  'netbios-ssn': 'smb',
  mongod: 'mongodb',
  memcache: 'memcached',
};

/**
 * The entry for an identified service: by its name (an `ssl/` prefix ignored, nmap's aliases
 * mapped), else by product (Elasticsearch and Docker often answer as plain HTTP).
 */
export function riskyService(name: string | undefined, product = '', port?: number): RiskyService | undefined {
  const n = (name ?? '').toLowerCase().replace(/^ssl\//, '');
  const p = product.toLowerCase();
  const byName = ALIASES[n] ?? n;
  const key = RISKY_SERVICES.some((r) => r.key === byName)
    ? byName
    : p.includes('elasticsearch') || (n === 'wap-wsp' && port === 9200)
      ? 'elasticsearch'
      : p.includes('docker')
        ? 'docker'
        : byName;
  return RISKY_SERVICES.find((r) => r.key === key);
}
