// Out-of-band callbacks of template scans (nuclei's interactsh, served by Rampart itself). A
// template scan gets a random 12-character prefix when leased; the worker makes a callback token
// per request (prefix + id) and sends targets to <public host>/oob/<token>. A callback is kept
// only while its scan is leased or running, at most MAX_PER_SCAN per scan, and only the worker
// holding the lease reads it back. Nothing here trusts the caller: anyone may call the endpoint.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { asService, withService, type Tx } from '../db/tenant.ts';
import { appError } from '../lib/errors.ts';
import type { OobSupport } from '../agent/scanners/template/build-http.ts';
import type { OobLeaseOptions } from '../agent/scanners/template/oob.ts';

export const MAX_PER_SCAN = 500;
const MAX_REQUEST = 16_384;
/** Interactions handed to the worker per read. */
const PAGE = 200;

export interface OobCallback {
  token: string;
  protocol: 'http' | 'dns';
  remoteAddress: string;
  request: string;
}

export interface OobService {
  /** What uploaded templates may rely on; undefined when no callback address is reachable. */
  support: OobSupport | undefined;
  /** The DNS zone callbacks are named under, when one is delegated here. */
  dnsDomain: string | undefined;
  /** The lease's out-of-band settings (the scan's prefix, made on first lease), or undefined. */
  leaseOptions(q: Kysely<DB> | Tx, scanId: string): Promise<OobLeaseOptions | undefined>;
  /** Keeps a callback for its scan; false when no active scan has its prefix or the scan is full. */
  record(c: OobCallback): Promise<boolean>;
  /** Callbacks after `after` for the lease holder. */
  read(
    w: { workerId: string; tenantId: string },
    scanId: string,
    leaseToken: string,
    after: string,
  ): Promise<{ interactions: (OobCallback & { id: string; receivedAt: string })[] }>;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const randomPrefix = () => [...randomBytes(12)].map((b) => ALPHABET[b % 36]).join('');

export function createOobService(deps: {
  db: Kysely<DB>;
  publicBaseUrl: string;
  enabled: boolean;
  /** The zone delegated to this server (OOB_DNS_DOMAIN): callbacks are names under it. */
  dnsDomain?: string | undefined;
}): OobService {
  const { db } = deps;
  const httpBase = `${new URL(deps.publicBaseUrl).host}/oob/`;
  const dnsDomain = deps.enabled ? deps.dnsDomain : undefined;
  return {
    support: deps.enabled ? { http: true, dns: Boolean(dnsDomain) } : undefined,
    dnsDomain,

    async leaseOptions(q, scanId) {
      if (!deps.enabled) return undefined;
      const row = await q
        .updateTable('scans')
        .set((eb) => ({ oob_prefix: eb.fn.coalesce('oob_prefix', eb.val(randomPrefix())) }))
        .where('id', '=', scanId)
        .returning('oob_prefix')
        .executeTakeFirst();
      return row?.oob_prefix ? { prefix: row.oob_prefix, httpBase, ...(dnsDomain ? { dnsDomain } : {}) } : undefined;
    },

    async record(c) {
      const token = c.token.toLowerCase();
      if (!deps.enabled || !/^[a-z0-9]{12,40}$/.test(token)) return false;
      return withService(db, async (tx) => {
        const scan = await tx
          .selectFrom('scans')
          .select(['id', 'tenant_id'])
          .where('oob_prefix', '=', token.slice(0, 12))
          .where('status', 'in', ['leased', 'running'])
          .executeTakeFirst();
        if (!scan) return false;
        const { n } = await tx
          .selectFrom('oob_interactions')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('scan_id', '=', scan.id)
          .executeTakeFirstOrThrow();
        if (Number(n) >= MAX_PER_SCAN) return false;
        await tx
          .insertInto('oob_interactions')
          .values({
            scan_id: scan.id,
            tenant_id: scan.tenant_id,
            token,
            protocol: c.protocol,
            remote_address: c.remoteAddress.slice(0, 100),
            raw_request: c.request.slice(0, MAX_REQUEST),
          })
          .execute();
        return true;
      });
    },

    async read(w, scanId, leaseToken, after) {
      return asService(db, async (q) => {
        const held = await q
          .selectFrom('scans')
          .select('id')
          .where('id', '=', scanId)
          .where('tenant_id', '=', w.tenantId)
          .where('lease_token', '=', leaseToken)
          .where('leased_by', '=', w.workerId)
          .where('status', 'in', ['leased', 'running'])
          .executeTakeFirst();
        if (!held) throw appError('lease_lost', 'This worker does not hold a lease on that scan.');
        const rows = await q
          .selectFrom('oob_interactions')
          .select(['id', 'token', 'protocol', 'remote_address', 'raw_request', 'received_at'])
          .where('tenant_id', '=', w.tenantId)
          .where('scan_id', '=', scanId)
          .where('id', '>', after)
          .orderBy('id')
          .limit(PAGE)
          .execute();
        return {
          interactions: rows.map((r) => ({
            id: String(r.id),
            token: r.token,
            protocol: r.protocol,
            remoteAddress: r.remote_address,
            request: r.raw_request,
            receivedAt: new Date(r.received_at).toISOString(),
          })),
        };
      });
    },
  };
}
