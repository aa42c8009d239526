// The crawler: breadth-first from the seeds (plus robots.txt and sitemap paths when discovering),
// same origin only, within page, depth and time limits. It never submits forms; it records them
// for the active checks. Off-scope URLs are never queued, and off-scope redirects never followed
// (the scoped client refuses them as well).
import type { HttpExchange, ScopedHttp } from '../http/scoped-http.ts';
import { decodeEntities, parsePage, resolveRef, type HtmlForm, type PageStructure } from './html.ts';

export type CrawlStopReason = 'page-limit' | 'time-budget' | 'exhausted' | 'cancelled';
export type UrlSource = 'seed' | 'link' | 'robots' | 'sitemap' | 'redirect';

export interface CrawledPage {
  /** The URL requested (normalised). */
  url: string;
  depth: number;
  source: UrlSource;
  res: HttpExchange;
  /** Links and forms, for text/html answers. */
  page?: PageStructure;
}

export interface FormRecord extends HtmlForm {
  /** The page the form was found on. */
  page: string;
}

export interface CrawlSettings {
  http: ScopedHttp;
  /** The target: its origin is the crawl's scope. */
  origin: string;
  /** Absolute start URLs (depth 0). */
  seeds: string[];
  /** Read robots.txt and sitemap.xml for more seeds (the unchunked scan and chunk 0 only). */
  discover: boolean;
  maxPages: number;
  maxDepth: number;
  /** Epoch ms after which no new page is fetched. */
  deadline: number;
  signal: AbortSignal;
  /** Pages fetched at once. */
  concurrency: number;
  /** Body cap per page. */
  maxBodyBytes: number;
  onPage(page: CrawledPage): void;
  onProgress?(pages: number): void;
}

export interface CrawlResult {
  pages: CrawledPage[];
  forms: FormRecord[];
  stopReason: CrawlStopReason;
  /** Paths found in robots.txt and URLs found in sitemaps (in scope). */
  robotsPaths: string[];
  sitemapUrls: number;
  /** Redirects that pointed off scope and were not followed. */
  blockedRedirects: string[];
  /** Page requests that got no answer (refused, timed out, reset), with the first few reasons. */
  errors: number;
  errorSamples: string[];
}

/** Query strings that differ only in parameter order are one URL; fragments never matter. */
export function normalizeUrl(u: URL): string {
  const out = new URL(u.href);
  out.hash = '';
  if (out.search) {
    const params = [...out.searchParams.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    out.search = new URLSearchParams(params).toString();
  }
  return out.href;
}

const MAX_QUERY_VARIANTS = 3;
const MAX_ERROR_SAMPLES = 5;
const MAX_SITEMAPS = 5;
const MAX_SITEMAP_URLS = 500;
const MAX_ROBOTS_PATHS = 100;
const HTML_TYPE = /^\s*(?:text\/html|application\/xhtml\+xml)\b/i;

export const isHtml = (res: HttpExchange) => HTML_TYPE.test(res.headers['content-type'] ?? '');

/** Disallow/Allow paths (wildcards cut off) and Sitemap URLs of a robots.txt. */
export function parseRobots(text: string): { paths: string[]; sitemaps: string[] } {
  const paths = new Set<string>();
  const sitemaps: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*/, '').trim();
    const m = /^(disallow|allow|sitemap)\s*:\s*(\S+)/i.exec(line);
    if (!m) continue;
    if (m[1]!.toLowerCase() === 'sitemap') {
      sitemaps.push(m[2]!);
      continue;
    }
    const path = m[2]!.split(/[*$]/)[0]!;
    if (path.startsWith('/') && path !== '/') paths.add(path);
  }
  return { paths: [...paths].slice(0, MAX_ROBOTS_PATHS), sitemaps };
}

/** The <loc> entries of a sitemap or sitemap index. */
export function parseSitemap(xml: string): { index: boolean; locs: string[] } {
  const locs = [...xml.matchAll(/<loc>\s*([^<]+?)\s*<\/loc>/gi)].map((m) =>
    decodeEntities(m[1]!.replace(/^<!\[CDATA\[|\]\]>$/g, '')),
  );
  return { index: /<sitemapindex[\s>]/i.test(xml), locs };
}

