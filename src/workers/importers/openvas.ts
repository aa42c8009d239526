// OpenVAS / Greenbone XML reports (GMP get_reports with the XML format, OpenVAS 8 to Greenbone
// 22.4): <report><report>...<results><result> with the NVT's OID, name, tags, refs and the
// result's host, port, threat and severity. Results Greenbone marks as false positives (by an
// override) and debug output are skipped; "Log" results are info findings. The scanned hosts and
// the scan's run status are kept as coverage (a scan stopped early is partial: nothing closes).
import type { Severity } from '../../findings/index.ts';
import { ImportError, severityFromScore, skip, tryFinalize, type ImportedFinding, type ReportMeta } from './common.ts';
import { child, children, childText, readXml, type XmlNode } from './xml-reader.ts';

const THREAT: Record<string, Severity | null> = {
  high: 'high',
  medium: 'medium',
  low: 'low',
  log: 'info',
  alarm: 'high',
  debug: null,
  'false positive': null,
};

/** NVT tags "k=v|k=v" (summary, insight, affected, impact, solution, vuldetect, cvss_base_vector). */
function tagsOf(nvt: XmlNode | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (childText(nvt, 'tags') ?? '').split('|')) {
    const i = part.indexOf('=');
    if (i > 0) out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return out;
}

function resultFinding(r: XmlNode): ReturnType<typeof build> | string {
  const threat = (childText(r, 'threat') ?? '').toLowerCase();
  if (threat in THREAT && THREAT[threat] === null)
    return threat === 'debug' ? 'debug output' : 'marked as a false positive in Greenbone';
  return build(r, threat);
}

function build(r: XmlNode, threat: string) {
  const nvt = child(r, 'nvt');
  const oid = nvt?.attrs.oid ?? '';
  const hostNode = child(r, 'host');
  const host = hostNode?.text.trim() ?? '';
  const hostname = childText(hostNode, 'hostname');
  const portText = childText(r, 'port') ?? '';
  const pm = /^(\d{1,5})\/(\w+)$/.exec(portText);
  const tags = tagsOf(nvt);
  const score = Number(childText(r, 'severity') ?? childText(nvt, 'cvss_base'));
  const severity: Severity =
    Number.isFinite(score) && score > 0 ? severityFromScore(score) : (THREAT[threat] ?? 'info');
  const refs = children(child(nvt, 'refs'), 'ref');
  const oldCves = (childText(nvt, 'cve') ?? '').split(/[,\s]+/).filter((c) => /^CVE-/i.test(c));
  const vector =
    tags.cvss_base_vector ??
    children(child(nvt, 'severities'), 'severity')[0]
      ?.children.find((c) => c.name === 'value')
      ?.text.trim();
  const description = childText(r, 'description');
  return {
    finding: {
      ruleId: oid,
      title: childText(nvt, 'name') ?? childText(r, 'name') ?? `NVT ${oid}`,
      description: [
        tags.summary,
        tags.insight && `Insight: ${tags.insight}`,
        tags.impact && `Impact: ${tags.impact}`,
        tags.affected && `Affected: ${tags.affected}`,
      ]
        .filter(Boolean)
        .join('\n\n'),
      severity,
      location: { host, ...(pm ? { port: Number(pm[1]), protocol: pm[2]!.toLowerCase() } : {}) },
      remediation: childText(nvt, 'solution') ?? tags.solution,
      ...(Number.isFinite(score) && score > 0 ? { cvss: { score, ...(vector ? { vector } : {}) } } : {}),
      cve: [...refs.filter((x) => x.attrs.type === 'cve').map((x) => x.attrs.id ?? ''), ...oldCves],
      cwe: refs.filter((x) => x.attrs.type === 'cwe').map((x) => x.attrs.id ?? ''),
      references: refs.filter((x) => x.attrs.type === 'url').map((x) => x.attrs.id ?? ''),
      // Several results of one NVT on one port differ by what the port carries (general/tcp vs 443/tcp).
      discriminator: pm ? undefined : portText || undefined,
      evidence: {
        ...(description
          ? {
              snippet: description,
              summary: description
                .split('\n')
                .find((l) => l.trim())
                ?.trim()
                .slice(0, 300),
            }
          : {}),
        data: {
          oid,
          ...(threat ? { threat } : {}),
          ...(childText(nvt, 'family') ? { family: childText(nvt, 'family') } : {}),
          ...(childText(child(r, 'qod'), 'value') ? { qod: Number(childText(child(r, 'qod'), 'value')) } : {}),
          ...(tags.vuldetect ? { detection: tags.vuldetect.slice(0, 500) } : {}),
        },
      },
    },
    hostname,
  };
}

export async function* parseOpenvas(
  stream: AsyncIterable<Buffer | string>,
  meta: ReportMeta,
): AsyncGenerator<ImportedFinding> {
  let rooted = false;
  let version: string | null = null;
  let n = 0;
  meta.tool = 'Greenbone / OpenVAS';
  const isRecord = (name: string) =>
    name === 'result' || name === 'host' || name === 'scan_run_status' || name === 'gmp' || name === 'omp';
  for await (const ev of readXml(stream, 'openvas', isRecord, meta.cleaned)) {
    if (!rooted) {
      rooted = true;
      if (ev.type !== 'open' || (ev.name !== 'report' && ev.name !== 'get_reports_response')) {
        throw new ImportError(
          'invalid_report',
          'openvas',
          'Not an OpenVAS / Greenbone XML report: the root element is not <report>',
        );
      }
      continue;
    }
    if (ev.type === 'open' || ev.type === 'close') continue;
    if (ev.type === 'record' && ev.node.name !== 'result') {
      const node = ev.node;
      if (node.name === 'host') meta.coverage.addHost(childText(node, 'ip') ?? (node.text.trim() || undefined), true);
      else if (node.name === 'scan_run_status') {
        const status = node.text.trim();
        meta.coverage.addClass(`scan_run_status:${status}`);
        if (status && !/^done$/i.test(status))
          meta.partial ??= `The scan's run status is "${status.slice(0, 40)}", not Done`;
      } else version = childText(node, 'version') ?? version;
      continue;
    }
    meta.records += 1;
    const where = `result ${++n} (line ${ev.line})`;
    if (ev.type === 'tooLarge') {
      skip(meta, where, 'result larger than the size Rampart reads');
      continue;
    }
    const built = resultFinding(ev.node);
    if (typeof built === 'string') {
      skip(meta, where, built);
      continue;
    }
    if (!built.finding.ruleId || !built.finding.location.host) {
      skip(meta, where, !built.finding.ruleId ? 'no NVT OID' : 'no host');
      continue;
    }
    meta.coverage.addRule(built.finding.ruleId);
    const f = tryFinalize(meta, where, built.finding, 'openvas');
    if (!f) continue;
    if (built.hostname && built.hostname !== built.finding.location.host) f.aliases = [built.hostname];
    yield f;
  }
  meta.coverage.addTool({ name: 'OpenVAS', version, scanner: 'template', key: 'openvas' });
}
