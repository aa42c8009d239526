// First run of a self-hosted install, and the installation's own settings. While no super-admin
// exists, every start makes a one-time setup link (only its hash is kept; a new start replaces
// it). The signed-in person who opens it becomes the installation's super-admin: their e-mail
// domain joins the approved staff domains (kept here, beside STAFF_EMAIL_DOMAINS) and a
// super_admin platform role is granted, so the staff rule (approved domain AND a role) still holds.
// Holding the link proves control of the server (its terminal or log), which also vouches for the
// administrator's address: it is marked verified, as the admin CLI's operator would do.
import { createHash, timingSafeEqual } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { AuditService } from '../audit/audit-service.ts';
import type { DB } from '../db/schema.ts';
import { withService } from '../db/tenant.ts';
import { appError } from '../lib/errors.ts';
import { randomToken } from '../lib/ids.ts';

export const SETUP_PATH = '/setup';
const hash = (token: string) => createHash('sha256').update(token).digest('hex');

export interface InstallationSettingsDto {
  staffEmailDomains: string[];
  /** STAFF_EMAIL_DOMAINS of this server (read-only here). */
  configuredStaffEmailDomains: string[];
}

export function createSetupService(deps: {
  db: Kysely<DB>;
  audit: AuditService;
  configuredDomains: readonly string[];
  publicBaseUrl: string;
}) {
  const { db, audit } = deps;

  /** The latest link this process made: shown on the sign-in page to someone at this machine. */
  let lastLink: string | null = null;
  const hasSuperAdmin = () =>
    withService(
      db,
      async (tx) =>
        !!(await tx
          .selectFrom('platform_roles')
          .select('user_id')
          .where('role', '=', 'super_admin')
          .limit(1)
          .executeTakeFirst()),
    );

  return {
    /** Whether the installation still needs its first administrator. */
    async needed(): Promise<boolean> {
      return !(await hasSuperAdmin());
    },

    /** At start: a fresh one-time link while no super-admin exists, else null. */
    async prepare(): Promise<string | null> {
      if (await hasSuperAdmin()) return null;
      const token = `rsu_${randomToken(24)}`;
      await withService(db, (tx) =>
        tx
          .insertInto('installation_settings')
          .values({ id: true, setup_token_hash: hash(token), setup_created_at: new Date() })
          .onConflict((c) =>
            c.column('id').doUpdateSet({
              setup_token_hash: hash(token),
              setup_created_at: new Date(),
              setup_used_at: null,
              setup_used_by: null,
            }),
          )
          .execute(),
      );
      lastLink = `${deps.publicBaseUrl}${SETUP_PATH}?token=${token}`;
      return lastLink;
    },

    /** The link `prepare()` made, while it may still be redeemed. */
    async currentLink(): Promise<string | null> {
      if (!lastLink || (await hasSuperAdmin())) return null;
      return lastLink;
    },

    /** The signed-in user redeems the link and becomes super-admin. */
    async complete(token: string, user: { id: string; email: string }): Promise<{ staffEmailDomains: string[] }> {
      return withService(db, async (tx) => {
        const row = await tx
          .selectFrom('installation_settings')
          .selectAll()
          .where('id', '=', true)
          .forUpdate()
          .executeTakeFirst();
        const existing = await tx
          .selectFrom('platform_roles')
          .select('user_id')
          .where('role', '=', 'super_admin')
          .limit(1)
          .executeTakeFirst();
        if (existing)
          throw appError(
            'setup_done',
            'This installation already has an administrator; ask them for a platform role under Staff.',
          );
        const given = Buffer.from(hash(token));
        if (
          !row?.setup_token_hash ||
          row.setup_used_at ||
          given.length !== row.setup_token_hash.length ||
          !timingSafeEqual(given, Buffer.from(row.setup_token_hash))
        )
          throw appError(
            'setup_link_invalid',
            'This setup link is not valid. Open the link printed by the latest start of the server.',
          );
        const domain = user.email.slice(user.email.lastIndexOf('@') + 1).toLowerCase();
        const domains = [...new Set([...row.staff_email_domains, domain])];
        await tx
          .updateTable('installation_settings')
          .set({
            staff_email_domains: domains,
            setup_token_hash: null,
            setup_used_at: new Date(),
            setup_used_by: user.id,
            updated_at: new Date(),
          })
          .where('id', '=', true)
          .execute();
        await tx
          .insertInto('platform_roles')
          .values({ user_id: user.id, role: 'super_admin', granted_by: user.id })
          .onConflict((c) => c.column('user_id').doUpdateSet({ role: 'super_admin' }))
          .execute();
        await tx.updateTable('user').set({ emailVerified: true }).where('id', '=', user.id).execute();
        await audit.record(
          {
            actorUserId: user.id,
            actorEmail: user.email,
            action: 'installation.setup_completed',
            targetType: 'user',
            targetId: user.id,
            details: { domain },
          },
          tx,
        );
        return { staffEmailDomains: domains };
      }).finally(() => {
        lastLink = null;
      });
    },

    /** The approved staff domains kept in the database (STAFF_EMAIL_DOMAINS is added by the caller). */
    async storedDomains(): Promise<string[]> {
      const row = await withService(db, (tx) =>
        tx.selectFrom('installation_settings').select('staff_email_domains').where('id', '=', true).executeTakeFirst(),
      );
      return row?.staff_email_domains ?? [];
    },

    async settings(): Promise<InstallationSettingsDto> {
      return {
        staffEmailDomains: await this.storedDomains(),
        configuredStaffEmailDomains: [...deps.configuredDomains],
      };
    },

    /** Super-admins: replace the stored approved domains. */
    async updateSettings(
      input: { staffEmailDomains: string[] },
      actor: { id: string; email: string },
    ): Promise<InstallationSettingsDto> {
      const domains = [...new Set(input.staffEmailDomains.map((d) => d.trim().toLowerCase()))];
      await withService(db, async (tx) => {
        await tx
          .insertInto('installation_settings')
          .values({ id: true, staff_email_domains: domains })
          .onConflict((c) => c.column('id').doUpdateSet({ staff_email_domains: domains, updated_at: sql`now()` }))
          .execute();
        await audit.record(
          {
            actorUserId: actor.id,
            actorEmail: actor.email,
            action: 'installation.settings_updated',
            targetType: 'installation',
            targetId: null,
            details: { staffEmailDomains: domains },
          },
          tx,
        );
      });
      return this.settings();
    },
  };
}

export type SetupService = ReturnType<typeof createSetupService>;
