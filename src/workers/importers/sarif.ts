// SARIF 2.1.0 (CodeQL, semgrep, gitleaks, dockle, flawfinder, mobsfscan, Trivy, ESLint, ...):
// runs[].results[] described by runs[].tool (driver and extension rules). The log is streamed:
// each run's tool, artifacts, taxonomies and base URIs are kept (bounded) and each result is read
// on its own. A run whose results come before its tool (property order is free in JSON) has its
// results spooled to a temporary file until the tool is known.
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import {
  arr,
  drained,
  ImportError,
  isObject,
  readLines,
  skip,
  str,
  tryFinalize,
  type ImportedFinding,
  type ReportMeta,
  type Scanner,
} from './common.ts';
import { readJsonRecords, type JsonPath, type JsonPick } from './json-records.ts';
import { sarifResult, type SarifRun } from './sarif-result.ts';

/** The scanner kind a SARIF producer stands for; generic code and config tools are 'template'. */
export function scannerForTool(name: string): Scanner {
  const n = name.toLowerCase();
  if (/\b(zap|owasp zap|zaproxy|burp|nikto|arachni|wapiti)\b/.test(n)) return 'webapp';
  if (/\b(trivy|grype|clair|snyk container|docker scout|anchore|dockle)\b/.test(n)) return 'container';
  if (/\b(nmap|naabu|masscan|rustscan)\b/.test(n)) return 'port';
  if (/\b(testssl|sslyze|sslscan)\b/.test(n)) return 'edge';
  return 'template';
}

/** Where the parser wants values: per-run context whole, results one by one, the rest skipped. */
function pick(p: JsonPath): JsonPick {
  if (p.length === 0) return 'descend';
  if (p.length === 1) return p[0] === 'version' ? 'value' : p[0] === 'runs' ? 'descend' : 'skip';
  if (p[0] !== 'runs') return 'skip';
  if (p.length === 2) return 'descend';
  const key = p[2];
  if (p.length === 3) {
    if (key === 'tool' || key === 'originalUriBaseIds' || key === 'taxonomies' || key === 'invocations') return 'value';
    return key === 'results' || key === 'artifacts' || key === 'logicalLocations' ? 'descend' : 'skip';
  }
  if (p.length === 4 && (key === 'results' || key === 'artifacts' || key === 'logicalLocations')) return 'value';
  return 'skip';
}

const MAX_ARTIFACTS = 500_000;

function newRun(): SarifRun & { toolSeen: boolean } {
  return {
    toolName: 'unknown',
    rules: [],
    ruleById: new Map(),
    globalMessages: {},
    artifacts: [],
    logical: [],
    taxa: new Map(),
    toolSeen: false,
  };
}

function takeTool(run: ReturnType<typeof newRun>, tool: unknown, meta: ReportMeta, first: boolean): void {
  const t = isObject(tool) ? tool : {};
  const driver = isObject(t.driver) ? t.driver : {};
  run.toolSeen = true;
  run.toolName = str(driver.name) ?? 'unknown';
  const version = str(driver.semanticVersion) ?? str(driver.version) ?? null;
  const components = [driver, ...arr(t.extensions).filter(isObject)];
  for (const c of components) {
    for (const r of arr(c.rules)) {
      if (!isObject(r)) continue;
      run.rules.push(r);
      if (str(r.id)) {
        run.ruleById.set(str(r.id)!, r);
        meta.coverage.addRule(str(r.id));
      }
    }
  }
  if (run.rules.length) meta.coverage.rulesDeclared = true;
  if (isObject(driver.globalMessageStrings)) run.globalMessages = driver.globalMessageStrings;
  const scanner = scannerForTool(run.toolName);
  meta.coverage.addTool({ name: run.toolName, version, scanner, key: toolKey(run.toolName) });
  if (first) {
    meta.tool = `${run.toolName}${version ? ` ${version}` : ''}`;
    meta.scanner = scanner;
  }
}

/** The namespace SARIF findings are keyed by: the tool's name (its rule ids are its own). */
export const toolKey = (name: string) => name.trim().toLowerCase().slice(0, 100) || 'unknown';

