// Who may read or change a tenant's CMMC records: members read, owners and admins write. Shared
// by the device-check service and the program service.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { withTenantMember, type Tx } from '../db/tenant.ts';
import { cmmcErrors } from './cmmc-errors.ts';
import { cmmcRepo, type ProfileRow } from './cmmc-repo.ts';

/** Roles that change CMMC records. */
export const CMMC_ADMIN_ROLES: readonly string[] = ['owner', 'admin'];

export interface CmmcCaller {
  userId: string;
}

export function createCmmcAccess(db: Kysely<DB>) {
  return {
    /** Runs fn in the tenant's transaction as a member (owner or admin when write). */
    asMember<T>(tenantId: string, caller: CmmcCaller, write: boolean, fn: (tx: Tx, role: string) => Promise<T>): Promise<T> {
      return withTenantMember(db, { tenantId, userId: caller.userId }, async (tx, role) => {
        if (!role) throw cmmcErrors.notMember();
        if (write && !CMMC_ADMIN_ROLES.includes(role)) throw cmmcErrors.forbidden();
        return fn(tx, role);
      });
    },
    async requireProfile(tx: Tx, tenantId: string): Promise<ProfileRow> {
      const p = await cmmcRepo.profileByTenant(tx, tenantId);
      if (!p) throw cmmcErrors.profileNotFound();
      return p;
    },
  };
}
