// The web application scanner: a same-origin crawl from the scan's start paths (a chunk's paths
// when chunked), ZAP-baseline-equivalent passive rules on every answer (unchunked scans and the
// chunk that carries passiveBaseline), and light active checks with the "full" profile.
import { WORKER_VERSION } from '../../version.ts';
import { createScopedHttp, sameOrigin } from '../http/scoped-http.ts';
import { ScannerError, type Scanner, type ScanOutput, type ScanTask } from '../types.ts';
import { activeChecks } from './active.ts';
import { crawl, type CrawlResult, type CrawlStopReason } from './crawl.ts';
import { foldAlerts, maskSecrets } from './findings.ts';
import { ACTIVE_RULE_IDS, PASSIVE_RULE_IDS, passiveAlerts, type Alert } from './rules.ts';

export {
  tokenizeHtml,
  parsePage,
  decodeEntities,
  resolveRef,
  type HtmlTag,
  type HtmlDocument,
  type HtmlForm,
  type PageStructure,
} from './html.ts';
export {
  crawl,
  normalizeUrl,
  parseRobots,
  parseSitemap,
  type CrawledPage,
  type CrawlResult,
  type CrawlStopReason,
  type FormRecord,
} from './crawl.ts';
export {
  passiveAlerts,
  cspWeaknesses,
  looselyScoped,
  RULES,
  PASSIVE_RULE_IDS,
  type Alert,
  type RuleInfo,
} from './rules.ts';
export { foldAlerts, maskSecrets, MAX_PATHS_PER_RULE } from './findings.ts';
export { activeChecks, REDIRECT_PROBE, MAX_ACTIVE_REQUESTS } from './active.ts';

export const WEBAPP_PROFILES = ['baseline', 'full'] as const;
export type WebappProfile = (typeof WEBAPP_PROFILES)[number];
/** The server's default start paths (src/scans/scans-schemas.ts WEBAPP_SEED_PATHS). */
export const DEFAULT_SEED_PATHS = ['/', '/api', '/admin', '/login', '/static', '/v1', '/v2', '/health'];
export const DEFAULT_TIME_BUDGET_MS = 5 * 60_000;

export interface WebappScannerSettings {
  /** The whole scan's time budget, crawl and active checks (default 5 minutes). */
  timeBudgetMs?: number;
  /** Pages fetched at once (default 4). */
  concurrency?: number;
  /** Requests per second against the target (default 20). */
  ratePerSecond?: number;
  /** Per request timeout (default 10 s). */
  requestTimeoutMs?: number;
  /** Body cap per page (default 1 MiB). */
  maxBodyBytes?: number;
}

export interface WebappPlan {
  profile: WebappProfile;
  maxDepth: number;
  maxPages: number;
  paths: string[];
  /** Passive rules run on every page fetched (every scan and every chunk). */
  passive: boolean;
  /** robots.txt and sitemap discovery (unchunked scans and the chunk carrying passiveBaseline). */
  discover: boolean;
}

const int = (v: unknown, min: number, max: number, dflt: number) =>
  typeof v === 'number' && Number.isInteger(v) ? Math.min(max, Math.max(min, v)) : dflt;
const pathList = (v: unknown) =>
  Array.isArray(v)
    ? v.filter((x): x is string => typeof x === 'string' && x.startsWith('/') && x.length <= 2_000).slice(0, 100)
    : [];

/** What a lease asks for: its options (untrusted, read leniently) narrowed by its chunk. */
export function webappPlan(options: Record<string, unknown>, chunk: ScanTask['chunk']): WebappPlan {
  const spec = chunk?.spec ?? {};
  const profileRaw = spec.profile ?? options.profile;
  const profile: WebappProfile = profileRaw === 'full' ? 'full' : 'baseline';
  const chunkPaths = pathList(spec.paths);
  const optionPaths = pathList(options.paths);
  const paths = chunk && chunkPaths.length ? chunkPaths : optionPaths.length ? optionPaths : DEFAULT_SEED_PATHS;
  // Every chunk runs the passive rules on the pages it fetched, so a split scan finds at least
  // what one unsplit scan finds; only discovery (robots.txt, sitemaps) stays with one chunk.
  const discover = chunk ? spec.passiveBaseline === true : true;
  return {
    profile,
    maxDepth: int(options.maxDepth, 1, 10, 3),
    maxPages: int(options.maxPages, 1, 5000, 200),
    paths: [...new Set(paths)],
    passive: true,
    discover,
  };
}

