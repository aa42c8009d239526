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

export interface SchemaMigrationsTable {
  version: string;
  name: string;
  checksum: string;
  applied_at: Timestamp;
}

export interface DB {
  user: UserTable;
  session: SessionTable;
  organization: OrganizationTable;
  member: MemberTable;
  invitation: InvitationTable;
  tenant_settings: TenantSettingsTable;
  audit_log: AuditLogTable;
  platform_roles: PlatformRolesTable;
  schema_migrations: SchemaMigrationsTable;
}
