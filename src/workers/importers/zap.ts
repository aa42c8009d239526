// OWASP ZAP reports, both as ZAP writes them: the traditional JSON report (-J) and the classic
// XML report (<OWASPZAPReport>, 2.9 to 2.16, with or without request and response bodies; before
// 2.8 an alert item carried its one URI itself instead of <instances>). Both are streamed one
// alert at a time. Each instance is one finding at its URL and parameter; an alert without
// instances is one finding at the site.
import type { Severity } from '../../findings/index.ts';
import {
  arr,
  extractUrls,
  htmlToText,
  ImportError,
  isObject,
  peekStream,
  skip,
  str,
  tryFinalize,
  type ImportedFinding,
  type ReportMeta,
} from './common.ts';
import { readJsonRecords } from './json-records.ts';
import { child, children, readXml, type XmlNode } from './xml-reader.ts';

const RISK: Record<string, Severity> = { '0': 'info', '1': 'low', '2': 'medium', '3': 'high' };
const CONFIDENCE: Record<string, string> = {
  '0': 'false positive',
  '1': 'low',
  '2': 'medium',
  '3': 'high',
  '4': 'confirmed',
};
const INSTANCE_KEYS = [
  'uri',
  'method',
  'param',
  'attack',
  'evidence',
  'otherinfo',
  'requestheader',
  'requestbody',
  'responseheader',
  'responsebody',
];

/** One alert (JSON object, or an XML alertitem made into one) as findings. */
function* alertFindings(
  meta: ReportMeta,
  alert: Record<string, unknown>,
  siteName: string | undefined,
  where: string,
): Generator<ImportedFinding> {
  meta.records += 1;
  const confidence = str(alert.confidence);
  // ZAP marks alerts a user flagged as false positives with confidence 0.
  if (confidence === '0') {
    skip(meta, where, 'marked as a false positive in ZAP');
    return;
  }
  const ruleId = str(alert.alertRef) ?? str(alert.pluginid);
  const name = str(alert.name) ?? str(alert.alert);
  if (!ruleId || !name) {
    skip(meta, where, 'no pluginid or name');
    return;
  }
  meta.coverage.addRule(ruleId);
  const cweid = Number(str(alert.cweid));
  const wascid = Number(str(alert.wascid));
  const base = {
    ruleId,
    title: name,
    description: htmlToText(str(alert.desc) ?? ''),
    severity: RISK[str(alert.riskcode) ?? ''] ?? ('info' as Severity),
    remediation: htmlToText(str(alert.solution) ?? ''),
    references: extractUrls(str(alert.reference) ?? ''),
    cwe: cweid > 0 ? [cweid] : [],
  };
  const data: Record<string, unknown> = {
    pluginId: str(alert.pluginid),
    ...(confidence ? { confidence: CONFIDENCE[confidence] ?? confidence } : {}),
    ...(wascid > 0 ? { wascId: wascid } : {}),
  };
  const otherinfo = htmlToText(str(alert.otherinfo) ?? '');
  let instances = arr(alert.instances).filter(isObject);
  // ZAP before 2.8: the alert item itself is the one instance.
  if (instances.length === 0 && str(alert.uri)) instances = [alert];
  if (instances.length === 0) {
    if (!siteName) {
      skip(meta, where, 'no instances and no site name');
      return;
    }
    const out = tryFinalize(
      meta,
      where,
      { ...base, location: { url: siteName }, evidence: { data, ...(otherinfo ? { summary: otherinfo } : {}) } },
      'zap',
    );
    if (out) yield out;
    return;
  }
  for (const [ii, inst] of instances.entries()) {
    const w = instances.length > 1 || inst !== alert ? `${where}.instances[${ii}]` : where;
    const uri = str(inst.uri) ?? siteName;
    if (!uri) {
      skip(meta, w, 'no uri');
      continue;
    }
    const param = str(inst.param);
    const method = str(inst.method);
    const attack = str(inst.attack);
    const evidence = str(inst.evidence);
    const other = htmlToText(str(inst.otherinfo) ?? '') || otherinfo;
    const request = [str(inst.requestheader), str(inst.requestbody)].filter(Boolean).join('\r\n');
    const response = [str(inst.responseheader), str(inst.responsebody)].filter(Boolean).join('\r\n');
    const out = tryFinalize(
      meta,
      w,
      {
        ...base,
        location: { url: uri, ...(param ? { param } : {}) },
        evidence: {
          summary:
            [method && `${method} ${uri}`, param && `parameter: ${param}`, attack && `attack: ${attack}`, other]
              .filter(Boolean)
              .join('\n') || undefined,
          ...(evidence ? { snippet: evidence } : {}),
          ...(request ? { request } : {}),
          ...(response ? { response } : {}),
          data: { ...data, ...(method ? { method } : {}) },
        },
      },
      'zap',
    );
    if (out) yield out;
  }
}

