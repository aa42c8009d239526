// Shared pieces of the compliance pages: status and evidence badges, labels, small formatters.
import { Badge, Group, Text, Tooltip } from '@mantine/core';
import type { ControlStatus, Evidence } from '../../lib/compliance-api.ts';

export const CONTROL_STATUSES: ControlStatus[] = ['failing', 'evidence_expired', 'no_evidence', 'evidenced'];

export const STATUS_LABELS: Record<ControlStatus, string> = {
  failing: 'Failing',
  evidenced: 'Evidenced',
  evidence_expired: 'Evidence expired',
  no_evidence: 'No evidence',
};

const STATUS_COLORS: Record<ControlStatus, string> = {
  failing: 'red',
  evidenced: 'green',
  evidence_expired: 'orange',
  no_evidence: 'gray',
};

export const STATUS_HELP: Record<ControlStatus, string> = {
  failing: 'Open scan findings map to this control.',
  evidenced: 'Current evidence and no open findings mapped to it.',
  evidence_expired: 'All its evidence has expired; upload a current version.',
  no_evidence: 'No current evidence yet. Nothing counts as passing without evidence.',
};

export const isControlStatus = (v: unknown): v is ControlStatus =>
  typeof v === 'string' && (CONTROL_STATUSES as string[]).includes(v);

export function StatusBadge({ status }: { status: ControlStatus }) {
  return (
    <Tooltip label={STATUS_HELP[status]} withArrow openDelay={300}>
      <Badge
        variant={status === 'failing' ? 'filled' : 'light'}
        color={STATUS_COLORS[status]}
        className="nowrap"
        data-status={status}
      >
        {STATUS_LABELS[status]}
      </Badge>
    </Tooltip>
  );
}

const EVIDENCE_STATE_LABELS: Record<Evidence['state'], string> = {
  current: 'Current',
  expired: 'Expired',
  upcoming: 'Not yet effective',
};
const EVIDENCE_STATE_COLORS: Record<Evidence['state'], string> = {
  current: 'green',
  expired: 'orange',
  upcoming: 'blue',
};

export function EvidenceStateBadge({ state }: { state: Evidence['state'] }) {
  return (
    <Badge variant="light" color={EVIDENCE_STATE_COLORS[state]} className="nowrap">
      {EVIDENCE_STATE_LABELS[state]}
    </Badge>
  );
}

const SEVERITY_COLORS: Record<string, string> = {
  critical: 'red',
  high: 'orange',
  medium: 'yellow',
  low: 'blue',
  info: 'gray',
};
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;

export function SeverityBadge({ severity }: { severity: string }) {
  return (
    <Badge variant="light" color={SEVERITY_COLORS[severity] ?? 'gray'} className="nowrap" tt="capitalize">
      {severity}
    </Badge>
  );
}

/** "2 high · 1 medium" for the non-zero severities. */
export function SeverityCounts({ counts }: { counts: Record<string, number> }) {
  const parts = SEVERITIES.filter((s) => (counts[s] ?? 0) > 0);
  if (parts.length === 0)
    return (
      <Text span size="sm" c="dimmed">
        None
      </Text>
    );
  return (
    <Group gap={4} wrap="wrap">
      {parts.map((s) => (
        <Badge key={s} variant="light" color={SEVERITY_COLORS[s]} size="sm" className="nowrap">
          {counts[s]} {s}
        </Badge>
      ))}
    </Group>
  );
}

/** A YYYY-MM-DD date in the reader's format, without shifting it across time zones. */
export function formatDay(day: string | null | undefined): string {
  if (!day) return '—';
  const [y, m, d] = day.split('-').map(Number);
  if (!y || !m || !d) return day;
  return new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' }).format(
    new Date(Date.UTC(y, m - 1, d)),
  );
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Today as YYYY-MM-DD in the reader's time zone (the default effective date). */
export function todayLocal(): string {
  const d = new Date();
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

export const EVIDENCE_ACCEPT =
  '.pdf,.png,.jpg,.jpeg,.gif,.webp,.txt,.log,.md,.csv,.json,.docx,.xlsx,.pptx,.odt,.ods,.odp,.doc,.xls,.ppt';
