// Shapes of the Rampart API (/api/v1) as the web app uses them, inferred from the server's zod
// schemas. Type-only imports: they are erased at build time, so no zod code enters the bundle.
// z.infer is the schema's output type, which is what the JSON responses carry; request bodies and
// query strings use z.input, the type the server's schema accepts.
import type { z } from 'zod';
import type {
  assetDetailSchema,
  assetKindSchema,
  assetListSchema,
  assetResponseSchema,
  assetSchema,
  bypassBodySchema,
  createAssetBodySchema,
  listAssetsQuerySchema,
  updateAssetBodySchema,
  verificationLogEntrySchema,
  verificationStatusSchema,
  verifyResponseSchema,
} from '../../assets/assets-schemas.ts';
import type { auditEntrySchema, auditPageSchema, auditQuerySchema } from '../../audit/audit-schemas.ts';
import type { publicConfigSchema } from '../../ops/ops-schemas.ts';
import type {
  inboundEventSchema,
  inboundPageSchema,
  inboundQuerySchema,
  outboundEventSchema,
  outboundPageSchema,
  outboundQuerySchema,
  outboxEntrySchema,
  outboxPageSchema,
  outboxQuerySchema,
  receivedEventSchema,
  receivedEventsPageSchema,
  receivedEventsQuerySchema,
} from '../../staff/mesh-records-schemas.ts';
import type {
  grantRoleBodySchema,
  platformRoleEntrySchema,
  platformRoleResponseSchema,
  platformRoleSchema,
  platformRolesResponseSchema,
  staffTenantSchema,
  staffTenantsResponseSchema,
} from '../../staff/staff-schemas.ts';
import type { mailboxMessageSchema, mailboxPageSchema } from '../../staff/mailbox-schemas.ts';
import type {
  invitationSchema,
  meSchema,
  memberSchema,
  membersResponseSchema,
  membershipSchema,
  tenantRoleSchema,
  tenantSettingsBodySchema,
  tenantSettingsSchema,
} from '../../tenants/tenants-schemas.ts';

export type TenantRole = z.infer<typeof tenantRoleSchema>;
export type PlatformRoleName = z.infer<typeof platformRoleSchema>;

/** GET /api/v1/me */
export type Me = z.infer<typeof meSchema>;
export type MeTenant = z.infer<typeof membershipSchema>;

/** GET /api/v1/tenants/:tenantId/members */
export type MembersResponse = z.infer<typeof membersResponseSchema>;
export type Member = z.infer<typeof memberSchema>;
export type Invitation = z.infer<typeof invitationSchema>;

/** GET and PUT /api/v1/tenants/:tenantId/settings */
export type TenantSettings = z.infer<typeof tenantSettingsSchema>;
export type TenantSettingsBody = z.input<typeof tenantSettingsBodySchema>;

/** GET /api/v1/tenants/:tenantId/audit-log and /api/v1/staff/audit-log */
export type AuditPage = z.infer<typeof auditPageSchema>;
export type AuditEntry = z.infer<typeof auditEntrySchema>;
/** The filter fields of the audit-log query string; paging (`before`, `limit`) is the query's own. */
export type AuditFilters = Pick<z.input<typeof auditQuerySchema>, 'action' | 'actor' | 'from' | 'to' | 'tenantId'>;

/** /api/v1/staff/... */
export type StaffTenant = z.infer<typeof staffTenantSchema>;
export type PlatformRole = z.infer<typeof platformRoleEntrySchema>;
export type GrantRoleBody = z.input<typeof grantRoleBodySchema>;
export type StaffTenantsResponse = z.infer<typeof staffTenantsResponseSchema>;
export type PlatformRolesResponse = z.infer<typeof platformRolesResponseSchema>;
export type PlatformRoleResponse = z.infer<typeof platformRoleResponseSchema>;

/** GET /api/v1/staff/mesh/...: the service-mesh records. Filters leave paging (`before`, `limit`) to the query. */
export type MeshReceivedEvent = z.infer<typeof receivedEventSchema>;
export type MeshReceivedPage = z.infer<typeof receivedEventsPageSchema>;
export type MeshReceivedFilters = Pick<
  z.input<typeof receivedEventsQuerySchema>,
  'caller' | 'kind' | 'severity' | 'from' | 'to'
>;
export type MeshInboundEvent = z.infer<typeof inboundEventSchema>;
export type MeshInboundPage = z.infer<typeof inboundPageSchema>;
/** `status` is coerced from the query string on the server; the web app sends a number. */
export type MeshInboundFilters = Pick<
  z.input<typeof inboundQuerySchema>,
  'caller' | 'flow' | 'errorCode' | 'from' | 'to'
> & { status?: number };
export type MeshOutboundEvent = z.infer<typeof outboundEventSchema>;
export type MeshOutboundPage = z.infer<typeof outboundPageSchema>;
export type MeshOutboundFilters = Pick<
  z.input<typeof outboundQuerySchema>,
  'peer' | 'flow' | 'ok' | 'requestId' | 'from' | 'to'
>;
export type MeshOutboxEntry = z.infer<typeof outboxEntrySchema>;
export type MeshOutboxPage = z.infer<typeof outboxPageSchema>;
export type MeshOutboxFilters = Pick<z.input<typeof outboxQuerySchema>, 'status' | 'peer'>;

/** GET /api/v1/staff/mailbox[/:id] */
export type MailboxPage = z.infer<typeof mailboxPageSchema>;
export type MailboxMessage = z.infer<typeof mailboxMessageSchema>;

/** GET /api/v1/public/config */
export type PublicConfig = z.infer<typeof publicConfigSchema>;

/** /api/v1/tenants/:tenantId/assets/... and the super-admin bypass /api/v1/staff/assets/:id/bypass */
export type AssetKind = z.infer<typeof assetKindSchema>;
export type VerificationStatus = z.infer<typeof verificationStatusSchema>;
export type Asset = z.infer<typeof assetSchema>;
export type AssetsPage = z.infer<typeof assetListSchema>;
/** The filter fields of the asset list's query string; paging (`before`, `limit`) is the query's own. */
export type AssetFilters = Pick<z.input<typeof listAssetsQuerySchema>, 'q' | 'kind' | 'status' | 'tag' | 'archived'>;
export type AssetDetail = z.infer<typeof assetDetailSchema>;
export type AssetLogEntry = z.infer<typeof verificationLogEntrySchema>;
export type AssetResponse = z.infer<typeof assetResponseSchema>;
export type CreateAssetBody = z.input<typeof createAssetBodySchema>;
export type UpdateAssetBody = z.input<typeof updateAssetBodySchema>;
export type VerifyAssetResponse = z.infer<typeof verifyResponseSchema>;
export type BypassBody = z.input<typeof bypassBodySchema>;
