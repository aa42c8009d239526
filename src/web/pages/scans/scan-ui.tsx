// Shared pieces of the scan and schedule pages: labels and badges, progress, chunk descriptions,
// and the scan-definition fields (asset, kind, kind-specific options, chunk count) both the
// "New scan" and the schedule forms use. The server validates again and stays the authority.
// Over 500 lines on purpose: the scan-definition fields shared by the New scan and schedule forms, one field set per
// scan kind.
import {
  Alert,
  Badge,
  Checkbox,
  Group,
  NativeSelect,
  Progress,
  SimpleGrid,
  Stack,
  Switch,
  Text,
  Textarea,
  TextInput,
} from '@mantine/core';
import { TextLink } from '../../components/links.tsx';
import type { ApiError } from '../../lib/api.ts';
import type { FormErrors, FormState } from '../../lib/use-form.ts';
import type {
  CreateScanBody,
  ReportCoverage,
  Scan,
  ScanKind,
  ScanOutcome,
  ScanStatus,
  Severity,
} from '../../lib/scans-api.ts';
import type { Asset, AssetKind } from '../../lib/types.ts';
import { CHUNKABLE_KINDS, isScanKind, SCAN_KINDS } from '../../../lib/scan-kinds.ts';

export { SCAN_KINDS };
export const SCAN_STATUSES: ScanStatus[] = [
  'queued',
  'leased',
  'running',
  'ingesting',
  'chunking',
  'aggregating',
  'succeeded',
  'failed',
  'cancelled',
];
export const SEVERITIES: Severity[] = ['info', 'low', 'medium', 'high', 'critical'];
export const SEED_PATHS = ['/', '/api', '/admin', '/login', '/static', '/v1', '/v2', '/health'];

export const SCAN_KIND_LABELS: Record<ScanKind, string> = {
  port: 'Port scan',
  template: 'Template scan',
  webapp: 'Web application scan',
  container: 'Container scan',
  edge: 'Edge check (TLS and HTTP)',
};
export const SCAN_KIND_HELP: Record<ScanKind, string> = {
  port: 'Finds open TCP ports and the services behind them. Split into chunks, each chunk scans one slice of the port range.',
  template:
    'Runs detection templates (exposures, misconfigurations, known CVEs). Split into chunks, each chunk runs one group of severities.',
  webapp:
    'Crawls the application and checks headers, cookies and information leaks. Split into chunks, each chunk starts from some of the paths; chunk 0 also runs the passive baseline.',
  container: 'Lists the packages in the image and matches them against known vulnerabilities.',
  edge: 'Checks certificates, TLS protocols and ciphers, redirects and HSTS on the given ports.',
};
/** Which kinds apply to which asset kinds (the server's rule, repeated for the form). */
export const KINDS_FOR_ASSET: Record<AssetKind, ScanKind[]> = {
  domain: ['port', 'edge', 'template'],
  host: ['port', 'edge', 'template'],
  webapp: ['webapp', 'template', 'edge'],
  container_image: ['container'],
};

export const STATUS_LABELS: Record<ScanStatus, string> = {
  queued: 'Queued',
  leased: 'Starting',
  running: 'Running',
  ingesting: 'Reading results',
  chunking: 'Queued (chunked)',
  aggregating: 'Running (chunked)',
  succeeded: 'Succeeded',
  failed: 'Failed',
  cancelled: 'Cancelled',
};
const STATUS_COLORS: Record<ScanStatus, string> = {
  queued: 'gray',
  leased: 'blue',
  running: 'blue',
  ingesting: 'cyan',
  chunking: 'gray',
  aggregating: 'blue',
  succeeded: 'green',
  failed: 'red',
  cancelled: 'dark',
};

export function isScanStatus(v: unknown): v is ScanStatus {
  return typeof v === 'string' && (SCAN_STATUSES as string[]).includes(v);
}
export { isScanKind };

/**
 * A scan's status; a succeeded scan whose result was inconclusive (nothing was looked at) or
 * partial says so instead, since neither closed any finding.
 */
