// `rampart-worker scan webapp`: crawl flags, the profile, and an alerts table above the findings.
import { UsageError, parseIntFlag } from '../../commands/common.ts';
import type { LocalScanCli } from '../types.ts';
import { createWebappScanner, DEFAULT_TIME_BUDGET_MS, WEBAPP_PROFILES, type WebappProfile } from './index.ts';

const RISK_ORDER = ['critical', 'high', 'medium', 'low', 'info'];

interface AlertRow {
  ruleId: string;
  severity: string;
  title: string;
  url: string;
  instances: number;
}

export const webappCli: LocalScanCli = {
  kind: 'webapp',
  help: [
    '  --profile P        baseline (passive rules, default) or full (adds light active checks)',
    '  --max-pages N      pages to crawl at most (default 200)',
    '  --max-depth N      link depth from the start paths (default 3)',
    '  --paths /a,/b      start paths (default / and the usual seed paths)',
    `  --time-budget S    seconds for the whole scan (default ${DEFAULT_TIME_BUDGET_MS / 1000})`,
  ].join('\n'),
  options: {
    profile: { type: 'string' },
    'max-pages': { type: 'string' },
    'max-depth': { type: 'string' },
    paths: { type: 'string' },
    'time-budget': { type: 'string' },
  },
  prepare(values, target) {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new UsageError(`--target must be an http(s) URL for a web application scan, not ${JSON.stringify(target)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new UsageError(`--target must be an http(s) URL, not ${url.protocol}`);
    const profile = values.profile === undefined ? 'baseline' : String(values.profile);
    if (!WEBAPP_PROFILES.includes(profile as WebappProfile))
      throw new UsageError(`--profile must be baseline or full, not ${JSON.stringify(profile)}`);
    const maxPages = parseIntFlag('max-pages', values['max-pages'] as string | undefined, 1, 5000);
    const maxDepth = parseIntFlag('max-depth', values['max-depth'] as string | undefined, 1, 10);
    const budget = parseIntFlag('time-budget', values['time-budget'] as string | undefined, 1, 24 * 3600);
    let paths: string[] | undefined;
    if (typeof values.paths === 'string') {
      paths = values.paths
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean);
      const bad = paths.find((p) => !p.startsWith('/'));
      if (bad || !paths.length)
        throw new UsageError(
          `--paths takes comma-separated paths starting with /, such as /,/api (got ${JSON.stringify(values.paths)})`,
        );
    } else if (url.pathname !== '/') paths = [url.pathname];
    return {
      scanner: createWebappScanner(budget ? { timeBudgetMs: budget * 1000 } : {}),
      options: {
        profile,
        ...(maxPages ? { maxPages } : {}),
        ...(maxDepth ? { maxDepth } : {}),
        ...(paths ? { paths } : {}),
      },
    };
  },
  table(details) {
    const alerts = ((details.alerts as AlertRow[] | undefined) ?? []).slice();
    const lines = [
      `Crawled ${String(details.pagesCrawled ?? 0)} pages with ${String(details.requests ?? 0)} requests (${String(details.stopReason ?? 'exhausted')}); ${String(details.formsFound ?? 0)} forms found.`,
    ];
    if (!alerts.length) return [...lines, 'No alerts.'];
    // One row per rule: how many findings it produced, and the first URL it was seen on.
    const rows = new Map<string, { risk: string; rule: string; title: string; count: number; url: string }>();
    for (const a of alerts) {
      const r = rows.get(a.ruleId);
      if (r) r.count += 1;
      else rows.set(a.ruleId, { risk: a.severity.toUpperCase(), rule: a.ruleId, title: a.title, count: 1, url: a.url });
    }
    const sorted = [...rows.values()].sort(
      (x, y) =>
        RISK_ORDER.indexOf(x.risk.toLowerCase()) - RISK_ORDER.indexOf(y.risk.toLowerCase()) ||
        x.rule.localeCompare(y.rule, 'en', { numeric: true }),
    );
    const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
    const table = [
      ['RISK', 'RULE', 'TITLE', 'COUNT', 'FIRST URL'],
      ...sorted.map((r) => [r.risk, r.rule, cut(r.title, 50), String(r.count), cut(r.url, 80)]),
    ];
    const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
    return [
      ...lines,
      '',
      ...table.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')),
    ];
  },
  json(details) {
    // The alerts summary repeats the findings, which the JSON output carries already.
    const { alerts: _alerts, ...rest } = details;
    return rest;
  },
};
