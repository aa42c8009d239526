// The template scanner as the agent and the CLI use it: the built-in templates plus extra and
// tenant templates (validated again here: the worker trusts nothing in a lease), filtered by the
// scan's severities, tags and ids, run against the target's web origin through the scoped client.
import { templateOptionsSchema } from '../../../scans/scans-schemas.ts';
import { WORKER_VERSION } from '../../version.ts';
import { createScopedHttp, HttpTransportError, sameHost, sameOrigin, type HttpExchange } from '../http/scoped-http.ts';
import { hostOfTarget } from '../port/index.ts';
import { ScannerError, type Scanner, type ScanTask } from '../types.ts';
import { BUILTIN_TEMPLATES } from './builtin-templates.ts';
import { CookieJar } from './cookies.ts';
import { cacheKey, runTemplates, type EngineStats, type TemplateMatch } from './engine.ts';
import { templateFindings } from './findings.ts';
import { validateTemplate, type Template } from './model.ts';
import { oobId, oobUrl, type OobClient, type OobLeaseOptions } from './oob.ts';

export {
  validateTemplate,
  TEMPLATE_LIMITS,
  TEMPLATE_VARIABLES,
  type Template,
  type TemplateError,
  type TemplateValidation,
  type Matcher,
  type Extractor,
  type RequestBlock,
} from './model.ts';
export {
  runTemplates,
  evaluateBlock,
  templateVariables,
  type TemplateMatch,
  type EngineStats,
  type RunTemplatesOptions,
} from './engine.ts';
export { templateFindings, curlCommand } from './findings.ts';
export { parseDsl, evaluateDsl, DslError, DSL_LIMITS, DSL_VARIABLES } from './dsl.ts';
export { compileTemplateRegex, MAX_REGEX_LENGTH } from './regex.ts';
export { BUILTIN_TEMPLATES } from './builtin-templates.ts';

export const DEFAULT_TEMPLATE_CONCURRENCY = 25;
export const DEFAULT_TEMPLATE_TIMEOUT_MS = 10_000;
/** At most this many tenant templates per lease. */
export const MAX_CUSTOM_TEMPLATES = 500;

export interface TemplateScannerSettings {
  /** More templates as YAML texts (the CLI's --templates directory); invalid ones throw at creation. */
  extraTemplates?: string[];
  /** Requests in flight and templates run at once (default 25). */
  concurrency?: number;
  /** Per request, connect to last byte (default 10 s). */
  timeoutMs?: number;
  /** How long to wait for out-of-band callbacks after the last request (default 5 s, as nuclei). */
  oobWaitMs?: number;
}

/** The lease's out-of-band settings, when the scan has them and a way to read callbacks. */
function oobOf(task: ScanTask): OobLeaseOptions | null {
  const o = task.options.oob as Partial<OobLeaseOptions> | undefined;
  if (
    !task.oobInteractions ||
    typeof o !== 'object' ||
    o === null ||
    typeof o.prefix !== 'string' ||
    !/^[a-z0-9]{12}$/.test(o.prefix)
  )
    return null;
  const httpBase =
    typeof o.httpBase === 'string' && /^[A-Za-z0-9.:[\]-]+\/oob\/$/.test(o.httpBase) ? o.httpBase : undefined;
  const dnsDomain =
    typeof o.dnsDomain === 'string' && /^[a-z0-9-]+(?:\.[a-z0-9-]+)+$/.test(o.dnsDomain) ? o.dnsDomain : undefined;
  if (!httpBase && !dnsDomain) return null;
  return { prefix: o.prefix, ...(httpBase ? { httpBase } : {}), ...(dnsDomain ? { dnsDomain } : {}) };
}

export interface TemplateFilter {
  severities: readonly string[];
  tags: readonly string[];
  templateIds: readonly string[];
}

/** A template runs when its severity is selected and, if given, it has any of the tags and its id is listed. */
export function selectTemplates<T extends Pick<Template, 'id' | 'info'>>(
  templates: readonly T[],
  f: TemplateFilter,
): T[] {
  const tags = new Set(f.tags.map((t) => t.toLowerCase()));
  const ids = new Set(f.templateIds);
  return templates.filter(
    (t) =>
      f.severities.includes(t.info.severity) &&
      (!tags.size || t.info.tags.some((x) => tags.has(x))) &&
      (!ids.size || ids.has(t.id)),
  );
}