export async function* parseSarif(
  stream: AsyncIterable<Buffer | string>,
  meta: ReportMeta,
): AsyncGenerator<ImportedFinding> {
  let runIdx = -1;
  let run = newRun();
  let spool: { dir: string; file: string; out: ReturnType<typeof createWriteStream>; count: number } | null = null;
  let sawRuns = false;

  function* emit(res: unknown, where: string): Generator<ImportedFinding> {
    meta.records += 1;
    if (!isObject(res)) {
      skip(meta, where, 'not an object');
      return;
    }
    const outcome = sarifResult(res, run);
    if ('passed' in outcome) {
      meta.passed += 1;
      return;
    }
    if ('skip' in outcome) {
      skip(meta, where, outcome.skip);
      return;
    }
    for (const f of outcome.findings) {
      const out = tryFinalize(meta, where, f, toolKey(run.toolName));
      if (out) yield out;
    }
  }

  async function* flushSpool(): AsyncGenerator<ImportedFinding> {
    if (!spool) return;
    const s = spool;
    spool = null;
    s.out.end();
    await finished(s.out);
    try {
      for await (const { text } of readLines(createReadStream(s.file), 'sarif', Number.MAX_SAFE_INTEGER)) {
        const [where, res] = JSON.parse(text) as [string, unknown];
        yield* emit(res, where);
      }
    } finally {
      rmSync(s.dir, { recursive: true, force: true });
    }
  }

  try {
    const watch = (p: JsonPath): JsonPick => {
      if (p.length === 1 && p[0] === 'runs') sawRuns = true;
      return pick(p);
    };
    for await (const r of readJsonRecords(stream, 'sarif', watch, meta.cleaned)) {
      if (r.path[0] === 'version') {
        if ('value' in r && r.value !== '2.1.0')
          throw new ImportError(
            'invalid_report',
            'sarif',
            `Only SARIF 2.1.0 is supported (found ${JSON.stringify(r.value).slice(0, 40)})`,
          );
        continue;
      }
      const i = r.path[1] as number;
      if (i !== runIdx) {
        yield* flushSpool();
        runIdx = i;
        run = newRun();
      }
      const key = r.path[2];
      const where = `runs[${i}].${String(key)}${r.path.length > 3 ? `[${String(r.path[3])}]` : ''}`;
      if ('tooLarge' in r) {
        if (key === 'results') {
          meta.records += 1;
          skip(meta, where, 'result larger than the size Rampart reads');
        } else if (key === 'tool')
          throw new ImportError(
            'value_too_large',
            'sarif',
            `The tool description of run ${i} is larger than Rampart reads`,
          );
        continue;
      }
      const v = r.value;
      if (key === 'tool') {
        takeTool(run, v, meta, i === 0);
        yield* flushSpool();
      } else if (key === 'artifacts') {
        const loc = isObject(v) && isObject(v.location) ? str(v.location.uri) : undefined;
        if (run.artifacts.length < MAX_ARTIFACTS) run.artifacts.push(loc ?? '');
        meta.coverage.addTarget(loc);
      } else if (key === 'logicalLocations') {
        if (run.logical.length < MAX_ARTIFACTS)
          run.logical.push((isObject(v) ? (str(v.fullyQualifiedName) ?? str(v.name)) : undefined) ?? '');
      } else if (key === 'taxonomies') {
        arr(v).forEach((t, ti) => run.taxa.set(ti, arr(isObject(t) ? t.taxa : []).filter(isObject)));
      } else if (key === 'invocations') {
        if (arr(v).some((inv) => isObject(inv) && inv.executionSuccessful === false))
          meta.partial ??= `The tool reports that run ${i} did not complete`;
      } else if (key === 'results') {
        if (run.toolSeen) yield* emit(v, where);
        else {
          if (!spool) {
            const dir = mkdtempSync(join(tmpdir(), 'rampart-sarif-'));
            const out = createWriteStream(join(dir, 'results.jsonl'));
            // A write error surfaces from finished() when the spool is read back; none goes unhandled.
            out.on('error', () => undefined);
            spool = { dir, file: join(dir, 'results.jsonl'), out, count: 0 };
          }
          const s = spool as { out: ReturnType<typeof createWriteStream>; count: number };
          if (!s.out.write(`${JSON.stringify([where, v])}\n`)) await drained(s.out);
          s.count += 1;
        }
      }
    }
    yield* flushSpool();
  } finally {
    if (spool) {
      const s = spool as { dir: string; out: ReturnType<typeof createWriteStream> };
      s.out.destroy();
      rmSync(s.dir, { recursive: true, force: true });
    }
  }
  if (!sawRuns) throw new ImportError('invalid_report', 'sarif', 'Not a SARIF log: there is no "runs" array');
}
