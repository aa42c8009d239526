// testssl.sh JSON, both layouts it writes: the flat array of --json / --jsonfile (each entry with
// "ip": "host/address", "port", "id", "severity", "finding") and the document of --json-pretty
// (scanResult[] per target host and port, entries grouped by section: protocols, ciphers,
// serverDefaults, headerResponse, vulnerabilities, ...). Entries rated LOW, MEDIUM, HIGH or
// CRITICAL are findings; OK, INFO and DEBUG entries are checks that passed or facts, WARN entries
// are scan warnings (counted as skipped with their text), and a FATAL entry makes the report
// partial (nothing is closed).
import type { NormalizedFindingInput, Severity } from '../../findings/index.ts';
import { isObject, skip, str, tryFinalize, type ImportedFinding, type ReportMeta } from './common.ts';
import { readJsonRecords, type JsonPath, type JsonPick } from './json-records.ts';

const SEVERITY: Record<string, Severity> = { low: 'low', medium: 'medium', high: 'high', critical: 'critical' };
const NOT_A_PROBLEM = new Set(['ok', 'info', 'debug']);
const CONTEXT = new Set(['targetHost', 'ip', 'port', 'rDNS', 'service']);

function pick(p: JsonPath): JsonPick {
  if (p.length === 0) return 'descend';
  if (typeof p[0] === 'number') return p.length === 1 ? 'value' : 'skip';
  if (p.length === 1)
    return p[0] === 'scanResult' ? 'descend' : p[0] === 'version' || p[0] === 'Invocation' ? 'value' : 'skip';
  if (p[0] !== 'scanResult') return 'skip';
  if (p.length === 2) return 'descend';
  if (p.length === 3) return CONTEXT.has(p[2] as string) ? 'value' : 'descend';
  return p.length === 4 ? 'value' : 'skip';
}

/** "example.com/93.184.216.34" → host and address. */
function hostOf(ip: string | undefined, targetHost: string | undefined): { host: string; alias?: string } | null {
  const [name, addr] = (ip ?? '').split('/', 2);
  const host = targetHost || name || addr;
  if (!host) return null;
  const alias = addr && addr !== host ? addr : name && name !== host ? name : undefined;
  return { host, ...(alias ? { alias } : {}) };
}

function entryFinding(
  e: Record<string, unknown>,
  host: string,
  port: number | undefined,
  section: string | null,
): NormalizedFindingInput | string {
  const id = str(e.id);
  if (!id) return 'no id';
  const sev = (str(e.severity) ?? '').toLowerCase();
  const finding = str(e.finding) ?? '';
  if (sev === 'warn') return `scan warning: ${finding.slice(0, 200)}`;
  const severity = SEVERITY[sev];
  if (!severity) return `unknown severity ${sev.slice(0, 20)}`;
  return {
    ruleId: id,
    title: `${id}: ${finding}`.slice(0, 300),
    description: finding,
    severity,
    location: { host, ...(port !== undefined ? { port, protocol: 'tcp' } : {}) },
    cve: (str(e.cve) ?? '').split(/\s+/).filter((c) => /^CVE-/i.test(c)),
    cwe: (str(e.cwe) ?? '').split(/\s+/).filter(Boolean),
    evidence: {
      summary: finding,
      data: {
        severity: sev.toUpperCase(),
        ...(section ? { section } : {}),
        ...(str(e.hint) ? { hint: str(e.hint) } : {}),
      },
    },
  };
}

export async function* parseTestssl(
  stream: AsyncIterable<Buffer | string>,
  meta: ReportMeta,
): AsyncGenerator<ImportedFinding> {
  meta.tool = 'testssl.sh';
  let version: string | null = null;
  const ctx = { key: -1, targetHost: '', ip: '', port: '' };
  for await (const r of readJsonRecords(stream, 'testssl', pick, meta.cleaned)) {
    const v = 'value' in r ? r.value : undefined;
    if (r.path[0] === 'version') {
      version = str(v) ?? null;
      continue;
    }
    if (r.path[0] === 'Invocation') continue;
    const flat = typeof r.path[0] === 'number';
    if (!flat) {
      const i = r.path[1] as number;
      if (ctx.key !== i) Object.assign(ctx, { key: i, targetHost: '', ip: '', port: '' });
      if (r.path.length === 3) {
        const k = r.path[2] as 'targetHost' | 'ip' | 'port';
        if (k in ctx) ctx[k] = str(v) ?? '';
        continue;
      }
    }
    meta.records += 1;
    const where = flat
      ? `[${String(r.path[0])}]`
      : `scanResult[${String(r.path[1])}].${String(r.path[2])}[${String(r.path[3])}]`;
    if ('tooLarge' in r || !isObject(v)) {
      skip(meta, where, 'tooLarge' in r ? 'entry larger than the size Rampart reads' : 'not an object');
      continue;
    }
    if ((str(v.severity) ?? '').toLowerCase() === 'fatal') {
      meta.partial ??= `testssl.sh stopped: ${(str(v.finding) ?? 'fatal error').slice(0, 200)}`;
      skip(meta, where, `scan error: ${(str(v.finding) ?? '').slice(0, 200)}`);
      continue;
    }
    const place = hostOf(flat ? str(v.ip) : ctx.ip, flat ? undefined : ctx.targetHost);
    const portText = flat ? str(v.port) : ctx.port;
    const port = portText && /^\d{1,5}$/.test(portText) ? Number(portText) : undefined;
    if (place) meta.coverage.addHost(place.host, true);
    const section = flat ? null : String(r.path[2]);
    meta.coverage.addClass(section ?? undefined);
    if (str(v.id)) meta.coverage.addRule(str(v.id));
    if (NOT_A_PROBLEM.has((str(v.severity) ?? '').toLowerCase())) {
      meta.passed += 1;
      continue;
    }
    const f = place
      ? entryFinding(v, place.host, port, section)
      : (str(v.severity) ?? '').toLowerCase() === 'warn'
        ? entryFinding(v, '', port, section)
        : 'no host';
    if (typeof f === 'string') {
      skip(meta, where, f);
      continue;
    }
    const out = tryFinalize(meta, where, f, 'testssl.sh');
    if (!out) continue;
    if (place?.alias) out.aliases = [place.alias];
    yield out;
  }
  meta.coverage.addTool({ name: 'testssl.sh', version, scanner: 'edge', key: 'testssl.sh' });
}