export function ScanStatusBadge({ status, outcome }: { status: ScanStatus; outcome?: ScanOutcome | null }) {
  const worth = status === 'succeeded' && (outcome === 'inconclusive' || outcome === 'partial') ? outcome : null;
  return (
    <Badge
      variant={status === 'failed' ? 'filled' : 'light'}
      color={worth ? OUTCOME_COLORS[worth] : STATUS_COLORS[status]}
      className="nowrap"
    >
      {worth ? OUTCOME_LABELS[worth] : STATUS_LABELS[status]}
    </Badge>
  );
}

const OUTCOME_LABELS = { inconclusive: 'Inconclusive', partial: 'Succeeded (partial)' } as const;
const OUTCOME_COLORS = { inconclusive: 'orange', partial: 'yellow' } as const;

const count = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

/** What a scan's report says it covered, in words (one line per fact); empty when it said nothing. */
export function describeCoverage(c: ReportCoverage | null): string[] {
  if (!c) return [];
  const out: string[] = [];
  if (c.hosts?.length) out.push(`Hosts: ${c.hosts.join(', ')}`);
  if (c.ports) {
    const n = c.ports.reduce((sum, [a, b]) => sum + b - a + 1, 0);
    const ranges = c.ports
      .slice(0, 6)
      .map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`))
      .join(', ');
    out.push(n ? `${count(n, 'TCP port')}: ${ranges}${c.ports.length > 6 ? ', …' : ''}` : 'No port could be checked');
  }
  if (c.urls) out.push(c.urls.length ? `${count(c.urlCount ?? c.urls.length, 'URL')} answered` : 'No URL answered');
  if (c.templates) out.push(`${count(c.templates.length, 'template')} run`);
  if (c.image) out.push(`Image ${[c.image.reference, c.image.digest, c.image.platform].filter(Boolean).join(' · ')}`);
  if (c.severities) out.push(`Severities reported: ${c.severities.join(', ')}`);
  return out;
}

/** A labelled progress bar: the percent as text too, never colour alone. */
export function ScanProgress({ scan, label }: { scan: Pick<Scan, 'status' | 'percent'>; label: string }) {
  const color =
    scan.status === 'failed'
      ? 'red'
      : scan.status === 'succeeded'
        ? 'green'
        : scan.status === 'cancelled'
          ? 'gray'
          : 'blue';
  return (
    <Group gap="xs" wrap="nowrap" miw={140}>
      <Progress
        value={scan.percent}
        color={color}
        size="md"
        style={{ flex: 1 }}
        aria-label={label}
        animated={scan.status === 'running' || scan.status === 'ingesting' || scan.status === 'aggregating'}
      />
      <Text size="xs" w={36} ta="right" className="nowrap">
        {scan.percent}%
      </Text>
    </Group>
  );
}

/** What one chunk covers, in words. */
export function describeChunk(spec: Scan['chunkSpec']): string {
  if (!spec) return '—';
  if (spec.kind === 'port') return `Ports ${spec.range.from}–${spec.range.to}`;
  if (spec.kind === 'template') {
    const tags = spec.tags.length ? `; tags ${spec.tags.join(', ')}` : '';
    return `Severities ${spec.severities.join(', ')}${tags}`;
  }
  return `Paths ${spec.paths.join(' ')} (${spec.profile} profile${spec.passiveBaseline ? ', plus the passive baseline' : ''})`;
}

/** The options of a scan in a few words, for lists. */
export function describeOptions(kind: ScanKind, o: Record<string, unknown>): string {
  switch (kind) {
    case 'port': {
      const range = o.range as { from: number; to: number } | undefined;
      return range ? `Ports ${range.from}–${range.to}` : `Top ${String(o.topPorts ?? 1000)} ports`;
    }
    case 'template':
      return `Severities ${((o.severities as string[] | undefined) ?? SEVERITIES).join(', ')}`;
    case 'webapp':
      return `${o.profile === 'full' ? 'Full' : 'Baseline'} profile, depth ${String(o.maxDepth ?? 3)}`;
    case 'container':
      return `Severity ${String(o.severityThreshold ?? 'low')} and above`;
    case 'edge':
      return `Ports ${((o.ports as number[] | undefined) ?? [443]).join(', ')}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Scan-definition fields

export interface ScanFormValues extends Record<string, unknown> {
  assetId: string;
  kind: ScanKind | '';
  chunkCount: string;
  portMode: 'top' | 'range';
  topPorts: string;
  portFrom: string;
  portTo: string;
  timeoutMs: string;
  rate: string;
  severities: Severity[];
  tags: string;
  templateIds: string;
  rateLimit: string;
  /** Template variables, one NAME=VALUE per line. */
  variables: string;
  profile: 'baseline' | 'full';
  maxDepth: string;
  maxPages: string;
  paths: string;
  severityThreshold: Severity;
  ignoreUnfixed: boolean;
  edgePorts: string;
  sni: string;
}

export const EMPTY_SCAN_FORM: ScanFormValues = {
  assetId: '',
  kind: '',
  chunkCount: '',
  portMode: 'top',
  topPorts: '1000',
  portFrom: '1',
  portTo: '65535',
  timeoutMs: '1500',
  rate: '1500',
  severities: [...SEVERITIES],
  tags: '',
  templateIds: '',
  rateLimit: '150',
  variables: '',
  profile: 'baseline',
  maxDepth: '3',
  maxPages: '200',
  paths: SEED_PATHS.join('\n'),
  severityThreshold: 'low',
  ignoreUnfixed: false,
  edgePorts: '443',
  sni: '',
};

const list = (s: string) =>
  s
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);
const int = (s: string) => (/^\d+$/.test(s.trim()) ? Number(s.trim()) : NaN);
const between = (s: string, min: number, max: number, what: string) => {
  const n = int(s);
  return Number.isInteger(n) && n >= min && n <= max
    ? null
    : `${what} must be a whole number from ${min.toLocaleString()} to ${max.toLocaleString()}`;
};

/** NAME=VALUE lines as a map; the first bad line's number, if any. */
export function parseVariables(text: string): { variables: Record<string, string>; badLine?: number } {
  const variables: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (!line.trim()) continue;
    const eq = line.indexOf('=');
    if (eq < 1 || !/^[A-Za-z_][A-Za-z0-9_-]*$/.test(line.slice(0, eq).trim())) return { variables, badLine: i + 1 };
    variables[line.slice(0, eq).trim()] = line.slice(eq + 1);
  }
  return { variables };
}

