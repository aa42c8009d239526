// Shared pieces of the findings pages: severity and status badges, labels, URL parsers, and links
// to the public CWE and CVE entries.
import { Anchor, Badge, Group, Text } from '@mantine/core';
import { SCAN_KINDS } from '../../../lib/scan-kinds.ts';
import type { FindingEvent, FindingSort, FindingStatus, Scanner, Severity } from '../../lib/findings-api.ts';

export const SEVERITIES: Severity[] = ['critical', 'high', 'medium', 'low', 'info'];
export const STATUSES: FindingStatus[] = ['open', 'fixed', 'accepted_risk', 'false_positive'];
export const SCANNERS: readonly Scanner[] = SCAN_KINDS;
export const SORTS: FindingSort[] = ['severity', 'first_seen', 'last_seen', 'sla_due'];

export const SEVERITY_LABELS: Record<Severity, string> = {
  critical: 'Critical',
  high: 'High',
  medium: 'Medium',
  low: 'Low',
  info: 'Info',
};
export const SEVERITY_COLORS: Record<Severity, string> = {
  critical: 'red',
  high: 'orange',
  medium: 'yellow',
  low: 'cyan',
  info: 'gray',
};
export const STATUS_LABELS: Record<FindingStatus, string> = {
  open: 'Open',
  fixed: 'Fixed',
  accepted_risk: 'Accepted risk',
  false_positive: 'False positive',
};
// Shades and variants that keep badge text at WCAG AA contrast (theme.ts darkens the light variants).
const STATUS_STYLES: Record<FindingStatus, { color: string; variant: 'light' | 'outline' }> = {
  open: { color: 'red.9', variant: 'outline' },
  fixed: { color: 'green', variant: 'light' },
  accepted_risk: { color: 'yellow', variant: 'light' },
  false_positive: { color: 'gray.7', variant: 'outline' },
};
export const SCANNER_LABELS: Record<Scanner, string> = {
  port: 'Port scan',
  template: 'Template scan',
  webapp: 'Web app scan',
  container: 'Container scan',
  edge: 'Edge check',
};
export const SORT_LABELS: Record<FindingSort, string> = {
  severity: 'Severity',
  first_seen: 'First seen',
  last_seen: 'Last seen',
  sla_due: 'SLA due',
};

const oneOf =
  <T extends string>(values: readonly T[]) =>
  (v: unknown): v is T =>
    typeof v === 'string' && (values as readonly string[]).includes(v);
export const isSeverity = oneOf(SEVERITIES);
export const isStatus = oneOf(STATUSES);
export const isScanner = oneOf(SCANNERS);
export const isSort = oneOf(SORTS);

/** "critical,high" → the valid severities in it (URL search values). */
export function parseList<T extends string>(value: unknown, guard: (v: unknown) => v is T): T[] | undefined {
  if (typeof value !== 'string' || !value) return undefined;
  const out = [...new Set(value.split(',').filter(guard))];
  return out.length ? out : undefined;
}

/** Badges keep their whole label: a narrow table cell must not cut "Critical" to "CRITIC…". */
const WHOLE_LABEL = {
  root: { maxWidth: 'none', flexShrink: 0 },
  label: { overflow: 'visible', textOverflow: 'clip' },
} as const;

export function SeverityBadge({ severity }: { severity: Severity }) {
  return (
    <Badge
      color={SEVERITY_COLORS[severity]}
      variant={severity === 'critical' ? 'filled' : 'light'}
      className="nowrap"
      styles={WHOLE_LABEL}
    >
      {SEVERITY_LABELS[severity]}
    </Badge>
  );
}

export function StatusBadge({ status }: { status: FindingStatus }) {
  return (
    <Badge
      color={STATUS_STYLES[status].color}
      variant={STATUS_STYLES[status].variant}
      className="nowrap"
      styles={WHOLE_LABEL}
    >
      {STATUS_LABELS[status]}
    </Badge>
  );
}

export const EVENT_LABELS: Record<FindingEvent['event'], string> = {
  created: 'Found',
  fixed: 'Fixed (no longer found)',
  reopened: 'Reopened (found again)',
  status_changed: 'Status changed',
  severity_changed: 'Severity changed',
  risk_expired: 'Risk acceptance expired',
};

/** CWE and CVE ids as links to their public entries (opened in a new tab). */
export function WeaknessLinks({
  cweIds,
  cveIds,
  size = 'sm',
}: {
  cweIds: number[];
  cveIds: string[];
  size?: 'xs' | 'sm';
}) {
  if (!cweIds.length && !cveIds.length)
    return (
      <Text span size={size} c="dimmed">
        —
      </Text>
    );
  return (
    <Group gap={6} wrap="wrap">
      {cweIds.map((c) => (
        <Anchor
          key={`cwe-${c}`}
          size={size}
          href={`https://cwe.mitre.org/data/definitions/${c}.html`}
          target="_blank"
          rel="noopener noreferrer"
        >
          CWE-{c}
        </Anchor>
      ))}
      {cveIds.map((c) => (
        <Anchor
          key={c}
          size={size}
          href={`https://www.cve.org/CVERecord?id=${encodeURIComponent(c)}`}
          target="_blank"
          rel="noopener noreferrer"
        >
          {c}
        </Anchor>
      ))}
    </Group>
  );
}
