// Which format a report is, from its first bytes (DETECT_BYTES), and what an unrecognised file
// looks like, so an upload can be refused at once with a useful message.
import type { ReportFormat } from './common.ts';

/** How many leading bytes detection wants to see. */
export const DETECT_BYTES = 4096;

const text = (head: Uint8Array | string) =>
  (typeof head === 'string' ? head : Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString('utf8'))
    .replace(/^\uFEFF/, '')
    .trimStart();

/** The root element's name of an XML document (after the declaration, comments and DOCTYPE). */
export function xmlRoot(head: string): string | null {
  let s = head;
  for (let i = 0; i < 50; i++) {
    s = s.trimStart();
    if (s.startsWith('<?')) s = s.slice(s.indexOf('?>') + 2 || s.length);
    else if (s.startsWith('<!--')) s = s.slice(s.indexOf('-->') + 3 || s.length);
    else if (/^<!DOCTYPE/i.test(s)) {
      const subset = s.indexOf('[');
      const close = s.indexOf('>');
      if (subset !== -1 && subset < close) {
        const end = s.indexOf(']>', subset);
        if (end === -1) return null;
        s = s.slice(end + 2);
      } else s = s.slice(close + 1 || s.length);
    } else break;
  }
  const m = /^<([A-Za-z_][\w.:-]*)/.exec(s);
  return m ? m[1]! : null;
}

