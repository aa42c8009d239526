// Burp Suite issues XML ("Report issues" / "Save selected issues" as XML, Burp 1.7 to 2024):
// <issues burpVersion=...><issue> with the issue type, host, path, location, severity,
// confidence, background and detail (HTML), classifications (CWE links) and the base64 request
// and response. One finding per issue at host + path and the parameter it names; issues Burp
// marks "False positive" are skipped. Rule ids are Burp's issue type numbers (keyed by tool).
import type { Severity } from '../../findings/index.ts';
import {
  extractUrls,
  htmlToText,
  ImportError,
  skip,
  tryFinalize,
  type ImportedFinding,
  type ReportMeta,
} from './common.ts';
import { child, children, childText, readXml, type XmlNode } from './xml-reader.ts';

const SEVERITY: Record<string, Severity | null> = {
  high: 'high',
  medium: 'medium',
  low: 'low',
  information: 'info',
  info: 'info',
  'false positive': null,
};

function decoded(n: XmlNode | undefined): string | undefined {
  const t = n?.text;
  if (!t || !t.trim()) return undefined;
  return n.attrs.base64 === 'true' ? Buffer.from(t.trim(), 'base64').toString('utf8') : t;
}

function issueFinding(issue: XmlNode) {
  const hostNode = child(issue, 'host');
  const origin = (hostNode?.text ?? '').trim().replace(/\/+$/, '');
  const path = childText(issue, 'path') ?? '/';
  const location = childText(issue, 'location') ?? '';
  // "/search [q parameter]", "/ [Cookie: session]"
  const param = /\[(?:([^\]]+?) (?:parameter|cookie|header)|[^\]:]+: ([^\]]+))\]\s*$/i.exec(location);
  const url = /^https?:\/\//i.test(origin) ? `${origin}${path.startsWith('/') ? path : `/${path}`}` : '';
  const classifications = childText(issue, 'vulnerabilityClassifications') ?? '';
  const rr = child(issue, 'requestresponse');
  const request = decoded(child(rr, 'request'));
  const response = decoded(child(rr, 'response'));
  const detail = htmlToText(childText(issue, 'issueDetail') ?? '');
  const items = children(child(issue, 'issueDetailItems'), 'issueDetailItem')
    .map((x) => x.text.trim())
    .filter(Boolean);
  return {
    url,
    finding: {
      ruleId: childText(issue, 'type') ?? '',
      title: childText(issue, 'name') ?? 'Burp issue',
      description: [detail, htmlToText(childText(issue, 'issueBackground') ?? '')].filter(Boolean).join('\n\n'),
      severity: SEVERITY[(childText(issue, 'severity') ?? '').toLowerCase()] ?? ('info' as Severity),
      location: { url, ...(param ? { param: (param[1] ?? param[2])!.trim() } : {}) },
      remediation: htmlToText(
        [childText(issue, 'remediationDetail'), childText(issue, 'remediationBackground')].filter(Boolean).join('\n\n'),
      ),
      cwe: [...classifications.matchAll(/CWE-(\d{1,6})/g)].map((m) => Number(m[1])),
      references: extractUrls(childText(issue, 'references') ?? ''),
      evidence: {
        ...(detail ? { summary: detail.slice(0, 2_000) } : {}),
        ...(request ? { request } : {}),
        ...(response ? { response } : {}),
        ...(items.length ? { extracted: items.slice(0, 50) } : {}),
        data: {
          ...(childText(issue, 'confidence') ? { confidence: childText(issue, 'confidence') } : {}),
          ...(childText(issue, 'serialNumber') ? { serialNumber: childText(issue, 'serialNumber') } : {}),
          ...(hostNode?.attrs.ip ? { ip: hostNode.attrs.ip } : {}),
          ...(location ? { location } : {}),
        },
      },
    },
    ip: hostNode?.attrs.ip,
  };
}

export async function* parseBurp(
  stream: AsyncIterable<Buffer | string>,
  meta: ReportMeta,
): AsyncGenerator<ImportedFinding> {
  let rooted = false;
  let n = 0;
  meta.tool = 'Burp Suite';
  for await (const ev of readXml(stream, 'burp', (name) => name === 'issue', meta.cleaned)) {
    if (!rooted) {
      rooted = true;
      if (ev.type !== 'open' || ev.name !== 'issues')
        throw new ImportError(
          'invalid_report',
          'burp',
          'Not a Burp Suite issues report: the root element is not <issues>',
        );
      meta.tool = `Burp Suite ${ev.attrs.burpVersion ?? ''}`.trim();
      meta.coverage.addTool({
        name: 'Burp Suite',
        version: ev.attrs.burpVersion ?? null,
        scanner: 'webapp',
        key: 'burp',
      });
      continue;
    }
    if (ev.type !== 'record' && ev.type !== 'tooLarge') continue;
    meta.records += 1;
    const where = `issue ${++n} (line ${ev.line})`;
    if (ev.type === 'tooLarge') {
      skip(meta, where, 'issue larger than the size Rampart reads');
      continue;
    }
    if ((childText(ev.node, 'severity') ?? '').toLowerCase() === 'false positive') {
      skip(meta, where, 'marked as a false positive in Burp');
      continue;
    }
    const built = issueFinding(ev.node);
    if (!built.finding.ruleId || !built.url) {
      skip(meta, where, !built.finding.ruleId ? 'no issue type' : 'no http(s) host');
      continue;
    }
    meta.coverage.addRule(built.finding.ruleId);
    meta.coverage.addTarget(URL.parse(built.url)?.origin);
    const f = tryFinalize(meta, where, built.finding, 'burp');
    if (!f) continue;
    if (built.ip) f.aliases = [built.ip];
    yield f;
  }
}