let builtins: Template[] | undefined;

/** The built-in templates, parsed once per process. */
export function builtinTemplates(): Template[] {
  builtins ??= BUILTIN_TEMPLATES.map(({ file, yaml }) => {
    const v = validateTemplate(yaml);
    if (!v.ok)
      throw new Error(
        `Built-in template ${file} is invalid: ${v.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
      );
    return v.template;
  });
  return builtins;
}

type TargetPlan = { kind: 'url'; base: URL } | { kind: 'host'; host: string; candidates: URL[] };

/** A URL target is scanned as given (its origin is the scope); a host is tried over https, then http. */
export function templateTarget(target: string): TargetPlan {
  const t = target.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(t)) {
    let u: URL;
    try {
      u = new URL(t);
    } catch {
      throw new ScannerError(`The target ${JSON.stringify(t.slice(0, 200))} is not a valid URL`, false);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new ScannerError(`Template scans need an http or https URL, not ${u.protocol}`, false);
    u.search = '';
    u.hash = '';
    return { kind: 'url', base: u };
  }
  const withPort = /^([^\s/:[\]]+):(\d{1,5})$/.exec(t);
  const host = withPort ? withPort[1]! : hostOfTarget(t);
  const port = withPort ? `:${withPort[2]}` : '';
  const h = host.includes(':') ? `[${host}]` : host;
  return { kind: 'host', host, candidates: [new URL(`https://${h}${port}/`), new URL(`http://${h}${port}/`)] };
}

interface ScanPlan extends TemplateFilter {
  rateLimit: number;
  variables: Record<string, string>;
  custom: { id: string; yaml: string; payloadFiles: Record<string, string> }[];
}

function planOf(task: ScanTask): ScanPlan {
  const o = task.options;
  const parsed = templateOptionsSchema.safeParse({
    severities: o.severities,
    tags: o.tags,
    templateIds: o.templateIds,
    rateLimit: o.rateLimit,
    variables: o.variables,
  });
  if (!parsed.success)
    throw new ScannerError(
      `Invalid template scan options: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      false,
    );
  let { severities, tags, templateIds } = parsed.data;
  const spec = task.chunk?.spec;
  if (spec && spec.kind === 'template') {
    const chunk = templateOptionsSchema
      .pick({ severities: true, tags: true, templateIds: true })
      .safeParse({ severities: spec.severities, tags: spec.tags, templateIds: spec.templateIds });
    if (!chunk.success)
      throw new ScannerError(
        `Invalid template chunk: ${chunk.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
        false,
      );
    ({ severities, tags, templateIds } = chunk.data);
  }
  const custom = Array.isArray(o.customTemplates) ? o.customTemplates : [];
  if (custom.length > MAX_CUSTOM_TEMPLATES)
    throw new ScannerError(
      `The scan carries ${custom.length} custom templates; at most ${MAX_CUSTOM_TEMPLATES} are allowed`,
      false,
    );
  return {
    severities,
    tags,
    templateIds,
    rateLimit: parsed.data.rateLimit,
    variables: parsed.data.variables ?? {},
    custom: custom.map((c: unknown, i) => {
      const r = (typeof c === 'object' && c !== null ? c : {}) as {
        id?: unknown;
        yaml?: unknown;
        payloadFiles?: unknown;
      };
      const files = typeof r.payloadFiles === 'object' && r.payloadFiles !== null ? r.payloadFiles : {};
      return {
        id: typeof r.id === 'string' ? r.id.slice(0, 100) : `#${i + 1}`,
        yaml: typeof r.yaml === 'string' ? r.yaml : '',
        // A lease is not trusted: only text values are files.
        payloadFiles: Object.fromEntries(Object.entries(files).filter(([, t]) => typeof t === 'string')) as Record<
          string,
          string
        >,
      };
    }),
  };
}

export interface TemplateScanResult {
  /** The origin scanned, or null when a host had no web server. */
  baseUrl: string | null;
  matches: TemplateMatch[];
  stats: EngineStats;
  /** Templates that matched the filters (and so ran). */
  templatesRun: number;
  /** The ids of the templates selected for this scan (run, or judged moot when nothing serves the web). */
  templateIds: string[];
  /** Set when no web server could be reached and it is not known that none is there (timeouts, resets). */
  inconclusive?: string;
  /** Templates available before filtering. */
  templatesAvailable: number;
  warnings: string[];
}

export function createTemplateScanner(
  settings: TemplateScannerSettings = {},
): Scanner & { scan(task: ScanTask): Promise<TemplateScanResult> } {
  const concurrency = settings.concurrency ?? DEFAULT_TEMPLATE_CONCURRENCY;
  const timeoutMs = settings.timeoutMs ?? DEFAULT_TEMPLATE_TIMEOUT_MS;
  const extras = (settings.extraTemplates ?? []).map((yaml, i) => {
    const v = validateTemplate(yaml);
    if (!v.ok)
      throw new Error(
        `Extra template #${i + 1} is invalid: ${v.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
      );
    return v.template;
  });

  async function scan(task: ScanTask): Promise<TemplateScanResult> {
    const plan = planOf(task);
    const warnings: string[] = [];
    const oobLease = oobOf(task);
    const oobSupport = oobLease ? { http: true, dns: Boolean(oobLease.dnsDomain) } : undefined;
    const oob: OobClient | undefined = oobLease
      ? {
          next: () => {
            const id = oobId();
            return { id, url: oobUrl(oobLease, `${oobLease.prefix}${id}`) };
          },
          poll: async () =>
            (await task.oobInteractions!())
              .filter((i) => i.token.startsWith(oobLease.prefix))
              .map((i) => ({
                id: i.token.slice(oobLease.prefix.length),
                protocol: i.protocol,
                request: i.request,
                remoteAddress: i.remoteAddress,
              })),
          waitMs: settings.oobWaitMs ?? 5_000,
        }
      : undefined;
    const all = [...builtinTemplates()];
    const ids = new Set(all.map((t) => t.id));
    const add = (t: Template, what: string) => {
      if (ids.has(t.id)) return warnings.push(`${what}: skipped, the template id ${t.id} is already taken`);
      ids.add(t.id);
      all.push(t);
    };
    for (const t of extras) add(t, `Extra template ${t.id}`);
    for (const c of plan.custom) {
      const v = validateTemplate(c.yaml, { ...(oobSupport ? { oob: oobSupport } : {}), payloadFiles: c.payloadFiles });
      if (!v.ok)
        warnings.push(
          `Custom template ${c.id}: skipped, invalid: ${v.errors
            .slice(0, 3)
            .map((e) => `${e.path}: ${e.message}`)
            .join('; ')}`,
        );
      else add(v.template, `Custom template ${c.id}`);
    }
    const selected = selectTemplates(all, plan);
    for (const t of selected) {
      const lacking = t.inputs.filter((n) => !Object.hasOwn(plan.variables, n));
      if (lacking.length)
        warnings.push(
          `Template ${t.id} reads ${lacking.map((n) => `{{${n}}}`).join(', ')}, which this scan's variables do not give: the requests using them were not sent`,
        );
    }
    const target = templateTarget(task.target);
    const http = createScopedHttp({
      inScope: target.kind === 'url' ? sameOrigin(target.base) : sameHost(target.host),
      signal: task.signal,
      timeoutMs,
      ratePerSecond: plan.rateLimit,
      concurrency,
      ...(task.egress ? { egress: task.egress } : {}),
    });
    const empty: EngineStats = {
      templates: selected.length,
      requests: 0,
      cacheHits: 0,
      errors: 0,
      errorSamples: [],
      skipped: 0,
      skippedSamples: [],
    };
    try {
      task.progress(0, `Looking for a web server on ${target.kind === 'url' ? target.base.origin : target.host}`);
      // The root is fetched first: it picks the scheme of a host target, and templates probing
      // the root share the answer.
      const cache = new Map<string, Promise<HttpExchange>>();
      const failures: string[] = [];
      const codes: string[] = [];
      let base: URL | null = null;
      for (const candidate of target.kind === 'url' ? [target.base] : target.candidates) {
        const root = new URL('/', candidate).href;
        // As the engine sends it, so templates probing the root share the answer; a body cut short
        // is still an answer (nuclei keeps what arrived).
        const p = http.request({ url: root, target: '/', keepPartial: true, keepHops: true, cookies: new CookieJar() });
        try {
          await p;
        } catch (e) {
          if (task.signal.aborted) throw task.signal.reason ?? e;
          if (!(e instanceof HttpTransportError)) throw e;
          failures.push(e.message);
          codes.push(e.code);
          continue;
        }
        cache.set(cacheKey('GET', root, {}, 0, undefined)!, p);
        base = candidate;
        break;
      }
      if (!base) {
        if (target.kind === 'url')
          throw new ScannerError(`No answer from ${target.base.origin}: ${failures.join('; ')}`, true);
        // A host that refuses both web ports has no web server: a result, there is nothing to
        // match. One that did not answer at all may be down: nothing was looked at.
        const silent = codes.some((c) => c !== 'ECONNREFUSED');
        const why = `No web server answered on ${target.host}: ${failures.join('; ')}`;
        // Network (tcp) and ssl templates do not need a web server: they still run against the host.
        const network = selected.filter((t) => !t.requests.length && (t.network.length || t.ssl.length));
        const net = network.length
          ? await runTemplates({
              baseUrl: target.candidates[1]!,
              templates: network,
              http,
              signal: task.signal,
              concurrency,
              timeoutMs,
              variables: plan.variables,
            })
          : null;
        return {
          baseUrl: null,
          matches: net?.matches ?? [],
          stats: { ...(net?.stats ?? empty), requests: http.sent },
          templatesRun: 0,
          templateIds: selected.map((t) => t.id),
          ...(silent ? { inconclusive: why } : {}),
          templatesAvailable: all.length,
          warnings: [...warnings, why],
        };
      }
      task.progress(0, `Running ${selected.length} templates against ${base.href}`);
      const { matches, stats } = await runTemplates({
        baseUrl: base,
        templates: selected,
        http,
        signal: task.signal,
        concurrency,
        cache,
        timeoutMs,
        variables: plan.variables,
        ...(oob ? { oob } : {}),
        onProgress: (done, total) =>
          task.progress((done / total) * 100, `${done}/${total} templates, ${http.sent} requests`),
      });
      return {
        baseUrl: base.href,
        matches,
        stats: { ...stats, requests: http.sent },
        templatesRun: selected.length,
        templateIds: selected.map((t) => t.id),
        templatesAvailable: all.length,
        warnings,
      };
    } finally {
      http.close();
    }
  }

  return {
    kind: 'template',
    tool: { name: 'rampart-template', version: WORKER_VERSION },
    scan,
    async run(task) {
      const r = await scan(task);
      return {
        findings: templateFindings(r.matches),
        // A template whose request failed said nothing about its check: close nothing this time.
        ...(r.stats.errors > 0
          ? {
              partial: `${r.stats.errors} request${r.stats.errors === 1 ? '' : 's'} failed (${r.stats.errorSamples[0] ?? 'no detail'})`,
            }
          : {}),
        ...(r.inconclusive ? { inconclusive: r.inconclusive } : {}),
        coverage: { templates: [...new Set(r.templateIds)].sort(), urls: r.baseUrl ? [r.baseUrl] : [] },
        details: {
          baseUrl: r.baseUrl,
          templatesRun: r.templatesRun,
          templatesAvailable: r.templatesAvailable,
          requests: r.stats.requests,
          cacheHits: r.stats.cacheHits,
          errors: r.stats.errors,
          errorSamples: r.stats.errorSamples,
          ...(r.stats.skipped ? { skipped: r.stats.skipped, skippedSamples: r.stats.skippedSamples } : {}),
          warnings: r.warnings,
          matches: r.matches.map((m) => ({
            severity: m.template.info.severity,
            templateId: m.template.id,
            matcher: m.matcher ?? null,
            url: m.url,
          })),
        },
      };
    },
  };
}
