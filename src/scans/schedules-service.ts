// Recurring scans. A schedule holds a scan definition, a cron expression and an IANA time zone;
// next_run_at is kept in UTC. The cron tick (POST /api/public/hooks/scan-schedules-tick) runs as
// the service role and dispatches each due schedule exactly once even when ticks overlap: it
// claims a schedule by moving next_run_at forward with a compare-and-set on the value it read,
// then queues the scan through the same admission as a person would, in the same transaction.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { AuditService } from '../audit/index.ts';
import type { DB, ScanSchedulesTable } from '../db/schema.ts';
import { type Caller, type Tx, withService, tenantAccess } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { AppError, appError } from '../lib/errors.ts';
import { assertAssetScannable } from './scans-admission.ts';
import type { ScanDefinition } from './scans-chunks.ts';
import { CronInputError, formatInZone, nextRunAfter, upcomingRuns, validateSchedule } from './scans-cron.ts';
import {
  OPTIONS_SCHEMAS,
  redactScanOptions,
  type CreateScheduleBody,
  type ScheduleDto,
  type TickResult,
  type UpdateScheduleBody,
} from './scans-schemas.ts';
import type { listSchedulesQuerySchema } from './scans-schemas.ts';
import { planOrThrow, queueScan, selectScans, toScanDto } from './scans-service.ts';

type Row = Selectable<ScanSchedulesTable> & {
  asset_name: string;
  asset_target: string;
  asset_kind: string;
  created_email: string | null;
};

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
/** Due schedules handled per tick; the rest wait for the next tick. */
export const TICK_BATCH = 200;

