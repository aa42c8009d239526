// Template results as findings, shaped like the nuclei importer's (src/workers/importers/nuclei.ts):
// ruleId is the template id, the discriminator the matcher name, the title "name (matcher)". A
// tenant who runs a nuclei template here and imports nuclei's own output for it gets one finding.
import type { NormalizedFindingInput } from '../../../findings/index.ts';
import type { TemplateMatch } from './engine.ts';

/** How much of a response body goes into evidence. */
const BODY_EVIDENCE_BYTES = 4_096;

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

const CVSS_VECTOR_RE = /^(?:CVSS:\d\.\d\/)?[A-Za-z]{1,3}:[A-Za-z0-9.]+(?:\/[A-Za-z]{1,3}:[A-Za-z0-9.]+)*$/;

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function curlCommand(r: TemplateMatch['request']): string {
  const parts = ['curl', '-sk', '-X', r.method, quote(r.url)];
  for (const [k, v] of Object.entries(r.headers)) parts.push('-H', quote(`${k}: ${v}`));
  if (r.body !== undefined) parts.push('--data-raw', quote(r.body));
  return parts.join(' ');
}

function responseEvidence(m: TemplateMatch): string {
  const body = m.exchange.body.subarray(0, BODY_EVIDENCE_BYTES).toString('utf8');
  const cut = m.exchange.body.length > BODY_EVIDENCE_BYTES || m.exchange.truncated;
  return `${m.exchange.head}\r\n\r\n${body}${cut ? '\n… [body cut]' : ''}`;
}

const isHttpUrl = (s: string) => {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && s.length <= 2_000;
  } catch {
    return false;
  }
};

export function templateFindings(matches: readonly TemplateMatch[]): NormalizedFindingInput[] {
  return matches.map((m) => {
    const { info } = m.template;
    const u = new URL(m.url);
    // A vector the findings schema would refuse is dropped; the score alone still ranks the finding.
    const vector = info.cvssMetrics && CVSS_VECTOR_RE.test(info.cvssMetrics) ? info.cvssMetrics : undefined;
    const cvss = info.cvssScore !== undefined ? { score: info.cvssScore, ...(vector ? { vector } : {}) } : undefined;
    const data: Record<string, unknown> = { status: m.exchange.status };
    if (info.tags.length) data.tags = info.tags.slice(0, 30);
    if (m.exchange.redirects?.length) data.redirects = m.exchange.redirects.slice(0, 10);
    if (m.request.url !== m.url) data.requestedUrl = m.request.url;
    if (m.extractor) data.extractor = m.extractor;
    const named = m.matcher ?? m.extractor;
    return {
      ruleId: m.template.id,
      title: named ? `${info.name} (${named})` : info.name,
      severity: info.severity,
      ...(info.description ? { description: info.description } : {}),
      ...(info.remediation ? { remediation: info.remediation } : {}),
      ...(cvss ? { cvss } : {}),
      ...(info.cwe.length ? { cwe: info.cwe.slice(0, 20) } : {}),
      ...(info.cve.length ? { cve: info.cve.slice(0, 50) } : {}),
      ...(info.references.some(isHttpUrl) ? { references: info.references.filter(isHttpUrl).slice(0, 20) } : {}),
      location:
        u.protocol === 'tcp:'
          ? { host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(u.port), protocol: 'tcp' }
          : {
              url: m.url,
              host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
              port: u.port ? Number(u.port) : DEFAULT_PORTS[u.protocol]!,
              path: u.pathname,
            },
      ...(named ? { discriminator: named } : {}),
      evidence: {
        summary: `Matched at ${m.url}${named ? ` by ${named}` : ''}${m.exchange.status ? ` (HTTP ${m.exchange.status})` : ''}`,
        request: m.exchange.requestText,
        response: responseEvidence(m),
        ...(m.request.method === 'TCP' ? {} : { curl: curlCommand(m.request) }),
        ...(m.extracted.length ? { extracted: m.extracted.slice(0, 50) } : {}),
        data,
      },
    };
  });
}
