// `rampart-worker scan template --target URL|HOST`: flags, help and output of the template scanner.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { SEVERITIES } from '../../../findings/findings-schemas.ts';
import { templateOptionsSchema } from '../../../scans/scans-schemas.ts';
import { UsageError, parseIntFlag } from '../../commands/common.ts';
import { clip, renderTable } from '../../output-text.ts';
import type { CliFlagValue, LocalScanCli } from '../types.ts';
import { createTemplateScanner } from './index.ts';
import { validateTemplate } from './model.ts';

/** More files than this in --templates is almost certainly the wrong directory. */
const MAX_TEMPLATE_FILES = 5_000;

const str = (v: CliFlagValue) => (typeof v === 'string' ? v : undefined);
const listFlag = (v: CliFlagValue) =>
  str(v) === undefined
    ? undefined
    : str(v)!
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);

/** The YAML texts of a template directory (recursively); any invalid template is a usage error. */
export function readTemplateDir(dir: string): string[] {
  const root = resolve(dir);
  let isDir = false;
  try {
    isDir = statSync(root).isDirectory();
  } catch {
    throw new UsageError(`--templates: ${root} does not exist`);
  }
  if (!isDir) throw new UsageError(`--templates: ${root} is not a directory`);
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.ya?ml$/i.test(f))
    .sort();
  if (!files.length) throw new UsageError(`--templates: no .yaml files in ${root}`);
  if (files.length > MAX_TEMPLATE_FILES)
    throw new UsageError(`--templates: ${files.length} files in ${root}; at most ${MAX_TEMPLATE_FILES}`);
  const texts: string[] = [];
  const problems: string[] = [];
  for (const f of files) {
    const text = readFileSync(join(root, f), 'utf8');
    const v = validateTemplate(text);
    if (v.ok) texts.push(text);
    else
      problems.push(
        `${relative(process.cwd(), join(root, f))}: ${v.errors
          .slice(0, 3)
          .map((e) => `${e.path}: ${e.message}`)
          .join('; ')}`,
      );
  }
  if (problems.length)
    throw new UsageError(
      `--templates: ${problems.length} invalid template${problems.length === 1 ? '' : 's'}:\n  ${problems.slice(0, 10).join('\n  ')}${problems.length > 10 ? `\n  … and ${problems.length - 10} more` : ''}`,
    );
  return texts;
}

interface Details {
  baseUrl: string | null;
  templatesRun: number;
  templatesAvailable: number;
  requests: number;
  cacheHits: number;
  errors: number;
  errorSamples: string[];
  warnings: string[];
  matches: { severity: string; templateId: string; matcher: string | null; url: string }[];
}

const RANK: Record<string, number> = { critical: 0, high: 1, medium: 2, low: 3, info: 4 };

export const templateCli: LocalScanCli = {
  kind: 'template',
  help: `  --target T          a URL (scanned as given) or a host name (https, then http)
  --templates DIR     also run the templates in DIR (*.yaml, recursively; the supported nuclei subset)
  --severity LIST     severities to run, e.g. critical,high (default: all of ${SEVERITIES.join(', ')})
  --tags LIST         run only templates with any of these tags
  --id LIST           run only these template ids
  --rate N            requests per second (default 150)
  --var NAME=VALUE    a value for templates' own placeholders such as {{username}} (repeatable)
`,
  options: {
    templates: { type: 'string' },
    severity: { type: 'string' },
    tags: { type: 'string' },
    id: { type: 'string' },
    rate: { type: 'string' },
    var: { type: 'string', multiple: true },
  },
  prepare(values) {
    const extraTemplates = str(values.templates) ? readTemplateDir(str(values.templates)!) : [];
    const rateLimit = parseIntFlag('rate', str(values.rate), 1, 1_000);
    const variables: Record<string, string> = {};
    for (const pair of Array.isArray(values.var) ? values.var : []) {
      const eq = String(pair).indexOf('=');
      if (eq < 1) throw new UsageError(`--var: give NAME=VALUE, not ${JSON.stringify(String(pair).slice(0, 80))}`);
      variables[String(pair).slice(0, eq)] = String(pair).slice(eq + 1);
    }
    const parsed = templateOptionsSchema.safeParse({
      severities: listFlag(values.severity),
      tags: listFlag(values.tags),
      templateIds: listFlag(values.id),
      rateLimit,
      ...(Object.keys(variables).length ? { variables } : {}),
    });
    if (!parsed.success) {
      const flag: Record<string, string> = {
        severities: '--severity',
        tags: '--tags',
        templateIds: '--id',
        rateLimit: '--rate',
        variables: '--var',
      };
      const i = parsed.error.issues[0]!;
      throw new UsageError(`${flag[String(i.path[0])] ?? 'options'}: ${i.message}`);
    }
    let scanner;
    try {
      scanner = createTemplateScanner({ extraTemplates });
    } catch (e) {
      throw new UsageError(`--templates: ${(e as Error).message}`);
    }
    return { scanner, options: parsed.data };
  },
  table(details, meta) {
    const d = details as unknown as Details;
    const lines = [
      d.baseUrl
        ? `template scan of ${d.baseUrl}: ${d.templatesRun} of ${d.templatesAvailable} templates run, ${d.requests} requests sent (${d.cacheHits} shared), ${d.errors} failed, ${d.matches.length} match${d.matches.length === 1 ? '' : 'es'} in ${(meta.durationMs / 1000).toFixed(1)} s`
        : `template scan: no web server answered; ${d.requests} requests sent in ${(meta.durationMs / 1000).toFixed(1)} s`,
    ];
    for (const w of d.warnings) lines.push(`Warning: ${w}`);
    for (const e of d.errorSamples) lines.push(`Request failed: ${e}`);
    if (d.matches.length) {
      const rows = [...d.matches].sort(
        (a, b) => (RANK[a.severity] ?? 5) - (RANK[b.severity] ?? 5) || (a.templateId < b.templateId ? -1 : 1),
      );
      lines.push('');
      lines.push(
        renderTable(
          ['SEVERITY', 'TEMPLATE', 'MATCHER', 'URL'],
          rows.map((m) => [m.severity.toUpperCase(), m.templateId, m.matcher ?? '-', clip(m.url, 100)]),
        ),
      );
    }
    return lines;
  },
  json(details) {
    const d = details as unknown as Details;
    return {
      baseUrl: d.baseUrl,
      templatesRun: d.templatesRun,
      requests: d.requests,
      cacheHits: d.cacheHits,
      errors: d.errors,
      warnings: d.warnings,
      matches: d.matches,
    };
  },
};