/** Quick checks before sending; the server checks everything again. */
export function checkScanForm(v: ScanFormValues): FormErrors<ScanFormValues> {
  const e: FormErrors<ScanFormValues> = {};
  if (!v.assetId) e.assetId = 'Choose an asset';
  if (!v.kind) e.kind = 'Choose what to scan for';
  if (v.kind === 'port') {
    if (v.portMode === 'range' || v.chunkCount) {
      e.portFrom = between(v.portFrom, 1, 65535, 'The first port');
      e.portTo =
        between(v.portTo, 1, 65535, 'The last port') ??
        (int(v.portTo) < int(v.portFrom) ? 'The last port must not be below the first' : null);
    } else e.topPorts = between(v.topPorts, 1, 1000, 'The number of ports');
    e.timeoutMs = between(v.timeoutMs, 100, 10_000, 'The timeout');
    e.rate = between(v.rate, 1, 10_000, 'The rate');
  }
  if (v.kind === 'template') {
    if (v.severities.length === 0) e.severities = 'Choose at least one severity';
    else if (v.chunkCount && Number(v.chunkCount) > v.severities.length)
      e.chunkCount = `With ${v.severities.length} severities, use at most ${v.severities.length} chunks`;
    const bad = parseVariables(v.variables).badLine;
    if (bad) e.variables = `Line ${bad}: write NAME=VALUE, e.g. username=admin`;
  }
  if (v.kind === 'webapp') {
    e.maxDepth = between(v.maxDepth, 1, 10, 'The depth');
    e.maxPages = between(v.maxPages, 1, 5000, 'The page limit');
    const paths = list(v.paths);
    if (paths.length === 0) e.paths = 'Give at least one path, e.g. /';
    else if (paths.some((p) => !p.startsWith('/'))) e.paths = 'Every path starts with /';
    else if (v.chunkCount && Number(v.chunkCount) > new Set(paths).size)
      e.chunkCount = `With ${new Set(paths).size} paths, use at most ${new Set(paths).size} chunks`;
  }
  if (v.kind === 'edge') {
    const ports = list(v.edgePorts);
    if (ports.length === 0 || ports.some((p) => between(p, 1, 65535, 'A port')))
      e.edgePorts = 'Give ports from 1 to 65535, separated by commas';
  }
  return e;
}

