// nmap -oX: every open port is an info finding (port.open.<proto>.<port>); a service that should
// rarely face a network (telnet, redis, databases, RDP, SMB, Docker API, ...) adds an
// exposed-service finding (service.exposed.<name>) with its severity and a remediation; CVEs that
// the vulners NSE script lists for a port become one finding each (rule id = the CVE).
import { riskyService } from '../../findings/risky-services.ts';
import { ImportError, severityFromScore, skip, tryFinalize, type ImportedFinding, type ReportMeta } from './common.ts';
import { parsePortList } from './coverage.ts';
import { child, children, readXml, type XmlNode } from './xml-reader.ts';

interface PortCtx {
  protocol: string;
  port: number;
  state: string;
  reason: string;
  service: Record<string, string>;
  scripts: { id: string; output: string }[];
}

interface HostCtx {
  up: boolean;
  addresses: string[];
  hostnames: string[];
}

function portOf(node: XmlNode): PortCtx {
  const state = child(node, 'state')?.attrs ?? {};
  return {
    protocol: (node.attrs.protocol ?? 'tcp').toLowerCase(),
    port: Number(node.attrs.portid),
    state: state.state ?? '',
    reason: state.reason ?? '',
    service: { ...(child(node, 'service')?.attrs ?? {}) },
    scripts: children(node, 'script')
      .filter((s) => s.attrs.id)
      .map((s) => ({ id: s.attrs.id!, output: s.attrs.output ?? '' })),
  };
}

export async function* parseNmap(
  stream: AsyncIterable<Buffer | string>,
  meta: ReportMeta,
): AsyncGenerator<ImportedFinding> {
  let rootChecked = false;
  let host: HostCtx | null = null;
  let inHostnames = false;
  for await (const ev of readXml(stream, 'nmap', (name) => name === 'port', meta.cleaned)) {
    if (!rootChecked) {
      rootChecked = true;
      if (ev.type !== 'open' || ev.name !== 'nmaprun') {
        throw new ImportError('invalid_report', 'nmap', 'Not an nmap XML report: the root element is not <nmaprun>', {
          line: ev.type === 'close' ? undefined : ev.line,
        });
      }
      meta.tool = `nmap ${ev.attrs.version ?? ''}`.trim();
      meta.coverage.addTool({ name: 'nmap', version: ev.attrs.version ?? null, scanner: 'port', key: null });
      continue;
    }
    if (ev.type === 'open') {
      const a = ev.attrs;
      if (ev.name === 'scaninfo') {
        meta.coverage.addClass(`${a.type ?? 'scan'}/${a.protocol ?? 'tcp'}`);
        const ranges = a.services ? parsePortList(a.services) : [];
        if (ranges.length) meta.coverage.addPorts((a.protocol ?? 'tcp').toLowerCase(), ranges);
        // The TCP ports probed, on the scan like a Rampart port scan's (hosts are left out: the
        // report's names are not yet the assets' hosts).
        if (ranges.length && (a.protocol ?? 'tcp').toLowerCase() === 'tcp')
          meta.scanCoverage = { ports: [...(meta.scanCoverage?.ports ?? []), ...ranges] };
      } else if (ev.name === 'host') host = { up: true, addresses: [], hostnames: [] };
      else if (!host) continue;
      else if (ev.name === 'status') host.up = a.state !== 'down';
      else if (ev.name === 'address' && a.addrtype !== 'mac' && a.addr) host.addresses.push(a.addr);
      else if (ev.name === 'hostnames') inHostnames = true;
      else if (ev.name === 'hostname' && inHostnames && a.name && !host.hostnames.includes(a.name))
        host.hostnames.push(a.name);
    } else if (ev.type === 'close') {
      if (ev.name === 'hostnames') inHostnames = false;
      else if (ev.name === 'host' && host) {
        for (const name of [...host.addresses, ...host.hostnames]) meta.coverage.addHost(name, host.up);
        host = null;
      }
    } else if (host) {
      meta.records += 1;
      const where = `${host.addresses[0] ?? host.hostnames[0] ?? '?'} port (line ${ev.line})`;
      if (ev.type === 'tooLarge') {
        skip(meta, where, 'port entry larger than the size Rampart reads');
        continue;
      }
      const p = portOf(ev.node);
      if (p.state !== 'open' || !host.up) {
        meta.records -= 1;
        continue;
      }
      const at = `${host.addresses[0] ?? host.hostnames[0] ?? '?'}:${p.port}/${p.protocol}`;
      if (!Number.isInteger(p.port) || p.port < 0 || p.port > 65_535) {
        skip(meta, at, 'invalid port number');
        continue;
      }
      // The address identifies the host; names are aliases the import matches to assets with.
      const hostName = host.addresses[0] ?? host.hostnames[0];
      if (!hostName) {
        skip(meta, at, 'host has no address');
        continue;
      }
      const aliases = [...host.addresses, ...host.hostnames].filter((x) => x !== hostName);
      for (const f of portFindings(hostName, host.hostnames[0] ?? null, p, meta, at)) {
        if (aliases.length) f.aliases = aliases;
        yield f;
      }
    }
  }
}

function* portFindings(
  hostName: string,
  alias: string | null,
  p: PortCtx,
  meta: ReportMeta,
  where: string,
): Generator<ImportedFinding> {
  const s = p.service;
  const name = s.name ?? 'unknown';
  const product = [s.product, s.version, s.extrainfo ? `(${s.extrainfo})` : undefined].filter(Boolean).join(' ');
  const location = { host: hostName, port: p.port, protocol: p.protocol };
  const data: Record<string, unknown> = {
    service: name,
    ...(alias && alias !== hostName ? { hostname: alias } : {}),
    reason: p.reason || undefined,
  };
  for (const k of ['product', 'version', 'extrainfo', 'tunnel', 'method', 'conf', 'ostype'] as const)
    if (s[k]) data[k] = s[k];
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
    evidence: {
      summary: `${p.port}/${p.protocol} open ${service}${product ? ` ${product}` : ''}`,
      data,
      ...(snippet ? { snippet } : {}),
    },
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

function* vulnersFindings(
  hostName: string,
  p: PortCtx,
  product: string,
  meta: ReportMeta,
  where: string,
): Generator<ImportedFinding> {
  const seen = new Set<string>();
  for (const script of p.scripts) {
    if (script.id !== 'vulners') continue;
    meta.coverage.addClass('script:vulners');
    // Lines look like "\tCVE-2023-38408\t9.8\thttps://vulners.com/cve/CVE-2023-38408\t*EXPLOIT*".
    for (const line of script.output.split('\n')) {
      const m = /^\s*(CVE-\d{4}-\d{4,9})\s+(\d{1,2}(?:\.\d)?)\s*(https?:\/\/\S+)?/i.exec(line);
      if (!m || seen.has(m[1]!.toUpperCase())) continue;
      if (seen.size >= MAX_VULNERS_PER_PORT) {
        // Said, not dropped: the result page counts what was left out.
        skip(meta, where, `vulners CVE beyond the first ${MAX_VULNERS_PER_PORT} of one port`);
        seen.add(m[1]!.toUpperCase());
        continue;
      }
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
