// Nessus v2 (.nessus, <NessusClientData_v2>), as Nessus and Tenable.sc export it: per
// <ReportHost>, its <HostProperties> (addresses and names the host is matched to an asset by)
// and one <ReportItem> per plugin and port. Every item is a finding (severity 0 is info), keyed
// by the plugin id in Nessus' namespace. The policy's port range and plugin set are kept as
// coverage.
import type { Severity } from '../../findings/index.ts';
import { extractUrls, ImportError, skip, tryFinalize, type ImportedFinding, type ReportMeta } from './common.ts';
import { parsePortList } from './coverage.ts';
import { children, childText, readXml, type XmlNode } from './xml-reader.ts';

const SEVERITY: Record<string, Severity> = { '0': 'info', '1': 'low', '2': 'medium', '3': 'high', '4': 'critical' };

function cvssOf(item: XmlNode): { score: number; vector?: string } | undefined {
  for (const [s, v] of [
    ['cvss4_base_score', 'cvss4_vector'],
    ['cvss3_base_score', 'cvss3_vector'],
    ['cvss_base_score', 'cvss_vector'],
  ] as const) {
    const score = Number(childText(item, s));
    if (childText(item, s) && Number.isFinite(score)) {
      const vector = childText(item, v)?.replace(/^CVSS2#/, '');
      return { score, ...(vector ? { vector } : {}) };
    }
  }
  return undefined;
}

function itemFinding(item: XmlNode, host: string) {
  const a = item.attrs;
  const port = Number(a.port);
  const protocol = (a.protocol ?? 'tcp').toLowerCase();
  const output = childText(item, 'plugin_output');
  const xrefs = children(item, 'xref').map((x) => x.text.trim());
  return {
    ruleId: a.pluginID ?? '',
    title: a.pluginName ?? childText(item, 'plugin_name') ?? `Nessus plugin ${a.pluginID ?? '?'}`,
    description: [childText(item, 'synopsis'), childText(item, 'description')].filter(Boolean).join('\n\n'),
    severity: SEVERITY[a.severity ?? ''] ?? ('info' as Severity),
    location: { host, ...(Number.isInteger(port) && port > 0 ? { port, protocol } : {}) },
    remediation: childText(item, 'solution'),
    cvss: cvssOf(item),
    cve: children(item, 'cve').map((c) => c.text.trim()),
    cwe: [
      ...children(item, 'cwe').map((c) => c.text.trim()),
      ...xrefs.filter((x) => /^CWE:/i.test(x)).map((x) => x.slice(4)),
    ],
    references: extractUrls(childText(item, 'see_also') ?? ''),
    evidence: {
      ...(output
        ? {
            snippet: output,
            summary: output
              .split('\n')
              .find((l) => l.trim())
              ?.trim()
              .slice(0, 300),
          }
        : {}),
      data: {
        pluginId: a.pluginID,
        ...(a.pluginFamily ? { family: a.pluginFamily } : {}),
        ...(a.svc_name ? { service: a.svc_name } : {}),
        ...(childText(item, 'risk_factor') ? { riskFactor: childText(item, 'risk_factor') } : {}),
        ...(childText(item, 'exploit_available')
          ? { exploitAvailable: childText(item, 'exploit_available') === 'true' }
          : {}),
      },
    },
  };
}

export async function* parseNessus(
  stream: AsyncIterable<Buffer | string>,
  meta: ReportMeta,
): AsyncGenerator<ImportedFinding> {
  let rooted = false;
  let host: { name: string; aliases: string[] } | null = null;
  let n = 0;
  meta.tool = 'Nessus';
  meta.coverage.addTool({ name: 'Nessus', version: null, scanner: 'template', key: 'nessus' });
  const isRecord = (name: string) => name === 'preference' || name === 'HostProperties' || name === 'ReportItem';
  for await (const ev of readXml(stream, 'nessus', isRecord, meta.cleaned)) {
    if (!rooted) {
      rooted = true;
      if (ev.type !== 'open' || ev.name !== 'NessusClientData_v2')
        throw new ImportError(
          'invalid_report',
          'nessus',
          'Not a Nessus v2 report: the root element is not <NessusClientData_v2>',
        );
      continue;
    }
    if (ev.type === 'open' && ev.name === 'ReportHost') host = { name: ev.attrs.name ?? '', aliases: [] };
    else if (ev.type === 'close' && ev.name === 'ReportHost') host = null;
    else if (ev.type === 'record' && ev.node.name === 'preference') {
      const name = childText(ev.node, 'name');
      const value = childText(ev.node, 'value') ?? '';
      if (name === 'port_range') meta.coverage.addPorts('tcp', value === 'all' ? [[1, 65_535]] : parsePortList(value));
      else if (name === 'plugin_set') {
        meta.coverage.rulesDeclared = true;
        for (const id of value.split(';')) meta.coverage.addRule(id.trim() || undefined);
      }
    } else if (ev.type === 'record' && ev.node.name === 'HostProperties' && host) {
      for (const tag of children(ev.node, 'tag')) {
        const v = tag.text.trim();
        if (
          v &&
          ['host-ip', 'host-fqdn', 'host-rdns', 'netbios-name'].includes(tag.attrs.name ?? '') &&
          v !== host.name &&
          !host.aliases.includes(v)
        )
          host.aliases.push(v);
      }
      meta.coverage.addHost(host.name, true);
    } else if (ev.type === 'record' || ev.type === 'tooLarge') {
      meta.records += 1;
      const where = `ReportItem ${++n} (line ${ev.line})`;
      if (ev.type === 'tooLarge') {
        skip(meta, where, 'item larger than the size Rampart reads');
        continue;
      }
      if (!host?.name) {
        skip(meta, where, 'item outside a ReportHost with a name');
        continue;
      }
      if (!ev.node.attrs.pluginID) {
        skip(meta, where, 'no pluginID');
        continue;
      }
      const f = tryFinalize(meta, where, itemFinding(ev.node, host.name), 'nessus');
      if (!f) continue;
      // A plugin that reported ran; without a plugin_set preference that is all the report says.
      meta.coverage.addRule(f.ruleId);
      if (host.aliases.length) f.aliases = host.aliases;
      yield f;
    }
  }
}