/** Keys of the first JSON object in the head (`[{...` gives the first element's keys). */
function leadingKeys(head: string): string[] {
  const body = head.replace(/^\[\s*/, '');
  return [...body.slice(0, 2048).matchAll(/"([^"\\]{1,64})"\s*:/g)].map((m) => m[1]!);
}

function detectXml(head: string): ReportFormat | null {
  const root = xmlRoot(head);
  if (!root) return null;
  if (root === 'nmaprun') return 'nmap';
  if (root === 'OWASPZAPReport') return 'zap';
  if (root === 'NessusClientData_v2') return 'nessus';
  if (root === 'issues' && (/burpVersion=/.test(head) || /<!DOCTYPE\s+issues/i.test(head) || /<issue>/.test(head)))
    return 'burp';
  if (
    (root === 'report' || root === 'get_reports_response') &&
    /<(results|result|nvt|gmp|omp|scan_run_status|report_format)\b|format_id=|content_type="text\/xml"/.test(head)
  )
    return 'openvas';
  return null;
}

function detectJson(head: string, name: string): ReportFormat | null {
  // JSON Lines: a first line that is a whole object.
  const nl = head.indexOf('\n');
  if (head.startsWith('{') && nl !== -1) {
    try {
      const first: unknown = JSON.parse(head.slice(0, nl));
      if (first && typeof first === 'object' && !Array.isArray(first)) {
        const o = first as Record<string, unknown>;
        if (o.type === 'report' && 'version' in o) return 'native';
        if ('template-id' in o || 'templateID' in o || 'template_id' in o) return 'nuclei';
      }
    } catch {
      // A pretty-printed document: the key checks below.
    }
  }
  const keys = leadingKeys(head);
  const has = (...ks: string[]) => ks.some((k) => keys.includes(k));
  if (/^\{\s*"type"\s*:\s*"report"/.test(head)) return 'native';
  if (has('template-id', 'templateID', 'template_id') && has('matched-at', 'matched', 'info', 'host')) return 'nuclei';
  if (/"\$schema"\s*:\s*"[^"]*sarif/i.test(head) || (/"version"\s*:\s*"2\.1\.0"/.test(head) && /"runs"\s*:/.test(head)))
    return 'sarif';
  // Some tools (mobsfscan) leave out both `version` and `$schema`: a run's tool driver still says SARIF.
  if (/^\{\s*"runs"\s*:\s*\[\s*\{\s*"(tool|results)"/.test(head) && has('driver')) return 'sarif';
  if (
    /"SchemaVersion"\s*:\s*2\b/.test(head) ||
    (has('ClusterName') && has('Resources', 'Vulnerabilities', 'Misconfigurations'))
  )
    return 'trivy';
  if (head.startsWith('[') && has('Target') && has('Vulnerabilities', 'Type', 'Misconfigurations')) return 'trivy';
  if (/"@programName"\s*:|"@generated"\s*:/.test(head) || /"site"\s*:\s*\[\s*\{\s*"@name"/.test(head)) return 'zap';
  if (
    /"matches"\s*:\s*\[/.test(head) &&
    has('vulnerability', 'artifact', 'relatedVulnerabilities', 'matchDetails', 'descriptor')
  )
    return 'grype';
  // Nothing found: `"matches": []`, then the scanned source (an image's userInput and imageID).
  if (/^\{\s*"matches"\s*:\s*\[\s*\]/.test(head) && has('source') && has('userInput', 'imageID')) return 'grype';
  if (has('scanResult') || (has('Invocation') && has('openssl', 'startTime'))) return 'testssl';
  if (head.startsWith('[') && has('id') && has('finding') && has('severity') && has('ip')) return 'testssl';
  if (name.endsWith('.sarif') || name.endsWith('.sarif.json')) return 'sarif';
  return null;
}

/**
 * Guesses the format from the first bytes (DETECT_BYTES is plenty) and, when the content is
 * ambiguous, the file name. Returns null when nothing matches.
 */
export function detectFormat(firstBytes: Uint8Array | string, fileName?: string): ReportFormat | null {
  const head = text(firstBytes);
  const name = (fileName ?? '').toLowerCase();
  if (head.startsWith('<')) return detectXml(head);
  if (head.startsWith('{') || head.startsWith('[')) return detectJson(head, name);
  return null;
}

/** Signatures that make a file plausible for a format a user named, when detection was unsure. */
const SIGNATURES: Record<ReportFormat, (head: string) => boolean> = {
  native: (h) => /^\{\s*"type"\s*:\s*"report"/.test(h),
  nmap: (h) => xmlRoot(h) === 'nmaprun',
  nuclei: (h) => h === '' || (/^[[{]/.test(h) && /"(template-id|templateID|template_id)"\s*:/.test(h)),
  zap: (h) => xmlRoot(h) === 'OWASPZAPReport' || (h.startsWith('{') && /"site"\s*:/.test(h)),
  trivy: (h) =>
    (/^[[{]/.test(h) && /"(SchemaVersion|ArtifactName|Results|ClusterName|Target)"\s*:/.test(h)) || h.trim() === 'null',
  sarif: (h) => h.startsWith('{') && /"(runs|\$schema)"\s*:/.test(h),
  nessus: (h) => xmlRoot(h) === 'NessusClientData_v2',
  openvas: (h) => xmlRoot(h) === 'report' || xmlRoot(h) === 'get_reports_response',
  burp: (h) => xmlRoot(h) === 'issues',
  grype: (h) => h.startsWith('{') && /"matches"\s*:/.test(h),
  testssl: (h) => /^[[{]/.test(h) && /"(scanResult|Invocation|finding)"\s*:/.test(h),
};

/** Whether a file can be the named format: detected as it, or carrying its signature. */
export function plausibleFormat(format: ReportFormat, firstBytes: Uint8Array | string, fileName?: string): boolean {
  const head = text(firstBytes);
  const detected = detectFormat(head, fileName);
  return detected === format || (detected === null && SIGNATURES[format](head));
}

/** A short description of what a file looks like, for a refusal ("a JSON document with keys …"). */
export function describeContent(firstBytes: Uint8Array): string {
  if (firstBytes.length === 0) return 'an empty file';
  const sample = firstBytes.subarray(0, 1024);
  let control = 0;
  for (const b of sample) if (b === 0 || (b < 9 && b !== 0) || (b > 13 && b < 32)) control += 1;
  if (control > sample.length / 20) return 'binary data, not a text report';
  const head = text(firstBytes);
  if (head === '') return 'a file of blank lines';
  if (head.startsWith('<')) {
    const root = xmlRoot(head);
    if (/^<!DOCTYPE\s+html|^<html/i.test(head)) return 'an HTML page';
    return root ? `an XML document whose root element is <${root}>` : 'XML without a root element in its first bytes';
  }
  if (head.startsWith('{') || head.startsWith('[')) {
    const keys = [...new Set(leadingKeys(head))].slice(0, 6);
    const shape = head.startsWith('[') ? 'a JSON array' : 'a JSON document';
    return keys.length
      ? `${shape} with keys ${keys.map((k) => `"${k.replace(/[^\x20-\x7e]/g, '?')}"`).join(', ')}`
      : shape;
  }
  const firstLine = head
    .split('\n', 1)[0]!
    .slice(0, 60)
    .replace(/[^\x20-\x7e]/g, '?');
  return `text starting with "${firstLine}"`;
}
