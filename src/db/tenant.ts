// Request-scoped database access. Tenant paths run as rampart_app with app.tenant_id set, so
// row-level security filters every statement even when a query forgets its tenant filter.
import { sql, type Kysely, type Transaction } from 'kysely';
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

/** Service paths (auth hooks, staff reads, cron, mesh): the rampart_service role, whose policies name what it may touch. */
export async function withService<T>(db: Kysely<DB>, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (tx) => {
    await sql`select set_config('role', 'rampart_service', true), set_config('app.tenant_id', '', true), set_config('app.user_id', '', true)`.execute(tx);
    return fn(tx);
  });
}
