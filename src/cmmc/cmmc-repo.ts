// Kysely access to the CMMC tables (migrations/0017_cmmc.sql). Every function takes the
// transaction it runs in: tenant paths pass a withTenant transaction (rampart_app, RLS), the
// verify route a withService one. The table types live here until they move to db/schema.ts.
import {
  sql,
  type ColumnType,
  type Generated,
  type Insertable,
  type Kysely,
  type Selectable,
  type Transaction,
} from 'kysely';
import type { DB } from '../db/schema.ts';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type NullableDate = ColumnType<string | null, string | null | undefined, string | null>;
type Json<T> = ColumnType<T, string, string>;
type NullableJson<T> = ColumnType<T | null, string | null | undefined, string | null>;

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
export interface DeviceScriptInfo {
  os: 'windows' | 'macos';
  fileName: string;
  sha256: string;
  version: string;
}

/** An owner or admin vouches for a computer that cannot send a device-check run. */
export interface DeviceAttestation {
  hostname: string;
  statement: string;
  at: string;
  by: string;
  byEmail: string;
}

/** Why a confirmed profile became not_compliant: its NOT MET requirements at that moment. */
export interface StatusReason {
  at: string;
  requirements: { requirementId: string; title: string; reasons: string[] }[];
}

export interface ComplianceProfilesTable {
  id: Generated<string>;
  tenant_id: string;
  cage_code: string;
  additional_cage_codes: string[];
  company_name: string;
  company_address: string | null;
  company_phone: string | null;
  company_website: string | null;
  uei: string | null;
  scope_description: string | null;
  bidding_users: Json<{ name: string; email: string; role: string | null }[]>;
  mail_platform: 'm365' | 'google';
  affirming_official_name: string;
  affirming_official_title: string;
  affirming_official_email: string;
  status: Generated<'in_progress' | 'compliant' | 'renewal_due' | 'not_compliant' | 'expired'>;
  /** What regressed when the status became not_compliant (migration 0035). */
  status_reason: NullableJson<StatusReason>;
  status_date: NullableDate;
  status_changed_at: Timestamp;
  device_token_hash: string | null;
  device_token_issued_at: NullableTimestamp;
  device_token_issued_by: string | null;
  device_scripts: NullableJson<DeviceScriptInfo[]>;
  /** The Scope's number of in-scope computers (migration 0036); null when not declared. */
  declared_device_count: ColumnType<number | null, number | null | undefined, number | null>;
  /** Owner or admin attestations of computers that send no run (migration 0036). */
  device_attestations: ColumnType<DeviceAttestation[], string | undefined, string>;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface EndpointAuditRunsTable {
  id: Generated<string>;
  tenant_id: string;
  profile_id: string;
  hostname: string;
  os: 'windows' | 'macos';
  os_version: string | null;
  results: Json<Record<string, 'pass' | 'fail' | 'unknown'>>;
  details: Json<Record<string, string>>;
  script_version: string;
  client_address: string | null;
  received_at: Timestamp;
  /** Reason codes of unknown results (migration 0022). */
  reasons: ColumnType<Record<string, string>, string | undefined, string>;
  /** Set on the hostname's latest run when an owner or admin retires the computer. */
  retired_at: NullableTimestamp;
  retired_by: string | null;
  retired_by_email: string | null;
  retired_note: string | null;
}

export interface AttestationsTable {
  id: Generated<string>;
  tenant_id: string;
  profile_id: string;
  requirement_id: string;
  item_id: string;
  answer: 'yes' | 'no' | 'not_applicable';
  note: string | null;
  answered_by: string | null;
  answered_by_email: string | null;
  answered_at: Timestamp;
}

export interface AttestationEvidenceTable {
  id: Generated<string>;
  tenant_id: string;
  profile_id: string;
  attestation_id: string | null;
  requirement_id: string;
  item_id: string;
  file_name: string;
  content_type: string;
  size_bytes: ColumnType<string | number, number, number>;
  sha256: string;
  storage_kind: 'builtin' | 's3';
  storage_key: string;
  effective_date: NullableDate;
  expires_at: NullableDate;
  uploaded_by: string | null;
  uploaded_by_email: string | null;
  created_at: Timestamp;
  deleted_at: NullableTimestamp;
  deleted_by: string | null;
}

export interface PolicyDocumentsTable {
  id: Generated<string>;
  tenant_id: string;
  profile_id: string;
  kind: string;
  version: number;
  title: string;
  body_markdown: string;
  status: Generated<'draft' | 'approved'>;
  approved_by: string | null;
  approved_by_email: string | null;
  approved_at: NullableTimestamp;
  effective_date: NullableDate;
  next_review_date: NullableDate;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface HandoffsTable {
  id: Generated<string>;
  tenant_id: string;
  profile_id: string;
  cmmc_level: Generated<'LEVEL_1_SELF'>;
  status_date: ColumnType<string, string, string>;
  scope_description: string;
  cage_codes: string[];
  overall_result: 'MET' | 'NOT_MET';
  requirement_results: Json<Record<string, 'MET' | 'NOT_MET' | 'NA'>>;
  na_justifications: Json<Record<string, string>>;
  affirming_official_name: string;
  affirming_official_title: string;
  affirming_official_email: string;
  affirmation_text_version: string;
  affirmed_in_sprs_on: ColumnType<string, string, string>;
  confirmed_by: string | null;
  confirmed_by_email: string | null;
  confirmed_at: Timestamp;
  client_address: string | null;
  user_agent: string | null;
  assessment_snapshot_sha256: string;
  assessment_snapshot: NullableJson<unknown>;
  sprs_proof_storage_kind: 'builtin' | 's3' | null;
  sprs_proof_storage_key: string | null;
  sprs_proof_file_name: string | null;
  sprs_proof_sha256: string | null;
  next_due: ColumnType<string, string, string>;
  reminder_at: ColumnType<string, string, string>;
}

export interface HandoffLinksTable {
  id: Generated<string>;
  token_hash: string;
  caller: string;
  request_id: string | null;
  payload: Json<Record<string, unknown>>;
  cage_code: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  consumed_at: NullableTimestamp;
  consumed_by: string | null;
  tenant_id: string | null;
}

export interface RenewalNoticesTable {
  id: Generated<string>;
  tenant_id: string;
  profile_id: string;
  kind: 'renewal_due' | 'expired' | 'compliant' | 'reminder';
  day: ColumnType<string, string, string>;
  event_id: string | null;
  created_at: Timestamp;
}

/** One reminder per policy document, threshold and review date (migration 0037). */
export interface PolicyReviewNoticesTable {
  id: Generated<string>;
  tenant_id: string;
  profile_id: string;
  policy_document_id: string;
  threshold: 'due_in_30_days' | 'due';
  review_date: ColumnType<string, string, string>;
  sent_day: ColumnType<string, string, string>;
  created_at: Timestamp;
}

/** One row per daily job and UTC day: the claim that the job ran (migration 0032). */
export interface DailyJobRunsTable {
  job: string;
  day: ColumnType<string, string, string>;
  ran_at: Timestamp;
}

export interface CmmcTables {
  compliance_profiles: ComplianceProfilesTable;
  endpoint_audit_runs: EndpointAuditRunsTable;
  compliance_control_attestations: AttestationsTable;
  compliance_attestation_evidence: AttestationEvidenceTable;
  cmmc_policy_documents: PolicyDocumentsTable;
  compliance_handoffs: HandoffsTable;
  cmmc_handoff_links: HandoffLinksTable;
  cmmc_renewal_notices: RenewalNoticesTable;
  cmmc_policy_review_notices: PolicyReviewNoticesTable;
  daily_job_runs: DailyJobRunsTable;
}

export type CmmcDB = DB & CmmcTables;
export type ProfileRow = Selectable<ComplianceProfilesTable>;
export type RunRow = Selectable<EndpointAuditRunsTable>;

type Q = Kysely<DB> | Transaction<DB>;
export const c = (q: Q) => q as unknown as Kysely<CmmcDB>;

export const cmmcRepo = {
  profileByTenant(q: Q, tenantId: string): Promise<ProfileRow | undefined> {
    return c(q).selectFrom('compliance_profiles').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
  },

  /** Service role: the profile a device token belongs to. */
  profileByTokenHash(q: Q, tokenHash: string): Promise<Pick<ProfileRow, 'id' | 'tenant_id'> | undefined> {
    return c(q)
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
    const row = await c(q)
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
    return c(q)
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
    return c(q)
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
    const r = await c(q)
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
    return c(q)
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
    return c(q).insertInto('endpoint_audit_runs').values(v).returning(['id', 'received_at']).executeTakeFirstOrThrow();
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
