// Findings of a container scan: one per (advisory, package) found vulnerable, and the image
// configuration checks. Rule ids are stable: the advisory id, or `container/<check>`; what varies
// (package, version, variable name, port) is in the location and discriminator.
import type { NormalizedFindingInput, Severity } from '../../../findings/index.ts';
import type { ImageConfig } from './image.ts';
import type { Package } from './inventory.ts';
import { advisorySeverity, cveIds, type AdvisoryMatch } from './osv.ts';

export interface Vulnerability {
  package: Package;
  match: AdvisoryMatch;
  severity: Severity;
  cvss?: { score: number; vector: string };
}

const PREFERRED_ID = [/^GHSA-/, /^(?:DSA|DLA|USN|ALSA|RLSA)-/, /^CVE-/];
const idRank = (id: string) => {
  const i = PREFERRED_ID.findIndex((re) => re.test(id));
  return i < 0 ? PREFERRED_ID.length : i;
};

/**
 * One vulnerability per package and issue: advisories that alias each other (a GHSA and the PYSEC
 * record of the same CVE) are reported once, under the preferred id.
 */
export function dedupeVulnerabilities(vulns: Vulnerability[]): Vulnerability[] {
  const sorted = [...vulns].sort(
    (a, b) => idRank(a.match.record.id) - idRank(b.match.record.id) || (a.match.record.id < b.match.record.id ? -1 : 1),
  );
  const seen = new Map<Package, Set<string>>();
  const out: Vulnerability[] = [];
  for (const v of sorted) {
    const ids = [v.match.record.id, ...(v.match.record.aliases ?? [])];
    const s = seen.get(v.package) ?? new Set<string>();
    seen.set(v.package, s);
    if (ids.some((id) => s.has(id))) continue;
    for (const id of ids) s.add(id);
    out.push(v);
  }
  return out;
}

export function vulnerabilityFor(pkg: Package, match: AdvisoryMatch): Vulnerability {
  const { severity, cvss } = advisorySeverity(match.record, match.affected);
  return cvss ? { package: pkg, match, severity, cvss } : { package: pkg, match, severity };
}

const cweOf = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && /^CWE-\d{1,6}$/i.test(x)).slice(0, 20) : [];
const httpUrls = (urls: string[]) =>
  urls.filter((u) => /^https?:\/\/[^\s]+$/i.test(u) && u.length <= 2_000 && URL.canParse(u)).slice(0, 20);
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function vulnerabilityFinding(v: Vulnerability): NormalizedFindingInput {
  const { record } = v.match;
  const p = v.package;
  const fixed = v.match.fixed;
  const cve = cveIds(record);
  const cwe = cweOf(record.database_specific?.cwe_ids);
  const references = httpUrls((record.references ?? []).map((r) => r.url));
  const what = record.summary?.trim() || (cve[0] && cve[0] !== record.id ? cve[0] : 'known vulnerability');
  const binaries = p.binaries && (p.binaries.length > 1 || p.binaries[0] !== p.name) ? p.binaries : undefined;
  return {
    ruleId: record.id,
    title: clip(`${p.name} ${p.version}: ${what} (${record.id})`, 500),
    severity: v.severity,
    ...(v.cvss ? { cvss: v.cvss } : {}),
    ...(cve.length ? { cve } : {}),
    ...(cwe.length ? { cwe } : {}),
    description: clip(
      [
        `${p.name} ${p.version} (${p.ecosystem}${binaries ? `, installed as ${binaries.join(', ')}` : ''}) is affected by ${record.id}${cve.length && !cve.includes(record.id) ? ` (${cve.join(', ')})` : ''}.`,
        record.details?.trim() ?? '',
      ]
        .filter(Boolean)
        .join('\n\n'),
      20_000,
    ),
    location: { package: p.name, version: p.version, ...(p.file ? { file: p.file } : {}) },
    discriminator: clip(`${p.ecosystem}:${p.name}`, 200),
    remediation: fixed
      ? `Upgrade ${p.name} to ${fixed} or later${p.type === 'dpkg' || p.type === 'apk' || p.type === 'rpm' ? ' (rebuild the image on an updated base, or upgrade the package in it)' : ''}.`
      : `No fixed version of ${p.name} is published for ${p.ecosystem} yet; remove the package if it is not needed, or accept the risk until a fix is released.`,
    ...(references.length ? { references } : {}),
    evidence: {
      summary: `${p.name} ${p.version} is installed; ${fixed ? `fixed in ${fixed}` : 'no fix published'}.`,
      data: {
        ecosystem: p.ecosystem,
        package: p.name,
        installed: p.version,
        ...(fixed ? { fixed } : {}),
        ...(binaries ? { binaries: binaries.slice(0, 50) } : {}),
        ...(record.aliases?.length ? { aliases: record.aliases.slice(0, 20) } : {}),
      },
    },
  };
}

