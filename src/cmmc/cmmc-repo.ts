// Kysely access to the CMMC tables (migrations/0017_cmmc.sql). Every function takes the
// transaction it runs in: tenant paths pass a withTenant transaction (rampart_app, RLS), the
// verify route a withService one. The table types are in db/schema.ts.
import { sql, type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
import type {
  ComplianceProfilesTable,
  DB,
  DeviceAttestation,
  DeviceScriptInfo,
  EndpointAuditRunsTable,
} from '../db/schema.ts';

/** A json/jsonb column: PGlite and node-postgres give it parsed, a text copy arrives as a string. */
export const parseJson = <T>(v: unknown, fallback: T): T => {
  if (v === null || v === undefined) return fallback;
  if (typeof v === 'string') {
    try {
      return JSON.parse(v) as T;
    } catch {
      return fallback;
    }
  }
  return v as T;
};
export type ProfileRow = Selectable<ComplianceProfilesTable>;
export type RunRow = Selectable<EndpointAuditRunsTable>;

type Q = Kysely<DB> | Transaction<DB>;

export const cmmcRepo = {
  profileByTenant(q: Q, tenantId: string): Promise<ProfileRow | undefined> {
    return q.selectFrom('compliance_profiles').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
  },

  /** Service role: the profile a device token belongs to. */
  profileByTokenHash(q: Q, tokenHash: string): Promise<Pick<ProfileRow, 'id' | 'tenant_id'> | undefined> {
    return q
      .selectFrom('compliance_profiles')
      .select(['id', 'tenant_id'])
      .where('device_token_hash', '=', tokenHash)
      .executeTakeFirst();
  },

  async upsertProfile(
    q: Q,
    tenantId: string,
    values: Omit<
      Insertable<ComplianceProfilesTable>,
      | 'id'
      | 'tenant_id'
      | 'status'
      | 'status_date'
      | 'status_changed_at'
      | 'device_token_hash'
      | 'device_token_issued_at'
      | 'device_token_issued_by'
      | 'device_scripts'
      | 'device_attestations'
      | 'created_at'
      | 'updated_at'
      | 'created_by'
    > & {
      created_by: string;
    },
    now: Date,
  ): Promise<{ created: boolean }> {
    const { created_by, ...changes } = values;
    const row = await q
      .insertInto('compliance_profiles')
      .values({ tenant_id: tenantId, ...changes, created_by, created_at: now, updated_at: now, status_changed_at: now })
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ ...changes, updated_at: now }))
      .returning(sql<boolean>`(xmax = 0)`.as('created'))
      .executeTakeFirstOrThrow();
    return { created: row.created };
  },

  setDeviceToken(
    q: Q,
    profileId: string,
    v: { hash: string; issuedAt: Date; issuedBy: string; scripts: DeviceScriptInfo[] },
  ) {
    return q
      .updateTable('compliance_profiles')
      .set({
        device_token_hash: v.hash,
        device_token_issued_at: v.issuedAt,
        device_token_issued_by: v.issuedBy,
        device_scripts: JSON.stringify(v.scripts),
        updated_at: v.issuedAt,
      })
      .where('id', '=', profileId)
      .execute();
  },

  /** Replaces the profile's computer attestations (the caller holds the row lock). */
  setDeviceAttestations(q: Q, profileId: string, list: DeviceAttestation[], now: Date) {
    return q
      .updateTable('compliance_profiles')
      .set({ device_attestations: JSON.stringify(list), updated_at: now })
      .where('id', '=', profileId)
      .execute();
  },

  /** Serialises verify-route writes of one profile (the hourly count then holds across replicas). */
  lockProfileRuns(q: Q, profileId: string) {
    return sql`select pg_advisory_xact_lock(hashtextextended(${`cmmc_verify:${profileId}`}, 0))`.execute(q);
  },

  /** Runs in the window and the oldest of them (for Retry-After). */
  async runsSince(q: Q, profileId: string, since: Date): Promise<{ count: number; oldest: Date | null }> {
    const r = await q
      .selectFrom('endpoint_audit_runs')
      .select((eb) => [eb.fn.countAll<string>().as('count'), eb.fn.min('received_at').as('oldest')])
      .where('profile_id', '=', profileId)
      .where('received_at', '>', since)
      .executeTakeFirstOrThrow();
    return { count: Number(r.count), oldest: r.oldest ? new Date(r.oldest as unknown as Date | string) : null };
  },

  /** Marks (or, with null, clears) the retire columns of one run; RLS keeps it to the tenant. */
  setRunRetired(
    q: Q,
    runId: string,
    v: { at: Date; by: string; byEmail: string; note: string | null } | null,
  ): Promise<RunRow> {
    return q
      .updateTable('endpoint_audit_runs')
      .set(
        v
          ? { retired_at: v.at, retired_by: v.by, retired_by_email: v.byEmail, retired_note: v.note }
          : { retired_at: null, retired_by: null, retired_by_email: null, retired_note: null },
      )
      .where('id', '=', runId)
      .returning([
        'id',
        'tenant_id',
        'profile_id',
        'hostname',
        'os',
        'os_version',
        'results',
        'details',
        'script_version',
        'client_address',
        'received_at',
        'reasons',
        'retired_at',
        'retired_by',
        'retired_by_email',
        'retired_note',
      ])
      .executeTakeFirstOrThrow() as Promise<RunRow>;
  },

  insertRun(q: Q, v: Insertable<EndpointAuditRunsTable>) {
    return q.insertInto('endpoint_audit_runs').values(v).returning(['id', 'received_at']).executeTakeFirstOrThrow();
  },

  /**
   * The latest run per hostname (case-insensitive) of a profile, newest first. A computer whose
   * latest run is retired is left out unless includeRetired (the Device check tab lists it to
   * un-retire it); scoring, exports and the explainer never see it.
   */
  async latestRunsPerHost(q: Q, profileId: string, opts: { includeRetired?: boolean } = {}): Promise<RunRow[]> {
    const { rows } = await sql<RunRow>`
      select distinct on (lower(hostname)) id, tenant_id, profile_id, hostname, os, os_version, results, details, script_version, client_address, received_at,
             reasons, retired_at, retired_by, retired_by_email, retired_note
        from endpoint_audit_runs
       where profile_id = ${profileId}::uuid
       order by lower(hostname), received_at desc, id desc`.execute(q);
    return rows
      .filter((r) => opts.includeRetired || r.retired_at === null)
      .sort((a, b) => new Date(b.received_at).getTime() - new Date(a.received_at).getTime());
  },
};
