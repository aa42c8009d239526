// ZAP traditional JSON report (-J): site[].alerts[].instances[]. Each instance is one finding at
// its URL and parameter; an alert without instances is one finding at the site. The document is
// parsed whole under MAX_DOCUMENT_BYTES (no streaming JSON parser is installed).
import type { Readable } from 'node:stream';
import type { NormalizedFinding, Severity } from '../../findings/index.ts';
import { ImportError, arr, extractUrls, htmlToText, isObject, readJsonDocument, skip, str, tryFinalize, type ReportMeta } from './common.ts';

const RISK: Record<string, Severity> = { '0': 'info', '1': 'low', '2': 'medium', '3': 'high' };
const CONFIDENCE: Record<string, string> = { '0': 'false positive', '1': 'low', '2': 'medium', '3': 'high', '4': 'confirmed' };

export async function* parseZap(stream: Readable, meta: ReportMeta): AsyncGenerator<NormalizedFinding> {
  const doc = await readJsonDocument(stream, 'zap');
  if (!isObject(doc) || !Array.isArray(doc.site)) throw new ImportError('invalid_report', 'zap', 'Not a ZAP traditional JSON report: there is no "site" array');
  meta.tool = `ZAP ${str(doc['@version']) ?? ''}`.trim();
  for (const [si, site] of doc.site.entries()) {
    if (!isObject(site)) continue;
    const siteName = str(site['@name']);
    for (const [ai, alert] of arr(site.alerts).entries()) {
      const where = `site[${si}].alerts[${ai}]`;
      if (!isObject(alert)) {
        skip(meta, where, 'not an object');
        continue;
      }
      const confidence = str(alert.confidence);
      // ZAP marks alerts a user flagged as false positives with confidence 0.
      if (confidence === '0') {
        skip(meta, where, 'marked as a false positive in ZAP');
        continue;
      }
      const ruleId = str(alert.alertRef) ?? str(alert.pluginid);
      const name = str(alert.name) ?? str(alert.alert);
      if (!ruleId || !name) {
        skip(meta, where, 'no pluginid or name');
        continue;
      }
      const cweid = Number(str(alert.cweid));
      const wascid = Number(str(alert.wascid));
      const reference = str(alert.reference) ?? '';
      const base = {
        ruleId,
        title: name,
        description: htmlToText(str(alert.desc) ?? ''),
        severity: RISK[str(alert.riskcode) ?? ''] ?? ('info' as Severity),
        remediation: htmlToText(str(alert.solution) ?? ''),
        references: extractUrls(reference),
        cwe: cweid > 0 ? [cweid] : [],
      };
      const data: Record<string, unknown> = { pluginId: str(alert.pluginid), ...(confidence ? { confidence: CONFIDENCE[confidence] ?? confidence } : {}), ...(wascid > 0 ? { wascId: wascid } : {}) };
      const otherinfo = htmlToText(str(alert.otherinfo) ?? '');
      const instances = arr(alert.instances).filter(isObject);
      if (instances.length === 0) {
        const out = siteName ? tryFinalize(meta, where, { ...base, location: { url: siteName }, evidence: { data, ...(otherinfo ? { summary: otherinfo } : {}) } }) : null;
        if (!siteName) skip(meta, where, 'no instances and no site name');
        if (out) yield out;
        continue;
      }
      for (const [ii, inst] of instances.entries()) {
        const uri = str(inst.uri) ?? siteName;
        if (!uri) {
          skip(meta, `${where}.instances[${ii}]`, 'no uri');
          continue;
        }
        const param = str(inst.param);
        const method = str(inst.method);
        const attack = str(inst.attack);
        const evidence = str(inst.evidence);
        const other = htmlToText(str(inst.otherinfo) ?? '') || otherinfo;
        const out = tryFinalize(meta, `${where}.instances[${ii}]`, {
          ...base,
          location: { url: uri, ...(param ? { param } : {}) },
          evidence: {
            summary: [method && `${method} ${uri}`, param && `parameter: ${param}`, attack && `attack: ${attack}`, other].filter(Boolean).join('\n') || undefined,
            ...(evidence ? { snippet: evidence } : {}),
            data: { ...data, ...(method ? { method } : {}) },
          },
        });
        if (out) yield out;
      }
    }
  }
}