/** The request fields for a scan definition. */
export function scanDefinition(v: ScanFormValues): CreateScanBody {
  const chunkCount = v.chunkCount && CHUNKABLE_KINDS.includes(v.kind as ScanKind) ? Number(v.chunkCount) : undefined;
  const base = { assetId: v.assetId, ...(chunkCount ? { chunkCount } : {}) };
  switch (v.kind) {
    case 'port':
      return {
        ...base,
        kind: 'port',
        options: {
          ...(v.portMode === 'range' || chunkCount
            ? { range: { from: int(v.portFrom), to: int(v.portTo) } }
            : { topPorts: int(v.topPorts) }),
          timeoutMs: int(v.timeoutMs),
          rate: int(v.rate),
        },
      };
    case 'template': {
      const { variables } = parseVariables(v.variables);
      const vars = Object.keys(variables).length ? { variables } : {};
      return {
        ...base,
        kind: 'template',
        options: {
          severities: v.severities,
          tags: list(v.tags),
          templateIds: list(v.templateIds),
          rateLimit: int(v.rateLimit),
          ...vars,
        },
      };
    }
    case 'webapp':
      return {
        ...base,
        kind: 'webapp',
        options: { profile: v.profile, maxDepth: int(v.maxDepth), maxPages: int(v.maxPages), paths: list(v.paths) },
      };
    case 'container':
      return {
        assetId: v.assetId,
        kind: 'container',
        options: { severityThreshold: v.severityThreshold, ignoreUnfixed: v.ignoreUnfixed },
      };
    default:
      return {
        assetId: v.assetId,
        kind: 'edge',
        options: { ports: list(v.edgePorts).map(int), ...(v.sni.trim() ? { sni: v.sni.trim() } : {}) },
      };
  }
}

/** Server field paths (body.options.range.from) → form fields. */
const SERVER_FIELDS: Record<string, keyof ScanFormValues> = {
  'body.assetId': 'assetId',
  'body.kind': 'kind',
  'body.chunkCount': 'chunkCount',
  'body.options.topPorts': 'topPorts',
  'body.options.range.from': 'portFrom',
  'body.options.range.to': 'portTo',
  'body.options.range': 'portFrom',
  'body.options.timeoutMs': 'timeoutMs',
  'body.options.rate': 'rate',
  'body.options.severities': 'severities',
  'body.options.tags': 'tags',
  'body.options.templateIds': 'templateIds',
  'body.options.rateLimit': 'rateLimit',
  'body.options.variables': 'variables',
  'body.options.profile': 'profile',
  'body.options.maxDepth': 'maxDepth',
  'body.options.maxPages': 'maxPages',
  'body.options.paths': 'paths',
  'body.options.severityThreshold': 'severityThreshold',
  'body.options.ports': 'edgePorts',
  'body.options.sni': 'sni',
};

/** Field errors of a 400 answer, on the form's fields; extra maps other paths (body.cron → cron). */
export function scanFieldErrors<V extends Record<string, unknown>>(
  error: ApiError,
  extra: Record<string, keyof V & string> = {},
): FormErrors<V> {
  const out: Record<string, string> = {};
  for (const [path, message] of Object.entries(error.fieldIssues())) {
    const key =
      extra[path] ??
      SERVER_FIELDS[path] ??
      SERVER_FIELDS[path.replace(/\.\d+$/, '')] ??
      SERVER_FIELDS[path.split('.').slice(0, 3).join('.')];
    if (key && !(key in out)) out[key] = message;
  }
  if (
    error.code === 'asset_not_verified' ||
    error.code === 'asset_archived' ||
    error.code === 'asset_not_found' ||
    error.code === 'asset_scan_limit'
  )
    out.assetId = error.message;
  if (error.code === 'scan_kind_mismatch') out.kind = error.message;
  return out as FormErrors<V>;
}