// ---- image configuration --------------------------------------------------------------------

const SECRET_NAME_RE =
  /(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH_?KEY|CLIENT_?SECRET)/i;
// Names that point at a secret rather than hold one (…_FILE is the Docker secrets convention).
const SECRET_REFERENCE_NAME_RE = /(?:_FILE|_PATH|_DIR|_URL_FILE)$/i;
const SECRET_VALUE_RES: { re: RegExp; kind: string }[] = [
  { re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/, kind: 'an AWS access key id' },
  { re: /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/, kind: 'a private key' },
  { re: /\bgh[pousr]_[A-Za-z0-9]{36,}\b/, kind: 'a GitHub token' },
  { re: /\bxox[abprs]-[A-Za-z0-9-]{10,}/, kind: 'a Slack token' },
  { re: /\bglpat-[A-Za-z0-9_-]{20,}\b/, kind: 'a GitLab token' },
  { re: /\bsk_live_[A-Za-z0-9]{20,}\b/, kind: 'a Stripe secret key' },
];

/** Values that are plainly not a secret: empty, a placeholder, a reference to a file or variable. */
function placeholder(value: string): boolean {
  const v = value.trim();
  return (
    v === '' ||
    /^(?:changeme|change-me|xxx+|\*+|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\/run\/secrets\/.*|true|false|none|null)$/i.test(
      v,
    )
  );
}

/** What makes an Env entry look like a secret, or null. The value itself is never returned. */
export function secretInEnv(entry: string): { name: string; reason: string } | null {
  const eq = entry.indexOf('=');
  if (eq <= 0) return null;
  const name = entry.slice(0, eq);
  const value = entry.slice(eq + 1);
  for (const { re, kind } of SECRET_VALUE_RES)
    if (re.test(value)) return { name, reason: `its value looks like ${kind}` };
  if (SECRET_NAME_RE.test(name) && !SECRET_REFERENCE_NAME_RE.test(name) && !placeholder(value))
    return { name, reason: 'its name says it holds a secret and it has a value' };
  return null;
}

const RISKY_PORTS: Record<number, { service: string; severity: Severity; why: string }> = {
  21: { service: 'FTP', severity: 'low', why: 'FTP sends credentials in clear text.' },
  22: {
    service: 'SSH',
    severity: 'low',
    why: 'An SSH server inside a container is another way in to keep patched and locked down; use `docker exec` or an orchestrator instead.',
  },
  23: { service: 'Telnet', severity: 'medium', why: 'Telnet sends credentials and sessions in clear text.' },
  2375: {
    service: 'Docker API (plain)',
    severity: 'high',
    why: 'An unauthenticated Docker API gives root on the host to anyone who reaches it.',
  },
  5900: { service: 'VNC', severity: 'low', why: 'VNC is often unauthenticated or weakly authenticated.' },
};

const isRoot = (user: string) => user === '' || /^(?:root|0)(?::.*)?$/.test(user);

const ADD_URL_RE = /\bADD\s+((?:--\S+\s+)*)(https?:\/\/\S+)/i;

