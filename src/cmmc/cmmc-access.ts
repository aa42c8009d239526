// Who may read or change a tenant's CMMC records: members read, owners and admins write. Shared
// by the device-check service and the program service.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { TENANT_ADMIN_ROLES, withTenantAccess, type AccessNeed, type Tx } from '../db/tenant.ts';
import { cmmcErrors } from './cmmc-errors.ts';
import { cmmcRepo, type ProfileRow } from './cmmc-repo.ts';

/** Roles that change CMMC records: the tenant's admins. */
export const CMMC_ADMIN_ROLES = TENANT_ADMIN_ROLES;
const WRITE: AccessNeed = { roles: CMMC_ADMIN_ROLES, message: cmmcErrors.forbidden().message };

export interface CmmcCaller {
  userId: string;
}

export function createCmmcAccess(db: Kysely<DB>) {
  return {
    /** Runs fn in the tenant's transaction as a member (owner or admin when write). */
    asMember<T>(
      tenantId: string,
      caller: CmmcCaller,
      write: boolean,
      fn: (tx: Tx, role: string) => Promise<T>,
    ): Promise<T> {
      return withTenantAccess(db, tenantId, caller, fn, write ? WRITE : null);
    },
    async requireProfile(tx: Tx, tenantId: string): Promise<ProfileRow> {
      const p = await cmmcRepo.profileByTenant(tx, tenantId);
      if (!p) throw cmmcErrors.profileNotFound();
      return p;
    },
  };
}