/** Assets a scan may target: proven, covered or bypassed, and not archived. */
export const scannable = (a: Asset) =>
  !a.archivedAt && (a.verification.status === 'verified' || a.verification.status === 'bypassed');

interface FieldsProps<V extends ScanFormValues> {
  form: FormState<V>;
  assets: Asset[];
  /** Schedules keep their asset and scan definition: shown, not editable. */
  locked?: boolean;
}

/** Asset, kind, kind-specific options and chunk count. */
export function ScanDefinitionFields<V extends ScanFormValues>({ form, assets, locked }: FieldsProps<V>) {
  const v = form.values;
  const asset = assets.find((a) => a.id === v.assetId);
  const kinds = asset ? KINDS_FOR_ASSET[asset.kind] : [];
  const set = <K extends keyof ScanFormValues & string>(key: K, value: ScanFormValues[K]) =>
    form.setValue(key, value as V[K]);
  const chunkable = v.kind !== '' && CHUNKABLE_KINDS.includes(v.kind);
  const err = form.errors as FormErrors<ScanFormValues>;

  return (
    <Stack gap="md">
      <NativeSelect
        label="Asset"
        description={
          assets.length === 0
            ? 'No asset can be scanned yet: verify one on the Assets page first.'
            : 'Only verified (or admin-bypassed) assets can be scanned.'
        }
        data={[
          { value: '', label: assets.length ? 'Choose an asset…' : 'No scannable assets' },
          ...assets.map((a) => ({
            value: a.id,
            label: a.name && a.name !== a.target ? `${a.name} (${a.target})` : a.target,
          })),
        ]}
        value={v.assetId}
        disabled={locked}
        required
        error={err.assetId}
        onChange={(e) => {
          const next = assets.find((a) => a.id === e.currentTarget.value);
          set('assetId', e.currentTarget.value);
          // Keep the kind when it still applies to the new asset.
          const fits = next ? KINDS_FOR_ASSET[next.kind] : [];
          if (!v.kind || !fits.includes(v.kind)) set('kind', fits[0] ?? '');
        }}
      />
      <NativeSelect
        label="Scanner"
        description={v.kind ? SCAN_KIND_HELP[v.kind] : 'Choose an asset first.'}
        data={[{ value: '', label: 'Choose…' }, ...kinds.map((k) => ({ value: k, label: SCAN_KIND_LABELS[k] }))]}
        value={v.kind}
        disabled={locked || !asset}
        required
        error={err.kind}
        onChange={(e) => {
          set('kind', e.currentTarget.value as ScanKind);
          if (!CHUNKABLE_KINDS.includes(e.currentTarget.value as ScanKind)) set('chunkCount', '');
        }}
      />
      {v.kind === 'port' && (
        <>
          {!v.chunkCount && (
            <NativeSelect
              label="Ports"
              data={[
                { value: 'top', label: 'The most common ports' },
                { value: 'range', label: 'A range of ports' },
              ]}
              value={v.portMode}
              disabled={locked}
              onChange={(e) => set('portMode', e.currentTarget.value as 'top' | 'range')}
            />
          )}
          {v.portMode === 'range' || v.chunkCount ? (
            <SimpleGrid cols={2} spacing="sm">
              <TextInput
                label="First port"
                inputMode="numeric"
                disabled={locked}
                value={v.portFrom}
                error={err.portFrom}
                onChange={(e) => set('portFrom', e.currentTarget.value)}
              />
              <TextInput
                label="Last port"
                inputMode="numeric"
                disabled={locked}
                value={v.portTo}
                error={err.portTo}
                onChange={(e) => set('portTo', e.currentTarget.value)}
              />
            </SimpleGrid>
          ) : (
            <TextInput
              label="How many of the most common ports"
              description="1 to 1,000"
              inputMode="numeric"
              disabled={locked}
              value={v.topPorts}
              error={err.topPorts}
              onChange={(e) => set('topPorts', e.currentTarget.value)}
            />
          )}
          <SimpleGrid cols={2} spacing="sm">
            <TextInput
              label="Timeout per probe (ms)"
              inputMode="numeric"
              disabled={locked}
              value={v.timeoutMs}
              error={err.timeoutMs}
              onChange={(e) => set('timeoutMs', e.currentTarget.value)}
            />
            <TextInput
              label="Probes per second"
              inputMode="numeric"
              disabled={locked}
              value={v.rate}
              error={err.rate}
              onChange={(e) => set('rate', e.currentTarget.value)}
            />
          </SimpleGrid>
        </>
      )}
      {v.kind === 'template' && (
        <>
          <Checkbox.Group
            label="Severities"
            description="Templates of these severities run."
            value={v.severities}
            error={err.severities}
            onChange={(xs) =>
              set(
                'severities',
                SEVERITIES.filter((s) => xs.includes(s)),
              )
            }
          >
            <Group gap="md" mt={6}>
              {SEVERITIES.map((s) => (
                <Checkbox key={s} value={s} label={s[0]!.toUpperCase() + s.slice(1)} disabled={locked} />
              ))}
            </Group>
          </Checkbox.Group>
          <TextInput
            label="Tags"
            description="Optional, comma separated, e.g. cve, exposure"
            spellCheck={false}
            autoCapitalize="off"
            disabled={locked}
            value={v.tags}
            error={err.tags}
            onChange={(e) => set('tags', e.currentTarget.value)}
          />
          <TextInput
            label="Template ids"
            description="Optional, comma separated; only these templates run (built-in and your own scan templates)"
            spellCheck={false}
            autoCapitalize="off"
            disabled={locked}
            value={v.templateIds}
            error={err.templateIds}
            onChange={(e) => set('templateIds', e.currentTarget.value)}
          />
          <TextInput
            label="Requests per second"
            description="1 to 1,000; how hard the scan may hit the target"
            inputMode="numeric"
            disabled={locked}
            value={v.rateLimit}
            error={err.rateLimit}
            onChange={(e) => set('rateLimit', e.currentTarget.value)}
          />
          <Textarea
            label="Template variables"
            description="Optional, one NAME=VALUE per line: values for templates' own placeholders such as {{username}} (nuclei's -var). Values of names like password, token or key are hidden once saved."
            autosize
            minRows={2}
            maxRows={8}
            spellCheck={false}
            autoCapitalize="off"
            disabled={locked}
            value={v.variables}
            error={err.variables}
            onChange={(e) => set('variables', e.currentTarget.value)}
          />
        </>
      )}
      {v.kind === 'webapp' && (
        <>
          <NativeSelect
            label="Profile"
            data={[
              { value: 'baseline', label: 'Baseline (passive checks only)' },
              { value: 'full', label: 'Full (passive and active checks)' },
            ]}
            value={v.profile}
            disabled={locked}
            error={err.profile}
            onChange={(e) => set('profile', e.currentTarget.value as 'baseline' | 'full')}
          />
          <SimpleGrid cols={2} spacing="sm">
            <TextInput
              label="Crawl depth"
              inputMode="numeric"
              disabled={locked}
              value={v.maxDepth}
              error={err.maxDepth}
              onChange={(e) => set('maxDepth', e.currentTarget.value)}
            />
            <TextInput
              label="Page limit"
              inputMode="numeric"
              disabled={locked}
              value={v.maxPages}
              error={err.maxPages}
              onChange={(e) => set('maxPages', e.currentTarget.value)}
            />
          </SimpleGrid>
          <Textarea
            label="Start paths"
            description="One per line; chunks share them out."
            autosize
            minRows={3}
            maxRows={8}
            spellCheck={false}
            disabled={locked}
            value={v.paths}
            error={err.paths}
            onChange={(e) => set('paths', e.currentTarget.value)}
          />
        </>
      )}
      {v.kind === 'container' && (
        <>
          <NativeSelect
            label="Report vulnerabilities from"
            data={SEVERITIES.map((s) => ({ value: s, label: `${s[0]!.toUpperCase() + s.slice(1)} and above` }))}
            value={v.severityThreshold}
            disabled={locked}
            onChange={(e) => set('severityThreshold', e.currentTarget.value as Severity)}
          />
          <Switch
            label="Leave out vulnerabilities without a fix"
            checked={v.ignoreUnfixed}
            disabled={locked}
            onChange={(e) => set('ignoreUnfixed', e.currentTarget.checked)}
          />
        </>
      )}
      {v.kind === 'edge' && (
        <SimpleGrid cols={2} spacing="sm">
          <TextInput
            label="Ports"
            description="Comma separated"
            inputMode="numeric"
            disabled={locked}
            value={v.edgePorts}
            error={err.edgePorts}
            onChange={(e) => set('edgePorts', e.currentTarget.value)}
          />
          <TextInput
            label="SNI name"
            description="Optional; defaults to the asset's name"
            spellCheck={false}
            autoCapitalize="off"
            disabled={locked}
            value={v.sni}
            error={err.sni}
            onChange={(e) => set('sni', e.currentTarget.value)}
          />
        </SimpleGrid>
      )}
      {chunkable && (
        <NativeSelect
          label="Split into chunks"
          description="Chunks run in parallel on any workers; the scan counts once against the daily quota."
          data={[
            { value: '', label: 'No, one scan' },
            ...[2, 3, 4, 5, 6, 7, 8].map((n) => ({ value: String(n), label: `${n} chunks` })),
          ]}
          value={v.chunkCount}
          disabled={locked}
          error={err.chunkCount}
          onChange={(e) => set('chunkCount', e.currentTarget.value)}
        />
      )}
    </Stack>
  );
}

