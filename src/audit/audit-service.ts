// The platform audit log: who did what, to what, from where, when. Append-only.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { withService, type Tx } from '../db/tenant.ts';
import { currentRequestInfo } from '../lib/request-context.ts';
import type { AuditEntryDto, AuditQuery } from './audit-schemas.ts';

export interface AuditRecord {
  tenantId?: string | null;
  actorUserId?: string | null;
  actorEmail?: string | null;
  action: string;
  targetType?: string | null;
  targetId?: string | null;
  details?: Record<string, unknown>;
}

export interface AuditService {
  /** Writes one entry. With `tx` it joins that (tenant) transaction; otherwise it runs as the service role. */
  record(entry: AuditRecord, tx?: Tx): Promise<void>;
  /** Staff: every tenant. With `tx` inside withTenant, RLS narrows it to that tenant. */
  list(query: AuditQuery, tx?: Tx): Promise<{ entries: AuditEntryDto[]; nextBefore: number | null }>;
}

export function createAuditService(deps: { db: Kysely<DB> }): AuditService {
  const insert = (tx: Tx, e: AuditRecord) => {
    const info = currentRequestInfo();
    return tx
      .insertInto('audit_log')
      .values({
        tenant_id: e.tenantId ?? null,
        actor_user_id: e.actorUserId ?? null,
        actor_email: e.actorEmail ?? null,
        action: e.action,
        target_type: e.targetType ?? null,
        target_id: e.targetId ?? null,
        details: JSON.stringify(e.details ?? {}),
        ip_address: info?.ip ?? null,
        user_agent: info?.userAgent?.slice(0, 512) ?? null,
        request_id: info?.requestId ?? null,
      })
      .execute();
  };

  const select = async (tx: Tx, q: AuditQuery) => {
    let query = tx
      .selectFrom('audit_log as a')
      .leftJoin('organization as o', 'o.id', 'a.tenant_id')
      .select([
        'a.id',
        'a.tenant_id',
        'o.name as tenant_name',
        'a.actor_user_id',
        'a.actor_email',
        'a.action',
        'a.target_type',
        'a.target_id',
        'a.details',
        'a.ip_address',
        'a.user_agent',
        'a.request_id',
        'a.created_at',
      ])
      .orderBy('a.id', 'desc')
      .limit(q.limit + 1);
    if (q.tenantId) query = query.where('a.tenant_id', '=', q.tenantId);
    if (q.action) query = query.where('a.action', 'like', `${q.action.replace(/[%_\\]/g, '\\$&')}%`);
    if (q.actor) query = query.where('a.actor_email', 'ilike', `%${q.actor.replace(/[%_\\]/g, '\\$&')}%`);
    if (q.from) query = query.where('a.created_at', '>=', new Date(q.from));
    if (q.to) query = query.where('a.created_at', '<', new Date(q.to));
    if (q.before) query = query.where('a.id', '<', q.before);
    const rows = await query.execute();
    const page = rows.slice(0, q.limit);
    return {
      entries: page.map((r) => ({
        id: r.id,
        tenantId: r.tenant_id,
        tenantName: r.tenant_name,
        actorUserId: r.actor_user_id,
        actorEmail: r.actor_email,
        action: r.action,
        targetType: r.target_type,
        targetId: r.target_id,
        details: r.details,
        ipAddress: r.ip_address,
        userAgent: r.user_agent,
        requestId: r.request_id,
        createdAt: new Date(r.created_at).toISOString(),
      })),
      nextBefore: rows.length > q.limit ? (page.at(-1)?.id ?? null) : null,
    };
  };

  return {
    async record(entry, tx) {
      if (tx) await insert(tx, entry);
      else await withService(deps.db, (t) => insert(t, entry));
    },
    list(q, tx) {
      return tx ? select(tx, q) : withService(deps.db, (t) => select(t, q));
    },
  };
}
