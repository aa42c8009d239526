// Request-scoped database access. Tenant paths run as rampart_app with app.tenant_id set, so
// row-level security filters every statement even when a query forgets its tenant filter.
import { sql, type Kysely, type Transaction } from 'kysely';
import { appError } from '../lib/errors.ts';
import type { DB } from './schema.ts';

export type Tx = Transaction<DB>;

export interface TenantContext {
  tenantId: string;
  userId?: string | null;
}

export async function withTenant<T>(db: Kysely<DB>, ctx: TenantContext, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (tx) => {
    await sql`select set_config('role', 'rampart_app', true), set_config('app.tenant_id', ${ctx.tenantId}, true), set_config('app.user_id', ${ctx.userId ?? ''}, true)`.execute(
      tx,
    );
    return fn(tx);
  });
}

/**
 * withTenant for a member of the tenant: one statement reads the caller's membership and switches
 * to the app role. The membership read is planned and permission-checked before set_config runs,
 * so it happens as the connecting (owner) role, which is not subject to RLS on "member" — by
 * design, since it asks exactly "is this user in this tenant". `fn` gets null for non-members
 * and decides; saves a round trip on every tenant request.
 */
export async function withTenantMember<T>(
  db: Kysely<DB>,
  ctx: { tenantId: string; userId: string },
  fn: (tx: Tx, role: string | null) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (tx) => {
    const { rows } = await sql<{
      role: string | null;
    }>`select (select m.role from "member" m where m."organizationId" = ${ctx.tenantId}::uuid and m."userId" = ${ctx.userId}::uuid) as role, set_config('role', 'rampart_app', true), set_config('app.tenant_id', ${ctx.tenantId}, true), set_config('app.user_id', ${ctx.userId}, true)`.execute(
      tx,
    );
    return fn(tx, rows[0]?.role ?? null);
  });
}

/** The signed-in user a tenant service acts for. */
export interface Caller {
  userId: string;
  email: string;
}

/** The roles that manage a tenant: its settings, members, workers, templates and others' uploads. */
export const TENANT_ADMIN_ROLES: readonly string[] = ['owner', 'admin'];
export const isTenantAdmin = (role: string): boolean => TENANT_ADMIN_ROLES.includes(role);

/** What a tenant call needs beyond membership: one of `roles`, else tenant_forbidden with `message`. */
export interface AccessNeed {
  roles: readonly string[];
  message?: string;
}
/** Owner or admin. */
export const ADMIN_ACCESS: AccessNeed = { roles: TENANT_ADMIN_ROLES };

/**
 * The one way tenant services enter a tenant: withTenantMember, refusing a non-member (and, with
 * `need`, a member without one of its roles) with tenant_forbidden before `fn` runs.
 */
export function withTenantAccess<T>(
  db: Kysely<DB>,
  tenantId: string,
  caller: Pick<Caller, 'userId'>,
  fn: (tx: Tx, role: string) => Promise<T>,
  need?: AccessNeed | null,
): Promise<T> {
  return withTenantMember(db, { tenantId, userId: caller.userId }, async (tx, role) => {
    if (!role) throw appError('tenant_forbidden', 'You are not a member of this tenant.');
    if (need && !need.roles.includes(role))
      throw appError(
        'tenant_forbidden',
        need.message ?? `This needs the ${need.roles.join(' or ')} role in this tenant.`,
      );
    return fn(tx, role);
  });
}

/**
 * withTenantAccess bound to one database, as each tenant service keeps it:
 * `const { asMember, asManager } = tenantAccess(db)`. `asMember` lets any member in; `asManager`
 * only a member with one of `manage`'s roles (owners and admins unless the service manages its
 * records with other roles).
 */
export function tenantAccess(db: Kysely<DB>, manage: AccessNeed = ADMIN_ACCESS) {
  type Fn<T> = (tx: Tx, role: string) => Promise<T>;
  return {
    asMember: <T>(tenantId: string, caller: Pick<Caller, 'userId'>, fn: Fn<T>): Promise<T> =>
      withTenantAccess(db, tenantId, caller, fn),
    asManager: <T>(tenantId: string, caller: Pick<Caller, 'userId'>, fn: Fn<T>): Promise<T> =>
      withTenantAccess(db, tenantId, caller, fn, manage),
  };
}

/**
 * On PostgreSQL, service work runs on its own small pool whose connections switch to
 * rampart_service once, when they are opened (client.ts). Transactions there need no role
 * statement, and single statements need no transaction: fewer round trips on hot paths (mesh
 * idempotency claims, records). PGlite has one connection, so it switches per transaction.
 */
const serviceDbs = new WeakMap<Kysely<DB>, Kysely<DB>>();
export function registerServiceDb(db: Kysely<DB>, serviceDb: Kysely<DB>): void {
  serviceDbs.set(db, serviceDb);
}

/** Service paths (auth hooks, staff reads, cron, mesh): the rampart_service role, whose policies name exactly what it may touch. */
export async function withService<T>(db: Kysely<DB>, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const service = serviceDbs.get(db);
  if (service) return service.transaction().execute(fn);
  return db.transaction().execute(async (tx) => {
    await sql`select set_config('role', 'rampart_service', true), set_config('app.tenant_id', '', true), set_config('app.user_id', '', true)`.execute(
      tx,
    );
    return fn(tx);
  });
}

/**
 * Statements as the service role that each commit on their own where the database allows it
 * (no surrounding transaction on PostgreSQL). Only where the statements need no common atomicity.
 */
export async function asService<T>(db: Kysely<DB>, fn: (q: Kysely<DB> | Tx) => Promise<T>): Promise<T> {
  const service = serviceDbs.get(db);
  if (service) return fn(service);
  return withService(db, (tx) => fn(tx));
}