function toDto(r: Row): ScheduleDto {
  const next = r.next_run_at ? new Date(r.next_run_at) : null;
  return {
    id: r.id,
    name: r.name,
    asset: { id: r.asset_id, name: r.asset_name, target: r.asset_target, kind: r.asset_kind },
    kind: r.kind,
    options: redactScanOptions(r.options),
    chunkCount: r.chunk_count,
    cron: r.cron,
    timeZone: r.time_zone,
    enabled: r.enabled,
    nextRunAt: iso(next),
    nextRunLocal: next ? formatInZone(next, r.time_zone) : null,
    lastRunAt: iso(r.last_run_at),
    lastScanId: r.last_scan_id,
    lastError: r.last_error,
    createdBy: r.created_by && r.created_email ? { id: r.created_by, email: r.created_email } : null,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

/** Cron and zone problems are validation errors on the request field they came from. */
function validated(cron: string, timeZone: string, now: Date) {
  try {
    return validateSchedule(cron, timeZone, now);
  } catch (e) {
    if (e instanceof CronInputError)
      throw new AppError('validation_failed', e.message, {
        details: [{ path: `body.${e.field}`, message: e.message }],
      });
    throw e;
  }
}

export function createSchedulesService(deps: {
  db: Kysely<DB>;
  audit: AuditService;
  clock: Clock;
  log?: Pick<Logger, 'error'>;
}) {
  const { db, audit, clock } = deps;

  const { asMember } = tenantAccess(db);

  const selectSchedules = (tx: Tx) =>
    tx
      .selectFrom('scan_schedules as sc')
      .innerJoin('assets as a', 'a.id', 'sc.asset_id')
      .leftJoin('user as u', 'u.id', 'sc.created_by')
      .selectAll('sc')
      .select(['a.name as asset_name', 'a.target as asset_target', 'a.kind as asset_kind', 'u.email as created_email']);

  async function load(tx: Tx, tenantId: string, id: string): Promise<Row> {
    const row = await selectSchedules(tx)
      .where('sc.id', '=', id)
      .where('sc.tenant_id', '=', tenantId)
      .executeTakeFirst();
    if (!row) throw appError('schedule_not_found', 'No such scan schedule in this tenant.');
    return row as Row;
  }

  const upcoming = (r: { cron: string; time_zone: string; enabled: boolean }, n: number) =>
    r.enabled
      ? upcomingRuns(r.cron, r.time_zone, clock.now(), n).map((at) => ({
          at: at.toISOString(),
          local: formatInZone(at, r.time_zone),
        }))
      : [];

  async function detail(tx: Tx, tenantId: string, id: string) {
    const schedule = await load(tx, tenantId, id);
    const history = await selectScans(tx)
      .where('s.schedule_id', '=', id)
      .where('s.tenant_id', '=', tenantId)
      .where('s.parent_id', 'is', null)
      .orderBy('s.created_at', 'desc')
      .orderBy('s.id', 'desc')
      .limit(20)
      .execute();
    return {
      schedule: toDto(schedule),
      upcoming: upcoming(schedule, 5),
      history: history.map((h) => toScanDto(h as Parameters<typeof toScanDto>[0])),
    };
  }

  /** Claims one due schedule and queues its scan; null when another tick got there first. */
  async function dispatch(
    due: { id: string; next_run_at: Date | string; cron: string; time_zone: string },
    now: Date,
  ): Promise<TickResult['results'][number] | null> {
    return withService(db, async (tx) => {
      // Counted from now, not from the missed slot: after downtime a schedule runs once, not a burst.
      const next = nextRunAfter(due.cron, due.time_zone, now);
      const claimed = await tx
        .updateTable('scan_schedules')
        .set({
          next_run_at: next,
          enabled: next !== null,
          last_run_at: now,
          updated_at: now,
          ...(next ? {} : { last_error: 'The cron expression has no further runs; the schedule was disabled.' }),
        })
        .where('id', '=', due.id)
        .where('enabled', '=', true)
        .where('next_run_at', '=', new Date(due.next_run_at))
        .returningAll()
        .executeTakeFirst();
      if (!claimed) return null;
      // A savepoint keeps the claim when queueing fails (quota, proof lost): the schedule still
      // advances and records why this run did not happen.
      await sql`savepoint schedule_dispatch`.execute(tx);
      try {
        const options = OPTIONS_SCHEMAS[claimed.kind].parse(claimed.options);
        const plan = planOrThrow({
          kind: claimed.kind,
          options,
          chunkCount: claimed.chunk_count ?? undefined,
        } as ScanDefinition);
        const { id } = await queueScan(tx, {
          tenantId: claimed.tenant_id,
          assetId: claimed.asset_id,
          plan,
          requestedBy: null,
          scheduleId: claimed.id,
          now,
          queueBehindBusyAsset: true,
        });
        await tx
          .updateTable('scan_schedules')
          .set({ last_scan_id: id, last_error: null })
          .where('id', '=', claimed.id)
          .execute();
        await audit.record(
          {
            tenantId: claimed.tenant_id,
            action: 'scan.queued',
            targetType: 'scan',
            targetId: id,
            details: {
              assetId: claimed.asset_id,
              kind: claimed.kind,
              chunkCount: plan.chunks.length || null,
              scheduleId: claimed.id,
            },
          },
          tx,
        );
        return { scheduleId: claimed.id, scanId: id };
      } catch (e) {
        await sql`rollback to savepoint schedule_dispatch`.execute(tx);
        const known = e instanceof AppError;
        if (!known) deps.log?.error({ err: e, scheduleId: claimed.id }, 'scheduled scan could not be queued');
        const code = known ? e.code : 'internal_error';
        const message = known ? e.message : 'The scan could not be queued.';
        await tx
          .updateTable('scan_schedules')
          .set({ last_error: `${code}: ${message}`.slice(0, 1000) })
          .where('id', '=', claimed.id)
          .execute();
        return { scheduleId: claimed.id, error: code };
      }
    });
  }

  return {
    async list(tenantId: string, caller: Caller, q: z.output<typeof listSchedulesQuerySchema>) {
      return asMember(tenantId, caller, async (tx) => {
        let query = selectSchedules(tx)
          .select(
            sql<string>`to_char(sc.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor_at'),
          )
          .where('sc.tenant_id', '=', tenantId)
          .orderBy('sc.created_at', 'desc')
          .orderBy('sc.id', 'desc')
          .limit(q.limit + 1);
        if (q.assetId) query = query.where('sc.asset_id', '=', q.assetId);
        if (q.enabled !== undefined) query = query.where('sc.enabled', '=', q.enabled);
        if (q.before) {
          const [at, id] = q.before.split('_') as [string, string];
          if (Number.isNaN(Date.parse(at)))
            throw appError('validation_failed', 'Pass nextBefore from the previous page unchanged.');
          query = query.where(sql<boolean>`(sc.created_at, sc.id) < (${at}::timestamptz, ${id}::uuid)`);
        }
        const rows = await query.execute();
        const page = rows.slice(0, q.limit);
        const last = page.at(-1);
        return {
          schedules: page.map((r) => toDto(r as Row)),
          nextBefore: rows.length > q.limit && last ? `${last.cursor_at}_${last.id}` : null,
        };
      });
    },

    async create(tenantId: string, caller: Caller, body: CreateScheduleBody) {
      const now = clock.now();
      const plan = planOrThrow(body);
      const { cron, timeZone } = validated(body.cron, body.timeZone, now);
      return asMember(tenantId, caller, async (tx) => {
        await assertAssetScannable(tx, tenantId, body.assetId, plan.kind);
        const row = await tx
          .insertInto('scan_schedules')
          .values({
            tenant_id: tenantId,
            asset_id: body.assetId,
            name: body.name,
            kind: plan.kind,
            options: JSON.stringify(plan.options),
            chunk_count: plan.chunks.length || null,
            cron,
            time_zone: timeZone,
            enabled: body.enabled,
            next_run_at: body.enabled ? nextRunAfter(cron, timeZone, now) : null,
            created_by: caller.userId,
            created_at: now,
            updated_at: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action: 'scan_schedule.created',
            targetType: 'scan_schedule',
            targetId: row.id,
            details: { assetId: body.assetId, kind: plan.kind, cron, timeZone },
          },
          tx,
        );
        return { schedule: toDto(await load(tx, tenantId, row.id)) };
      });
    },

    async get(tenantId: string, caller: Caller, id: string) {
      return asMember(tenantId, caller, (tx) => detail(tx, tenantId, id));
    },

    async update(tenantId: string, caller: Caller, id: string, body: UpdateScheduleBody) {
      const now = clock.now();
      return asMember(tenantId, caller, async (tx) => {
        const current = await load(tx, tenantId, id);
        const { cron, timeZone } = validated(body.cron ?? current.cron, body.timeZone ?? current.time_zone, now);
        const enabled = body.enabled ?? current.enabled;
        const retimed = cron !== current.cron || timeZone !== current.time_zone || enabled !== current.enabled;
        await tx
          .updateTable('scan_schedules')
          .set({
            ...(body.name !== undefined ? { name: body.name } : {}),
            cron,
            time_zone: timeZone,
            enabled,
            // Unchanged timing keeps its slot, so an edit never skips or repeats a run.
            next_run_at: retimed ? (enabled ? nextRunAfter(cron, timeZone, now) : null) : current.next_run_at,
            ...(enabled && !current.enabled ? { last_error: null } : {}),
            updated_at: now,
          })
          .where('id', '=', id)
          .execute();
        const action =
          body.enabled !== undefined && body.enabled !== current.enabled && Object.keys(body).length === 1
            ? enabled
              ? 'scan_schedule.enabled'
              : 'scan_schedule.disabled'
            : 'scan_schedule.updated';
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action,
            targetType: 'scan_schedule',
            targetId: id,
            details: { ...body },
          },
          tx,
        );
        return { schedule: toDto(await load(tx, tenantId, id)) };
      });
    },

    async remove(tenantId: string, caller: Caller, id: string) {
      return asMember(tenantId, caller, async (tx) => {
        const current = await load(tx, tenantId, id);
        await tx.deleteFrom('scan_schedules').where('id', '=', id).execute();
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action: 'scan_schedule.deleted',
            targetType: 'scan_schedule',
            targetId: id,
            details: { name: current.name, assetId: current.asset_id, kind: current.kind },
          },
          tx,
        );
      });
    },

    /** The next runs of an expression in a zone, for the schedule form. */
    async preview(tenantId: string, caller: Caller, q: { cron: string; timeZone: string }) {
      const now = clock.now();
      const { cron, timeZone } = validated(q.cron, q.timeZone, now);
      await asMember(tenantId, caller, async () => undefined);
      return { timeZone, upcoming: upcoming({ cron, time_zone: timeZone, enabled: true }, 5) };
    },

    /** The cron tick: dispatches every due schedule once. Safe to call concurrently and repeatedly. */
    async tick(): Promise<TickResult> {
      const now = clock.now();
      const due = await withService(db, (tx) =>
        tx
          .selectFrom('scan_schedules')
          .select(['id', 'next_run_at', 'cron', 'time_zone'])
          .where('enabled', '=', true)
          .where('next_run_at', '<=', now)
          .orderBy('next_run_at')
          .limit(TICK_BATCH)
          .execute(),
      );
      const results: TickResult['results'] = [];
      for (const d of due) {
        const r = await dispatch({ ...d, next_run_at: d.next_run_at! }, now);
        if (r) results.push(r);
      }
      return {
        ok: !results.some((r) => r.error === 'internal_error'),
        dispatched: results.filter((r) => r.scanId).length,
        results,
      };
    },
  };
}

export type SchedulesService = ReturnType<typeof createSchedulesService>;
