// Who may read or change a tenant's CMMC records: members read, owners and admins write. Shared
// by the device-check service and the program service.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { TENANT_ADMIN_ROLES, tenantAccess, type AccessNeed, type Tx } from '../db/tenant.ts';
import { cmmcErrors } from './cmmc-errors.ts';
import { cmmcRepo, type ProfileRow } from './cmmc-repo.ts';

/** Roles that change CMMC records: the tenant's admins. */
export const CMMC_ADMIN_ROLES = TENANT_ADMIN_ROLES;
const WRITE: AccessNeed = { roles: CMMC_ADMIN_ROLES, message: cmmcErrors.forbidden().message };

/** asMember reads, asManager writes (owners and admins), and the tenant's CMMC profile. */
export function createCmmcAccess(db: Kysely<DB>) {
  return {
    ...tenantAccess(db, WRITE),
    async requireProfile(tx: Tx, tenantId: string): Promise<ProfileRow> {
      const p = await cmmcRepo.profileByTenant(tx, tenantId);
      if (!p) throw cmmcErrors.profileNotFound();
      return p;
    },
  };
}
