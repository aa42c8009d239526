// Tenant-scoped reads and settings. Every method runs inside withTenant, so row-level security
// holds even if a query forgets its tenant filter; the caller's role is checked in the same
// transaction.
import { sql, type Kysely } from 'kysely';
import type { z } from 'zod';
import type { AuditService } from '../audit/audit-service.ts';
import type { AuditQuery } from '../audit/audit-schemas.ts';
import type { DB } from '../db/schema.ts';
import { type Caller, isTenantAdmin, type Tx, withService, tenantAccess } from '../db/tenant.ts';
import type {
  membersResponseSchema,
  membershipSchema,
  TenantRole,
  TenantSettingsDto,
  TenantSettingsInput,
} from './tenants-schemas.ts';

export const TENANT_SETTING_DEFAULTS = {
  dailyScanQuota: 200,
  perAssetConcurrentScans: 1,
  slaDays: { critical: 7, high: 30, medium: 90, low: 120 },
} as const;

export function createTenantsService(deps: { db: Kysely<DB>; audit: AuditService }) {
  const { db, audit } = deps;

  const { asMember, asManager } = tenantAccess(db);

  async function readSettings(tx: Tx, tenantId: string, canEdit: boolean): Promise<TenantSettingsDto> {
    const row = await tx.selectFrom('tenant_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
    return row
      ? {
          dailyScanQuota: row.daily_scan_quota,
          perAssetConcurrentScans: row.per_asset_concurrent_scans,
          slaDays: {
            critical: row.sla_critical_days,
            high: row.sla_high_days,
            medium: row.sla_medium_days,
            low: row.sla_low_days,
          },
          updatedAt: new Date(row.updated_at).toISOString(),
          canEdit,
        }
      : {
          ...TENANT_SETTING_DEFAULTS,
          slaDays: { ...TENANT_SETTING_DEFAULTS.slaDays },
          updatedAt: new Date(0).toISOString(),
          canEdit,
        };
  }

  return {
    async membershipsOf(userId: string): Promise<z.infer<typeof membershipSchema>[]> {
      const rows = await withService(db, (tx) =>
        tx
          .selectFrom('member as m')
          .innerJoin('organization as o', 'o.id', 'm.organizationId')
          .select(['o.id', 'o.name', 'o.slug', 'm.role'])
          .where('m.userId', '=', userId)
          .orderBy('o.name')
          .execute(),
      );
      return rows.map((r) => ({ ...r, role: r.role as TenantRole }));
    },

    listMembers(tenantId: string, caller: Caller): Promise<z.infer<typeof membersResponseSchema>> {
      return asMember(tenantId, caller, async (tx, role) => {
        // No tenant filter on purpose in neither query's join: RLS scopes member and user rows.
        const members = await tx
          .selectFrom('member as m')
          .innerJoin('user as u', 'u.id', 'm.userId')
          .select(['m.id', 'm.userId', 'u.name', 'u.email', 'm.role', 'm.createdAt', 'u.twoFactorEnabled'])
          .where('m.organizationId', '=', tenantId)
          .orderBy('u.email')
          .execute();
        const invitations = isTenantAdmin(role)
          ? await tx
              .selectFrom('invitation')
              .select(['id', 'email', 'role', 'status', 'expiresAt', 'createdAt'])
              .where('organizationId', '=', tenantId)
              .where('status', '=', 'pending')
              .orderBy('createdAt', 'desc')
              .execute()
          : [];
        return {
          members: members.map((m) => ({
            id: m.id,
            userId: m.userId,
            name: m.name,
            email: m.email,
            role: m.role as TenantRole,
            joinedAt: new Date(m.createdAt).toISOString(),
            twoFactorEnabled: Boolean(m.twoFactorEnabled),
          })),
          invitations: invitations.map((i) => ({
            id: i.id,
            email: i.email,
            role: i.role ?? 'member',
            status: i.status,
            expiresAt: new Date(i.expiresAt).toISOString(),
            createdAt: new Date(i.createdAt).toISOString(),
          })),
        };
      });
    },

    getSettings(tenantId: string, caller: Caller): Promise<TenantSettingsDto> {
      return asMember(tenantId, caller, (tx, role) => readSettings(tx, tenantId, isTenantAdmin(role)));
    },

    /** Also the read path the scans module uses for enforcement (inside its own tenant transaction). */
    settingsIn: (tx: Tx, tenantId: string) => readSettings(tx, tenantId, false),

    updateSettings(tenantId: string, caller: Caller, input: TenantSettingsInput): Promise<TenantSettingsDto> {
      return asManager(tenantId, caller, async (tx) => {
        const before = await readSettings(tx, tenantId, true);
        const sla = input.slaDays ?? before.slaDays;
        const slaColumns = {
          sla_critical_days: sla.critical,
          sla_high_days: sla.high,
          sla_medium_days: sla.medium,
          sla_low_days: sla.low,
        };
        await tx
          .insertInto('tenant_settings')
          .values({
            tenant_id: tenantId,
            daily_scan_quota: input.dailyScanQuota,
            per_asset_concurrent_scans: input.perAssetConcurrentScans,
            ...slaColumns,
            updated_by: caller.userId,
          })
          .onConflict((c) =>
            c.column('tenant_id').doUpdateSet({
              daily_scan_quota: input.dailyScanQuota,
              per_asset_concurrent_scans: input.perAssetConcurrentScans,
              ...slaColumns,
              updated_by: caller.userId,
              updated_at: new Date(),
            }),
          )
          .execute();
        const slaChanged = (['critical', 'high', 'medium', 'low'] as const).some((k) => sla[k] !== before.slaDays[k]);
        if (slaChanged) {
          // The policy is "first seen + days for the severity": findings not yet fixed follow it.
          await sql`
            update findings set sla_due_at = first_seen_at + make_interval(days => case severity
                when 'critical' then ${sla.critical}::int when 'high' then ${sla.high}::int when 'medium' then ${sla.medium}::int else ${sla.low}::int end),
              updated_at = now()
            where tenant_id = ${tenantId} and status <> 'fixed' and severity <> 'info'`.execute(tx);
        }
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action: 'tenant.settings_updated',
            targetType: 'tenant',
            targetId: tenantId,
            details: {
              from: {
                dailyScanQuota: before.dailyScanQuota,
                perAssetConcurrentScans: before.perAssetConcurrentScans,
                slaDays: before.slaDays,
              },
              to: { ...input, slaDays: sla },
            },
          },
          tx,
        );
        return readSettings(tx, tenantId, true);
      });
    },

    auditLog(tenantId: string, caller: Caller, query: Omit<AuditQuery, 'tenantId'>) {
      return asManager(tenantId, caller, (tx) => audit.list({ ...query, tenantId }, tx));
    },
  };
}

export type TenantsService = ReturnType<typeof createTenantsService>;