export async function crawl(s: CrawlSettings): Promise<CrawlResult> {
  const origin = new URL(s.origin).origin;
  const pages: CrawledPage[] = [];
  const forms: FormRecord[] = [];
  const formKeys = new Set<string>();
  const blockedRedirects = new Set<string>();
  const queue: { url: string; depth: number; source: UrlSource }[] = [];
  const seen = new Set<string>();
  const variants = new Map<string, number>();
  let head = 0;
  let inflight = 0;
  let stop: CrawlStopReason | undefined;
  let wake: (() => void)[] = [];
  const notify = () => {
    const w = wake;
    wake = [];
    for (const f of w) f();
  };
  const timeUp = () => Date.now() >= s.deadline;

  function enqueue(ref: string | URL, depth: number, source: UrlSource): void {
    let u: URL;
    try {
      u = typeof ref === 'string' ? new URL(ref) : ref;
    } catch {
      return;
    }
    if (u.origin !== origin || depth > s.maxDepth) return;
    const key = normalizeUrl(u);
    if (seen.has(key)) return;
    // Many query variants of one path are usually one page (calendars, sort orders, sessions).
    const pathKey = `${u.origin}${u.pathname}`;
    const n = variants.get(pathKey) ?? 0;
    if (u.search && n >= MAX_QUERY_VARIANTS) return;
    variants.set(pathKey, n + 1);
    seen.add(key);
    queue.push({ url: key, depth, source });
    notify();
  }

  async function fetchText(path: string, cap: number): Promise<HttpExchange | undefined> {
    try {
      const res = await s.http.request({ url: new URL(path, origin), maxRedirects: 3, maxBodyBytes: cap });
      if (res.blockedRedirect) blockedRedirects.add(res.blockedRedirect);
      return res.status === 200 ? res : undefined;
    } catch (e) {
      if (s.signal.aborted) throw e;
      return undefined;
    }
  }

  const robotsPaths: string[] = [];
  let sitemapUrls = 0;
  let errors = 0;
  const errorSamples: string[] = [];
  for (const seed of s.seeds) enqueue(seed, 0, 'seed');
  if (s.discover && !timeUp()) {
    const robots = await fetchText('/robots.txt', 256 * 1024);
    const parsed = robots ? parseRobots(robots.body.toString('utf8')) : { paths: [], sitemaps: [] };
    for (const p of parsed.paths) {
      robotsPaths.push(p);
      enqueue(new URL(p, origin), 0, 'robots');
    }
    const sitemapQueue = [
      new URL('/sitemap.xml', origin).href,
      ...parsed.sitemaps
        .map((x) => resolveRef(x, origin)?.href)
        .filter((x): x is string => !!x && new URL(x).origin === origin),
    ];
    const fetchedMaps = new Set<string>();
    while (sitemapQueue.length && fetchedMaps.size < MAX_SITEMAPS && sitemapUrls < MAX_SITEMAP_URLS && !timeUp()) {
      const next = sitemapQueue.shift()!;
      if (fetchedMaps.has(next)) continue;
      fetchedMaps.add(next);
      const res = await fetchText(next, 2 * 1024 * 1024);
      if (!res) continue;
      const map = parseSitemap(res.body.toString('utf8'));
      for (const loc of map.locs) {
        const u = resolveRef(loc, origin);
        if (!u || u.origin !== origin) continue;
        if (map.index) sitemapQueue.push(u.href);
        else if (sitemapUrls < MAX_SITEMAP_URLS) {
          sitemapUrls += 1;
          enqueue(u, 0, 'sitemap');
        }
      }
    }
  }

  async function visit(item: { url: string; depth: number; source: UrlSource }): Promise<void> {
    let res: HttpExchange;
    try {
      // Redirects are crawled hop by hop: each answer is checked (big redirects, cookies set on
      // the way) and an off-scope hop is recorded, never requested.
      res = await s.http.request({ url: item.url, maxRedirects: 0, maxBodyBytes: s.maxBodyBytes });
    } catch (e) {
      if (s.signal.aborted) throw e;
      // Unanswered pages are counted: a crawl that reached nothing must not pass for a clean site.
      errors += 1;
      if (errorSamples.length < MAX_ERROR_SAMPLES)
        errorSamples.push(`${item.url}: ${e instanceof Error ? e.message.slice(0, 200) : String(e)}`);
      return;
    }
    const crawled: CrawledPage = { url: item.url, depth: item.depth, source: item.source, res };
    const location = res.status >= 300 && res.status < 400 ? res.headers.location : undefined;
    if (location) {
      const next = resolveRef(location, res.url);
      if (next && next.origin === origin) enqueue(next, item.depth, 'redirect');
      else if (next) blockedRedirects.add(next.href);
    } else if (isHtml(res)) {
      crawled.page = parsePage(res.body.toString('utf8'), res.url);
      for (const link of crawled.page.links) enqueue(link, item.depth + 1, 'link');
      for (const f of crawled.page.forms) {
        if (new URL(f.action).origin !== origin) continue;
        const key = `${f.method} ${f.action.split('?')[0]} ${f.fields
          .map((x) => x.name)
          .sort()
          .join(',')}`;
        if (formKeys.has(key)) continue;
        formKeys.add(key);
        forms.push({ ...f, page: item.url });
      }
    }
    pages.push(crawled);
    s.onPage(crawled);
    s.onProgress?.(pages.length);
  }

  async function worker(): Promise<void> {
    for (;;) {
      if (s.signal.aborted) {
        stop ??= 'cancelled';
        return;
      }
      const more = head < queue.length;
      if (more && timeUp()) {
        stop ??= 'time-budget';
        return;
      }
      if (more && pages.length + inflight >= s.maxPages) {
        stop ??= 'page-limit';
        return;
      }
      if (!more) {
        if (inflight === 0) return;
        await new Promise<void>((r) => wake.push(r));
        continue;
      }
      const item = queue[head]!;
      head += 1;
      inflight += 1;
      try {
        await visit(item);
      } finally {
        inflight -= 1;
        notify();
      }
    }
  }

  try {
    await Promise.all(Array.from({ length: Math.max(1, s.concurrency) }, () => worker()));
  } catch (e) {
    if (!s.signal.aborted) throw e;
    stop = 'cancelled';
  }
  notify();
  return {
    pages,
    forms,
    stopReason: stop ?? 'exhausted',
    robotsPaths,
    sitemapUrls,
    blockedRedirects: [...blockedRedirects],
    errors,
    errorSamples,
  };
}