/** An XML alertitem as the JSON report's alert object. */
function alertOfXml(item: XmlNode): Record<string, unknown> {
  const alert: Record<string, unknown> = {};
  for (const c of item.children) if (c.name !== 'instances') alert[c.name] = c.text;
  const instances = children(child(item, 'instances'), 'instance').map((inst) => {
    const o: Record<string, unknown> = {};
    for (const k of INSTANCE_KEYS) {
      const t = child(inst, k)?.text;
      if (t !== undefined) o[k] = t;
    }
    return o;
  });
  if (instances.length) alert.instances = instances;
  return alert;
}

function tool(meta: ReportMeta, version: string | undefined): void {
  meta.tool = `ZAP ${version ?? ''}`.trim();
  meta.coverage.addTool({ name: 'ZAP', version: version ?? null, scanner: 'webapp', key: 'zap' });
}

async function* parseZapXml(stream: AsyncIterable<Buffer | string>, meta: ReportMeta): AsyncGenerator<ImportedFinding> {
  let site: string | undefined;
  let rooted = false;
  let n = 0;
  for await (const ev of readXml(stream, 'zap', (name) => name === 'alertitem', meta.cleaned)) {
    if (ev.type === 'open') {
      if (!rooted) {
        rooted = true;
        if (ev.name !== 'OWASPZAPReport')
          throw new ImportError(
            'invalid_report',
            'zap',
            `Not a ZAP XML report: the root element is <${ev.name}>, not <OWASPZAPReport>`,
          );
        tool(meta, ev.attrs.version);
      } else if (ev.name === 'site') {
        site = ev.attrs.name;
        meta.coverage.addTarget(site);
        meta.coverage.addHost(ev.attrs.host, true);
      }
    } else if (ev.type === 'record') {
      yield* alertFindings(meta, alertOfXml(ev.node), site, `alertitem ${++n} (line ${ev.line})`);
    } else if (ev.type === 'tooLarge') {
      meta.records += 1;
      skip(meta, `alertitem ${++n} (line ${ev.line})`, 'alert larger than the size Rampart reads');
    }
  }
}

async function* parseZapJson(
  stream: AsyncIterable<Buffer | string>,
  meta: ReportMeta,
): AsyncGenerator<ImportedFinding> {
  const sites = new Map<number, string>();
  let sawSite = false;
  const pick = (p: readonly (string | number)[]) => {
    if (p.length === 0) return 'descend' as const;
    if (p.length === 1) {
      if (p[0] === 'site') sawSite = true;
      return p[0] === 'site' ? ('descend' as const) : p[0] === '@version' ? ('value' as const) : ('skip' as const);
    }
    if (p[0] !== 'site') return 'skip' as const;
    if (p.length === 2) return 'descend' as const;
    if (p.length === 3)
      return p[2] === '@name' || p[2] === '@host'
        ? ('value' as const)
        : p[2] === 'alerts'
          ? ('descend' as const)
          : ('skip' as const);
    return p.length === 4 && p[2] === 'alerts' ? ('value' as const) : ('skip' as const);
  };
  let version: string | undefined;
  for await (const r of readJsonRecords(stream, 'zap', pick, meta.cleaned)) {
    const v = 'value' in r ? r.value : undefined;
    if (r.path[0] === '@version') {
      version = str(v);
      continue;
    }
    const si = r.path[1] as number;
    if (r.path[2] === '@name') {
      if (str(v)) sites.set(si, str(v)!);
      meta.coverage.addTarget(str(v));
    } else if (r.path[2] === '@host') meta.coverage.addHost(str(v), true);
    else {
      const where = `site[${si}].alerts[${String(r.path[3])}]`;
      if ('tooLarge' in r) {
        meta.records += 1;
        skip(meta, where, 'alert larger than the size Rampart reads');
      } else if (!isObject(v)) {
        meta.records += 1;
        skip(meta, where, 'not an object');
      } else yield* alertFindings(meta, v, sites.get(si), where);
    }
  }
  if (!sawSite)
    throw new ImportError('invalid_report', 'zap', 'Not a ZAP traditional JSON report: there is no "site" array');
  tool(meta, version);
}

export async function* parseZap(
  input: AsyncIterable<Buffer | string>,
  meta: ReportMeta,
): AsyncGenerator<ImportedFinding> {
  const { head, stream } = await peekStream(input, 1);
  meta.tool = 'ZAP';
  yield* head.startsWith('<') ? parseZapXml(stream, meta) : parseZapJson(stream, meta);
}