function targetUrl(target: string): URL {
  let u: URL;
  try {
    u = new URL(target.trim());
  } catch {
    throw new ScannerError(
      `The web application target ${JSON.stringify(target.slice(0, 200))} is not a URL; give one such as https://app.example.com/`,
      false,
    );
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new ScannerError(`The web application target must be an http(s) URL, not ${u.protocol}`, false);
  return u;
}

/**
 * What a crawl covered, and whether it may close anything. A crawl that fetched no page looked at
 * nothing (inconclusive); one cut short by its time budget, or with pages that gave no answer,
 * did not look at everything (partial). An answer of any status, 404 or 500 included, counts.
 */
export function crawlOutcome(
  target: URL,
  plan: WebappPlan,
  r: CrawlResult,
  stopReason: CrawlStopReason,
): Pick<ScanOutput, 'inconclusive' | 'partial' | 'coverage'> {
  const urls = [...new Set(r.pages.map((p) => maskSecrets(p.url)))].sort();
  const rules = [...(plan.passive ? PASSIVE_RULE_IDS : []), ...(plan.profile === 'full' ? ACTIVE_RULE_IDS : [])];
  const coverage = { urls, urlCount: urls.length, rules };
  const failed = r.errors
    ? `${r.errors} page request${r.errors === 1 ? '' : 's'} got no answer (${maskSecrets(r.errorSamples[0] ?? 'no detail')})`
    : '';
  if (r.pages.length === 0)
    return { inconclusive: `no page of ${target.origin} could be fetched${failed ? `: ${failed}` : ''}`, coverage };
  const gaps = [
    ...(stopReason === 'time-budget' ? [`the crawl stopped at its time budget after ${r.pages.length} pages`] : []),
    ...(failed ? [failed] : []),
  ];
  return { ...(gaps.length ? { partial: gaps.join('; ') } : {}), coverage };
}

export function createWebappScanner(settings: WebappScannerSettings = {}): Scanner {
  return {
    kind: 'webapp',
    tool: { name: 'rampart-webapp', version: WORKER_VERSION },
    async run(task) {
      const target = targetUrl(task.target);
      const plan = webappPlan(task.options, task.chunk);
      const started = Date.now();
      const budget = settings.timeBudgetMs ?? DEFAULT_TIME_BUDGET_MS;
      const active = plan.profile === 'full';
      // The crawl leaves part of the budget to the active checks.
      const crawlDeadline = started + (active ? budget * 0.6 : budget);
      const hardStop = new AbortController();
      const timer = setTimeout(() => hardStop.abort(new Error('time budget spent')), budget);
      const signal = AbortSignal.any([task.signal, hardStop.signal]);
      const http = createScopedHttp({
        inScope: sameOrigin(target),
        signal,
        ratePerSecond: settings.ratePerSecond ?? 20,
        concurrency: Math.max(settings.concurrency ?? 4, 1),
        ...(settings.requestTimeoutMs ? { timeoutMs: settings.requestTimeoutMs } : {}),
        ...(task.egress ? { egress: task.egress } : {}),
      });
      const alerts: Alert[] = [];
      const seeds = plan.paths.map((p) => new URL(p, target.origin).href);
      if (plan.discover && !seeds.includes(target.href)) seeds.unshift(target.href);
      task.progress(0, `Crawling ${target.origin} (up to ${plan.maxPages} pages)`);
      try {
        const result = await crawl({
          http,
          origin: target.origin,
          seeds,
          discover: plan.discover,
          maxPages: plan.maxPages,
          maxDepth: plan.maxDepth,
          deadline: crawlDeadline,
          signal: task.signal,
          concurrency: settings.concurrency ?? 4,
          maxBodyBytes: settings.maxBodyBytes ?? 1024 * 1024,
          onPage: (p) => {
            if (plan.passive) alerts.push(...passiveAlerts(p));
          },
          onProgress: (n) =>
            task.progress(Math.min(n / plan.maxPages, 1) * (active ? 60 : 100), `${n}/${plan.maxPages} pages crawled`),
        });
        if (task.signal.aborted) throw task.signal.reason ?? new DOMException('The scan was cancelled', 'AbortError');
        let activeResult = { alerts: [] as Alert[], requests: 0, endpoints: 0 };
        if (active) {
          task.progress(60, `Active checks on ${result.pages.length} pages`);
          activeResult = await activeChecks({
            http,
            origin: target.origin,
            pages: result.pages,
            forms: result.forms,
            stopped: () => signal.aborted || Date.now() >= started + budget,
          });
          if (task.signal.aborted) throw task.signal.reason ?? new DOMException('The scan was cancelled', 'AbortError');
          alerts.push(...activeResult.alerts);
        }
        const stopReason: CrawlStopReason =
          result.stopReason === 'cancelled' && hardStop.signal.aborted ? 'time-budget' : result.stopReason;
        const folded = foldAlerts(alerts);
        task.progress(100, `${result.pages.length} pages crawled, ${folded.findings.length} findings`);
        return {
          findings: folded.findings,
          ...crawlOutcome(target, plan, result, stopReason),
          details: {
            target: target.href,
            profile: plan.profile,
            passive: plan.passive,
            pagesCrawled: result.pages.length,
            requests: http.sent,
            requestErrors: result.errors,
            requestErrorSamples: result.errorSamples.map(maskSecrets),
            formsFound: result.forms.length,
            stopReason,
            robotsPaths: result.robotsPaths,
            sitemapUrls: result.sitemapUrls,
            blockedRedirects: result.blockedRedirects.map(maskSecrets),
            activeEndpoints: activeResult.endpoints,
            activeRequests: activeResult.requests,
            rulesFired: folded.counts,
            cappedRules: folded.capped,
            alerts: folded.findings.map((f) => ({
              ruleId: f.ruleId,
              severity: f.severity,
              title: f.title,
              url: f.location.url,
              instances: (f.evidence?.data as { instances?: number } | undefined)?.instances ?? 1,
            })),
            pages: result.pages.map((p) => ({
              url: maskSecrets(p.url),
              status: p.res.status,
              depth: p.depth,
              source: p.source,
            })),
          },
        };
      } finally {
        clearTimeout(timer);
        http.close();
      }
    },
  };
}
