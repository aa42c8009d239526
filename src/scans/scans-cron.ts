// Cron expressions in IANA time zones (croner). Five fields, minute resolution; daylight-saving
// gaps and repeats follow croner's fixed-time rule: a time that does not exist runs at the first
// valid time after the gap, and a time that occurs twice runs once.
import { Cron } from 'croner';

export class CronInputError extends Error {
  readonly field: 'cron' | 'timeZone';
  constructor(field: 'cron' | 'timeZone', message: string) {
    super(message);
    this.name = 'CronInputError';
    this.field = field;
  }
}

const NICKNAMES = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/** The canonical IANA name of a time zone ("utc" → "UTC"), or a CronInputError. */
export function canonicalTimeZone(tz: string): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    throw new CronInputError('timeZone', `"${tz}" is not an IANA time zone such as Europe/Berlin or America/New_York.`);
  }
}

function build(expr: string, timeZone: string): Cron {
  const trimmed = expr.trim().replace(/\s+/g, ' ');
  if (!NICKNAMES.has(trimmed.toLowerCase()) && trimmed.split(' ').length !== 5)
    throw new CronInputError(
      'cron',
      'Use five fields (minute hour day-of-month month day-of-week), e.g. "0 3 * * 1", or @hourly, @daily, @weekly, @monthly.',
    );
  try {
    return new Cron(trimmed, { timezone: timeZone, paused: true, mode: '5-part' });
  } catch (e) {
    throw new CronInputError(
      'cron',
      `Not a valid cron expression: ${(e as Error).message.replace(/^CronPattern: /, '')}`,
    );
  }
}

/** Validates an expression and zone; returns both normalised. Refuses expressions that never fire. */
export function validateSchedule(expr: string, tz: string, from: Date): { cron: string; timeZone: string } {
  const timeZone = canonicalTimeZone(tz);
  const cron = expr.trim().replace(/\s+/g, ' ');
  if (!build(cron, timeZone).nextRun(from))
    throw new CronInputError('cron', 'This expression never fires (for example 31 February).');
  return { cron, timeZone };
}

/** The first run strictly after `from`, or null if there is none. */
export function nextRunAfter(expr: string, timeZone: string, from: Date): Date | null {
  return build(expr, timeZone).nextRun(from);
}

export function upcomingRuns(expr: string, timeZone: string, from: Date, n: number): Date[] {
  return build(expr, timeZone).nextRuns(n, from);
}

/** Wall-clock time in a zone with its abbreviation, e.g. "2025-03-30 03:00 CEST". */
export function formatInZone(at: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} ${parts.timeZoneName}`;
}