/** Form values that show an existing scan definition (a schedule's) in the fields. */
export function formValuesOf(
  kind: ScanKind,
  assetId: string,
  options: Record<string, unknown>,
  chunkCount: number | null,
): ScanFormValues {
  const o = options as Record<string, never>;
  const v: ScanFormValues = { ...EMPTY_SCAN_FORM, assetId, kind, chunkCount: chunkCount ? String(chunkCount) : '' };
  if (kind === 'port') {
    const range = o.range as { from: number; to: number } | undefined;
    Object.assign(v, {
      portMode: range ? 'range' : 'top',
      topPorts: String(o.topPorts ?? 1000),
      portFrom: String(range?.from ?? 1),
      portTo: String(range?.to ?? 65535),
      timeoutMs: String(o.timeoutMs ?? 1500),
      rate: String(o.rate ?? 1500),
    });
  }
  if (kind === 'template')
    Object.assign(v, {
      severities: o.severities ?? SEVERITIES,
      tags: ((o.tags as string[] | undefined) ?? []).join(', '),
      templateIds: ((o.templateIds as string[] | undefined) ?? []).join(', '),
      rateLimit: String(o.rateLimit ?? 150),
      variables: Object.entries((o.variables as Record<string, string> | undefined) ?? {})
        .map(([k, x]) => `${k}=${x}`)
        .join('\n'),
    });
  if (kind === 'webapp')
    Object.assign(v, {
      profile: o.profile ?? 'baseline',
      maxDepth: String(o.maxDepth ?? 3),
      maxPages: String(o.maxPages ?? 200),
      paths: ((o.paths as string[] | undefined) ?? SEED_PATHS).join('\n'),
    });
  if (kind === 'container')
    Object.assign(v, { severityThreshold: o.severityThreshold ?? 'low', ignoreUnfixed: Boolean(o.ignoreUnfixed) });
  if (kind === 'edge')
    Object.assign(v, {
      edgePorts: ((o.ports as number[] | undefined) ?? [443]).join(', '),
      sni: (o.sni as string | undefined) ?? '',
    });
  return v;
}

const WORKER_REASONS = new Set(['no_signing_secret', 'no_worker', 'no_active_worker']);

/** Why a queued scan has not started, and where to fix it (the same reasons the lease decides on). */
export function WaitReasonNote({ scan, compact = false }: { scan: Pick<Scan, 'waitReason'>; compact?: boolean }) {
  const r = scan.waitReason;
  if (!r) return null;
  if (compact)
    return (
      <Text size="xs" c="dimmed" mt={4} maw={260}>
        {r.message}
      </Text>
    );
  return (
    <Alert color={WORKER_REASONS.has(r.code) ? 'orange' : 'blue'} title="Why this scan waits" data-wait-reason={r.code}>
      <Text size="sm">{r.message}</Text>
      {WORKER_REASONS.has(r.code) && (
        <TextLink to="/workers" size="sm">
          Open Workers
        </TextLink>
      )}
    </Alert>
  );
}
