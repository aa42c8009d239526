// Kysely table types. Keep in step with migrations/*.sql.
import type { ColumnType, Generated, JSONColumnType } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface UserTable {
  id: Generated<string>;
  name: string;
  email: string;
  emailVerified: boolean;
  image: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  twoFactorEnabled: boolean | null;
}

export interface SessionTable {
  id: Generated<string>;
  expiresAt: Timestamp;
  token: string;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  ipAddress: string | null;
  userAgent: string | null;
  userId: string;
  activeOrganizationId: string | null;
}

export interface AccountTable {
  id: Generated<string>;
  userId: string;
  providerId: string;
  accountId: string;
  password: string | null;
}

export interface TwoFactorTable {
  id: Generated<string>;
  userId: string;
}

export interface OrganizationTable {
  id: Generated<string>;
  name: string;
  slug: string;
  logo: string | null;
  createdAt: Timestamp;
  metadata: string | null;
}

export interface MemberTable {
  id: Generated<string>;
  organizationId: string;
  userId: string;
  role: string;
  createdAt: Timestamp;
}

export interface InvitationTable {
  id: Generated<string>;
  organizationId: string;
  email: string;
  role: string | null;
  status: string;
  expiresAt: Timestamp;
  createdAt: Timestamp;
  inviterId: string;
}

export interface TenantSettingsTable {
  tenant_id: string;
  daily_scan_quota: Generated<number>;
  per_asset_concurrent_scans: Generated<number>;
  updated_at: Timestamp;
  updated_by: string | null;
}

export interface AuditLogTable {
  id: Generated<number>;
  tenant_id: string | null;
  actor_user_id: string | null;
  actor_email: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  details: JSONColumnType<Record<string, unknown>, string | undefined, string>;
  ip_address: string | null;
  user_agent: string | null;
  request_id: string | null;
  created_at: Timestamp;
}

export interface PlatformRolesTable {
  user_id: string;
  role: 'staff' | 'super_admin';
  granted_by: string | null;
  created_at: Timestamp;
}

export interface SvcIdempotencyTable {
  caller: string;
  request_id: string;
  fingerprint: string;
  flow: string;
  status: 'in_flight' | 'completed';
  claimed_at: Timestamp;
  completed_at: Timestamp | null;
  response: JSONColumnType<Record<string, unknown> | null, string | null, string | null>;
  expires_at: Timestamp;
}

export interface SvcInboundEventsTable {
  id: Generated<number>;
  received_at: Timestamp;
  caller: string | null;
  flow: string | null;
  status: number;
  error_code: string | null;
  duration_ms: number;
  request_id: string | null;
  verified: boolean;
  replayed: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface SvcOutboundEventsTable {
  id: Generated<number>;
  created_at: Timestamp;
  peer: string;
  flow: string;
  event_type: string | null;
  severity: string | null;
  ok: boolean;
  http_status: number | null;
  request_id: string;
  attempt: number;
  error: string | null;
  response: JSONColumnType<object | null, string | null, string | null>;
  duration_ms: number;
  url: string | null;
}

export interface SvcReceivedEventsTable {
  id: Generated<string>;
  received_at: Timestamp;
  caller: string;
  request_id: string;
  kind: string;
  severity: string;
  title: string;
  detail: string | null;
  occurred_at: Timestamp | null;
  brand: string | null;
  data: JSONColumnType<Record<string, unknown>, string | undefined, string>;
}

export interface SvcOutboxTable {
  id: Generated<number>;
  created_at: Timestamp;
  peer: string;
  flow: string;
  payload: JSONColumnType<Record<string, unknown>, string, string>;
  event_type: string | null;
  severity: string | null;
  request_id: string;
  status: ColumnType<'pending' | 'delivered' | 'failed', 'pending' | 'delivered' | 'failed' | undefined, 'pending' | 'delivered' | 'failed'>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp;
  locked_until: Timestamp | null;
  last_error: string | null;
  delivered_at: Timestamp | null;
}

export interface ReporterDedupeTable {
  kind: string;
  fingerprint: string;
  last_sent_at: Timestamp;
  suppressed: ColumnType<number, number | undefined, number>;
}

export interface AssetsTable {
  id: Generated<string>;
  tenant_id: string;
  kind: 'domain' | 'host' | 'webapp' | 'container_image';
  target: string;
  dns_name: string | null;
  name: string;
  tags: ColumnType<string[], string[] | undefined, string[]>;
  owner: string | null;
  notes: string | null;
  verification_status: ColumnType<'pending' | 'verified' | 'bypassed', 'pending' | 'verified' | 'bypassed' | undefined, 'pending' | 'verified' | 'bypassed'>;
  verified_via: 'txt' | 'covered' | 'bypass' | null;
  covered_by: string | null;
  verification_token: string;
  verified_at: Timestamp | null;
  last_checked_at: Timestamp | null;
  last_result: 'verified' | 'pending' | 'failed' | null;
  last_error: string | null;
  bypass_reason: string | null;
  bypassed_by: string | null;
  bypassed_by_email: string | null;
  bypassed_at: Timestamp | null;
  archived_at: Timestamp | null;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AssetVerificationLogTable {
  id: Generated<number>;
  tenant_id: string;
  asset_id: string;
  at: Timestamp;
  event: string;
  detail: string | null;
  actor_user_id: string | null;
  actor_email: string | null;
}

export interface SchemaMigrationsTable {
  version: string;
  name: string;
  checksum: string;
  applied_at: Timestamp;
}

export interface DB {
  user: UserTable;
  session: SessionTable;
  account: AccountTable;
  twoFactor: TwoFactorTable;
  organization: OrganizationTable;
  member: MemberTable;
  invitation: InvitationTable;
  tenant_settings: TenantSettingsTable;
  audit_log: AuditLogTable;
  platform_roles: PlatformRolesTable;
  schema_migrations: SchemaMigrationsTable;
  svc_idempotency: SvcIdempotencyTable;
  svc_inbound_events: SvcInboundEventsTable;
  svc_outbound_events: SvcOutboundEventsTable;
  svc_received_events: SvcReceivedEventsTable;
  svc_outbox: SvcOutboxTable;
  reporter_dedupe: ReporterDedupeTable;
  assets: AssetsTable;
  asset_verification_log: AssetVerificationLogTable;
}
