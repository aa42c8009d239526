// Validator acceptance on a directory of nuclei templates (e.g. a checkout of a public collection):
// how many HTTP templates the validator accepts, and the most common reasons for refusals.
// Run: npx node bench/template-acceptance.ts <directory> [--top 30] [--show reason-substring] [--oob http,dns]
// [--protocol ssl] (which templates count: http by default, or ssl, network)
// (--oob: the callbacks the server is taken to receive; without it, out-of-band templates are refused)
// --files <root>: a template's payload files (`payloads: name: path/to/file.txt`) that exist under
// <root> (nuclei's templates directory) or beside the template are given to the validator, as
// when the template is uploaded with them; missing files make the template refused.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { parse } from 'yaml';
import { parseArgs } from 'node:util';
import { TEMPLATE_PAYLOAD_FILES, TEMPLATE_PAYLOAD_FILES_MAX_BYTES } from '../src/templates/templates-schemas.ts';
import { validateTemplate } from '../src/agent/scanners/template/index.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: 'string' },
    show: { type: 'string' },
    oob: { type: 'string' },
    files: { type: 'string' },
    protocol: { type: 'string' },
  },
});
const oobList = (values.oob ?? '').split(',');
const oob = values.oob ? { http: oobList.includes('http'), dns: oobList.includes('dns') } : undefined;
const dir = positionals[0];
if (!dir) {
  console.error('usage: node bench/template-acceptance.ts <directory> [--top 30] [--show text]');
  process.exit(2);
}

function* walk(d: string): Generator<string> {
  for (const name of readdirSync(d)) {
    const p = join(d, name);
    if (statSync(p).isDirectory()) yield* walk(p);
    else if (/\.ya?ml$/.test(name)) yield p;
  }
}

/** The payload files a template names that exist under root or beside the template (not outside root). */
function filesOf(text: string, file: string, root: string): Record<string, string> | undefined {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch {
    return undefined;
  }
  const out: Record<string, string> = {};
  const blocks =
    (doc as { http?: unknown; requests?: unknown } | null)?.http ?? (doc as { requests?: unknown })?.requests;
  for (const b of Array.isArray(blocks) ? blocks : []) {
    const payloads = (b as { payloads?: unknown } | null)?.payloads;
    if (!payloads || typeof payloads !== 'object') continue;
    for (const p of Object.values(payloads)) {
      if (typeof p !== 'string') continue;
      for (const candidate of [resolve(root, p), resolve(dirname(file), p)]) {
        if (!candidate.startsWith(resolve(root) + sep)) continue;
        try {
          out[p] = readFileSync(candidate, 'utf8');
          break;
        } catch {
          // not there: the next candidate, or refused by the validator naming the file
        }
      }
    }
  }
  // Over the upload limits the files could not be uploaded: the template counts as refused.
  const bytes = Object.values(out).reduce((n, t) => n + Buffer.byteLength(t, 'utf8'), 0);
  if (Object.keys(out).length > TEMPLATE_PAYLOAD_FILES || bytes > TEMPLATE_PAYLOAD_FILES_MAX_BYTES) return undefined;
  return Object.keys(out).length ? out : undefined;
}

const protocol = values.protocol ?? 'http';
const protocolKey = new RegExp(
  `^(?:${protocol === 'http' ? 'http|requests' : protocol === 'network' ? 'network|tcp' : protocol}):`,
  'm',
);
let total = 0;
let accepted = 0;
const reasons = new Map<string, number>();
const examples = new Map<string, string>();
for (const file of walk(dir)) {
  const text = readFileSync(file, 'utf8');
  // Templates of one protocol: a top-level list of its name (http also under its old name, requests).
  if (!protocolKey.test(text)) continue;
  total += 1;
  const payloadFiles = values.files ? filesOf(text, file, values.files) : undefined;
  const v = validateTemplate(text, { ...(oob ? { oob } : {}), ...(payloadFiles ? { payloadFiles } : {}) });
  if (v.ok) {
    accepted += 1;
    continue;
  }
  const seen = new Set<string>();
  for (const e of v.errors) {
    const reason = `${e.path.replace(/\[\d+\]/g, '[]').replace(/^(?:http|requests)/, 'http')}: ${e.message
      .replace(/\{\{[^}]*\}\}/g, '{{…}}')
      .replace(/"[^"]*"/g, '"…"')
      .slice(0, 120)}`;
    if (seen.has(reason)) continue;
    seen.add(reason);
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    if (!examples.has(reason)) examples.set(reason, file);
    if (values.show && reason.includes(values.show)) console.log(`${file}: ${e.path}: ${e.message}`);
  }
}
console.log(
  `${accepted} of ${total} ${protocol} templates accepted (${((accepted / Math.max(total, 1)) * 100).toFixed(1)}%)`,
);
for (const [r, n] of [...reasons].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top ?? 30)))
  console.log(`${String(n).padStart(6)}  ${r}  (e.g. ${examples.get(r)})`);
