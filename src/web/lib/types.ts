// Shapes of the Rampart API (/api/v1) as the web app uses them.

export type TenantRole = 'owner' | 'admin' | 'member';
export type PlatformRoleName = 'staff' | 'super_admin';

export interface MeTenant {
  id: string;
  name: string;
  slug: string;
  role: TenantRole;
}

export interface Me {
  user: { id: string; name: string; email: string; emailVerified: boolean; twoFactorEnabled: boolean };
  csrfToken: string;
  activeTenantId: string | null;
  tenants: MeTenant[];
  staff: boolean;
  superAdmin: boolean;
  platformRole: PlatformRoleName | null;
}

export interface PublicConfig {
  signupEnabled: boolean;
  version: string;
  opsDocVersion: string;
}

export interface Member {
  id: string;
  userId: string;
  name: string;
  email: string;
  role: TenantRole;
  joinedAt: string;
  twoFactorEnabled: boolean;
}

export interface Invitation {
  id: string;
  email: string;
  role: TenantRole;
  status: string;
  expiresAt: string;
  createdAt: string;
}

export interface MembersResponse {
  members: Member[];
  invitations: Invitation[];
}

export interface TenantSettings {
  dailyScanQuota: number;
  perAssetConcurrentScans: number;
  updatedAt: string;
  canEdit: boolean;
}

export interface AuditEntry {
  id: number;
  tenantId: string | null;
  tenantName?: string | null;
  actorUserId: string | null;
  actorEmail: string | null;
  action: string;
  targetType: string | null;
  targetId: string | null;
  details: Record<string, unknown> | null;
  ipAddress: string | null;
  userAgent: string | null;
  requestId: string | null;
  createdAt: string;
}

export interface AuditPage {
  entries: AuditEntry[];
  nextBefore: number | null;
}

export interface AuditFilters {
  action?: string;
  actor?: string;
  from?: string;
  to?: string;
  tenantId?: string;
}

export interface StaffTenant {
  id: string;
  name: string;
  slug: string;
  createdAt: string;
  memberCount: number;
}

export interface PlatformRole {
  userId: string;
  email: string;
  name: string;
  role: PlatformRoleName;
  grantedAt: string;
  domainApproved: boolean;
  emailVerified: boolean;
}
