// Staff = verified e-mail in an approved corporate domain AND a platform_roles row. Both are
// checked on every staff operation; neither alone is enough.
import { sql, type Kysely } from 'kysely';
import type { AuditService } from '../audit/audit-service.ts';
import type { DB } from '../db/schema.ts';
import { withService } from '../db/tenant.ts';
import { appError } from '../lib/errors.ts';
import type { z } from 'zod';
import type { platformRoleEntrySchema, staffTenantSchema } from './staff-schemas.ts';

export type PlatformRole = 'staff' | 'super_admin';

export function emailDomainApproved(email: string, domains: readonly string[]): boolean {
  const at = email.lastIndexOf('@');
  if (at < 0) return false;
  const domain = email.slice(at + 1).toLowerCase();
  return domains.includes(domain);
}

interface Actor {
  id: string;
  email: string;
}

export interface StaffService {
  staffRoleOf(user: { id: string; email: string; emailVerified: boolean }): Promise<PlatformRole | null>;
  listTenants(): Promise<z.infer<typeof staffTenantSchema>[]>;
  listRoles(): Promise<z.infer<typeof platformRoleEntrySchema>[]>;
  grantRole(
    input: { email: string; role: PlatformRole },
    actor: Actor | null,
  ): Promise<z.infer<typeof platformRoleEntrySchema>>;
  revokeRole(userId: string, actor: Actor | null): Promise<void>;
}

export function createStaffService(deps: {
  db: Kysely<DB>;
  staffDomains: readonly string[];
  audit: AuditService;
}): StaffService {
  const { db, staffDomains, audit } = deps;

  /** STAFF_EMAIL_DOMAINS and the domains kept in the installation's settings (first-run setup, Staff). */
  const approvedDomains = async (): Promise<string[]> => {
    const row = await withService(db, (tx) =>
      tx.selectFrom('installation_settings').select('staff_email_domains').where('id', '=', true).executeTakeFirst(),
    );
    return [...staffDomains, ...(row?.staff_email_domains ?? [])];
  };

  const roleEntry = (
    r: {
      user_id: string;
      email: string;
      name: string;
      role: PlatformRole;
      created_at: Date | string;
      emailVerified: boolean;
    },
    domains: readonly string[],
  ) => ({
    userId: r.user_id,
    email: r.email,
    name: r.name,
    role: r.role,
    grantedAt: new Date(r.created_at).toISOString(),
    domainApproved: emailDomainApproved(r.email, domains),
    emailVerified: r.emailVerified,
  });

  const selectRoles = (tx: Parameters<Parameters<typeof withService>[1]>[0]) =>
    tx
      .selectFrom('platform_roles as p')
      .innerJoin('user as u', 'u.id', 'p.user_id')
      .select(['p.user_id', 'u.email', 'u.name', 'p.role', 'p.created_at', 'u.emailVerified']);

  return {
    async staffRoleOf(user) {
      if (!user.emailVerified || !emailDomainApproved(user.email, await approvedDomains())) return null;
      const row = await withService(db, (tx) =>
        tx.selectFrom('platform_roles').select('role').where('user_id', '=', user.id).executeTakeFirst(),
      );
      return row?.role ?? null;
    },

    async listTenants() {
      const rows = await withService(db, (tx) =>
        tx
          .selectFrom('organization as o')
          .select([
            'o.id',
            'o.name',
            'o.slug',
            'o.createdAt',
            sql<number>`(select count(*) from member m where m."organizationId" = o.id)::int`.as('memberCount'),
          ])
          .orderBy('o.name')
          .execute(),
      );
      return rows.map((r) => ({
        id: r.id,
        name: r.name,
        slug: r.slug,
        createdAt: new Date(r.createdAt).toISOString(),
        memberCount: r.memberCount,
      }));
    },

    async listRoles() {
      const rows = await withService(db, (tx) => selectRoles(tx).orderBy('u.email').execute());
      const domains = await approvedDomains();
      return rows.map((r) => roleEntry(r, domains));
    },

    async grantRole({ email, role }, actor) {
      const domains = await approvedDomains();
      return withService(db, async (tx) => {
        const user = await tx
          .selectFrom('user')
          .select(['id', 'email'])
          .where('email', '=', email.toLowerCase())
          .executeTakeFirst();
        if (!user) throw appError('user_not_found', `No user has the e-mail ${email}. They must sign up first.`);
        await tx
          .insertInto('platform_roles')
          .values({ user_id: user.id, role, granted_by: actor?.id ?? null })
          .onConflict((c) => c.column('user_id').doUpdateSet({ role, granted_by: actor?.id ?? null }))
          .execute();
        await audit.record(
          {
            actorUserId: actor?.id ?? null,
            actorEmail: actor?.email ?? 'cli',
            action: 'platform_role.granted',
            targetType: 'user',
            targetId: user.id,
            details: { email: user.email, role },
          },
          tx,
        );
        const row = await selectRoles(tx).where('p.user_id', '=', user.id).executeTakeFirstOrThrow();
        return roleEntry(row, domains);
      });
    },

    async revokeRole(userId, actor) {
      await withService(db, async (tx) => {
        const removed = await tx
          .deleteFrom('platform_roles')
          .where('user_id', '=', userId)
          .returning(['role'])
          .executeTakeFirst();
        if (!removed) throw appError('role_not_found', 'That user holds no platform role.');
        await audit.record(
          {
            actorUserId: actor?.id ?? null,
            actorEmail: actor?.email ?? 'cli',
            action: 'platform_role.revoked',
            targetType: 'user',
            targetId: userId,
            details: { role: removed.role },
          },
          tx,
        );
      });
    },
  };
}