/** Findings from the image config: root user, secrets in Env, risky exposed ports, ADD of remote URLs. */
export function configFindings(config: ImageConfig): NormalizedFindingInput[] {
  const out: NormalizedFindingInput[] = [];
  // The config is the archive's JSON: any field may be missing or of the wrong type.
  const c = typeof config.config === 'object' && config.config !== null ? config.config : {};
  const given = typeof c.User === 'string' ? c.User.trim() : '';
  if (isRoot(given)) {
    out.push({
      ruleId: 'container/runs-as-root',
      title: 'Container runs as root',
      severity: 'medium',
      description: `The image ${given ? `sets USER ${given}` : 'sets no USER'}, so its processes run as root inside the container. A process compromised through any bug then has root's power over the container's files and a shorter path to the host (a kernel or runtime escape, a mounted socket, a host path).`,
      location: { path: 'config.User' },
      remediation:
        'Create an unprivileged user in the Dockerfile (e.g. `RUN useradd -r -u 10001 app`) and end with `USER 10001`; give it ownership of only what it must write.',
      evidence: { summary: given ? `User: ${given}` : 'User is not set', data: { user: given || null } },
    });
  }
  const seenSecrets = new Set<string>();
  for (const entry of Array.isArray(c.Env) ? c.Env : []) {
    if (typeof entry !== 'string') continue;
    const hit = secretInEnv(entry);
    if (!hit || seenSecrets.has(hit.name)) continue;
    seenSecrets.add(hit.name);
    const name = clip(hit.name, 200);
    out.push({
      ruleId: 'container/secret-in-env',
      title: `Secret in the image environment: ${name}`,
      severity: 'high',
      description: `The image config sets the environment variable ${name}, and ${hit.reason}. Anyone who can pull the image can read it with \`docker inspect\`, and it is kept in every copy and layer cache of the image.`,
      location: { path: 'config.Env' },
      discriminator: name,
      remediation: `Remove ${name} from the image (ENV or ARG in the Dockerfile) and rotate the secret. Pass secrets at run time (orchestrator secrets, a mounted file, or a secrets manager); use BuildKit \`--mount=type=secret\` for build-time secrets.`,
      evidence: { summary: `Env sets ${name} (value not shown)`, data: { variable: name } },
    });
  }
  for (const key of typeof c.ExposedPorts === 'object' && c.ExposedPorts !== null ? Object.keys(c.ExposedPorts) : []) {
    const m = /^(\d{1,5})(?:\/(tcp|udp|sctp))?$/i.exec(key.trim());
    if (!m) continue;
    const port = Number(m[1]);
    const protocol = (m[2] ?? 'tcp').toLowerCase();
    const risky = RISKY_PORTS[port];
    if (!risky || protocol !== 'tcp') continue;
    out.push({
      ruleId: 'container/risky-port-exposed',
      title: `Image exposes ${risky.service} on ${port}/${protocol}`,
      severity: risky.severity,
      description: `The image declares EXPOSE ${port}/${protocol} (${risky.service}). ${risky.why}`,
      location: { port, protocol },
      discriminator: `${port}/${protocol}`,
      remediation: `Drop the ${risky.service} service from the image, or do not publish the port beyond a trusted network.`,
      evidence: { summary: `ExposedPorts includes ${port}/${protocol}`, data: { port, protocol } },
    });
  }
  const seenUrls = new Set<string>();
  for (const h of Array.isArray(config.history) ? config.history : []) {
    const m = typeof h?.created_by === 'string' ? ADD_URL_RE.exec(h.created_by) : null;
    if (!m || /--checksum=/.test(m[1] ?? '')) continue;
    let where: string;
    try {
      const u = new URL(m[2]!);
      // The query string may carry a token: identify the download by origin and path only.
      where = clip(`${u.origin}${u.pathname}`, 200);
    } catch {
      continue;
    }
    if (seenUrls.has(where)) continue;
    seenUrls.add(where);
    out.push({
      ruleId: 'container/add-remote-url',
      title: 'Image build downloads a file with ADD and no checksum',
      severity: 'low',
      description: `A layer was built with \`ADD ${where}\`. ADD of a URL fetches whatever the server returns at build time, unverified, so a compromised or changed download ends up in the image.`,
      location: { path: 'history' },
      discriminator: where,
      remediation:
        'Pin the download: `ADD --checksum=sha256:<digest> <url> <dest>`, or fetch with curl and verify a checksum or signature in the same RUN step.',
      evidence: { summary: `ADD ${where}`, data: { url: where } },
    });
  }
  return out;
}
