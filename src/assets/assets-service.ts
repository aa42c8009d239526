// Assets and their ownership proof. Tenant operations run inside withTenantMember (RLS); the
// super-admin bypass and the daily re-check run as the service role. Every change of proof is
// written to the verification log; bypasses also to the platform audit log.
// Over 500 lines on purpose: assets and their proof of ownership (DNS, file, bypass, re-check) change together; the
// proof methods are in their own files.
import { randomBytes, randomUUID } from 'node:crypto';
import { pipeline, type Readable } from 'node:stream';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { z } from 'zod';
import type { AuditService } from '../audit/index.ts';
import type { AssetsTable, DB } from '../db/schema.ts';
import type { StorageService } from '../storage/index.ts';
import { type Caller, type Tx, withService, tenantAccess } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import { AppError, appError } from '../lib/errors.ts';
import { assetVerificationFailedReport, type Reporter } from '../reporter/reporter.ts';
import { normaliseTarget, TargetError } from './asset-targets.ts';
import { ArchiveSniffer } from './image-archive.ts';
import type {
  archiveReplaceQuerySchema,
  archiveUploadQuerySchema,
  AssetDto,
  CheckOutcome,
  createAssetBodySchema,
  listAssetsQuerySchema,
  updateAssetBodySchema,
} from './assets-schemas.ts';
import { recordName, recordValue, type CheckResult, type DnsVerifier } from './dns-verifier.ts';

type Row = Selectable<AssetsTable>;

/**
 * The host of web application `a`'s URL as its target stores it (lower case; an IPv6 address
 * without brackets), to compare with a host asset's target.
 */
const URL_HOST = sql`lower(coalesce(substring(a.target from ${'^https?://[[]([^]]+)[]]'}), substring(a.target from ${'^https?://([^/:?#]+)'})))`;
export const RECHECK_AFTER_MS = 24 * 60 * 60 * 1000;
/** Before a scan is leased, a proof older than this is checked again (issue: "re-check before a scan is leased"). */
export const LEASE_RECHECK_AFTER_MS = 60 * 60 * 1000;

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

function toDto(r: Row & { covered_target?: string | null }): AssetDto {
  return {
    id: r.id,
    kind: r.kind,
    target: r.target,
    name: r.name,
    tags: r.tags,
    owner: r.owner,
    notes: r.notes,
    verification: {
      status: r.verification_status,
      via: r.verified_via,
      coveredBy: r.covered_by ? { assetId: r.covered_by, target: r.covered_target ?? '' } : null,
      verifiedAt: iso(r.verified_at),
      lastCheckedAt: iso(r.last_checked_at),
      lastResult: r.last_result,
      lastError: r.last_error,
      bypass:
        r.verification_status === 'bypassed' && r.bypass_reason
          ? { reason: r.bypass_reason, by: r.bypassed_by_email ?? '', at: iso(r.bypassed_at)! }
          : null,
    },
    source: r.source,
    archive:
      r.source === 'archive' && r.archive_sha256 && r.archive_format
        ? {
            fileName: r.archive_file_name ?? '',
            size: Number(r.archive_size),
            sha256: r.archive_sha256,
            format: r.archive_format,
            uploadedAt: iso(r.archive_uploaded_at)!,
          }
        : null,
    archivedAt: iso(r.archived_at),
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

export function createAssetsService(deps: {
  db: Kysely<DB>;
  verifier: DnsVerifier;
  reporter: Reporter;
  audit: AuditService;
  clock: Clock;
  storage: StorageService;
  imageArchiveMaxBytes: number;
}) {
  const { db, verifier, reporter, audit, clock, storage } = deps;

  const { asMember, asManager } = tenantAccess(db);

  const selectAsset = (tx: Tx) =>
    tx
      .selectFrom('assets as a')
      .leftJoin('assets as c', 'c.id', 'a.covered_by')
      .selectAll('a')
      .select('c.target as covered_target');

  /**
   * The asset, filtered by its tenant in the query as well as by row-level security. Only the
   * super-admin bypass, which runs as the service and starts from an asset id alone, passes null.
   */
  async function load(tx: Tx, tenantId: string | null, assetId: string) {
    let q = selectAsset(tx).where('a.id', '=', assetId);
    if (tenantId !== null) q = q.where('a.tenant_id', '=', tenantId);
    const row = await q.executeTakeFirst();
    if (!row) throw appError('asset_not_found', 'No such asset in this tenant.');
    return row;
  }

  const log = (
    tx: Tx,
    a: { id: string; tenant_id: string },
    event: string,
    detail: string | null,
    actor?: Caller | null,
  ) =>
    tx
      .insertInto('asset_verification_log')
      .values({
        tenant_id: a.tenant_id,
        asset_id: a.id,
        event,
        detail,
        actor_user_id: actor?.userId ?? null,
        actor_email: actor?.email ?? null,
      })
      .execute();

  const tooLarge = () =>
    appError(
      'payload_too_large',
      `Image archives may have at most ${deps.imageArchiveMaxBytes.toLocaleString('en-US')} bytes.`,
      { details: { maxBytes: deps.imageArchiveMaxBytes } },
    );

  /**
   * Streams an image archive into the tenant's storage under a fresh key. The sniffer fails the
   * stream unless it starts like a (gzipped) tar, and the store refuses more than the limit; either
   * way nothing is kept.
   */
  async function storeArchive(tenantId: string, assetId: string, body: Readable, declaredLength: number | null) {
    if (declaredLength !== null && declaredLength > deps.imageArchiveMaxBytes) throw tooLarge();
    const store = await storage.forTenant(tenantId);
    const key = `assets/${assetId}/archive-${randomUUID()}`;
    const sniffer = new ArchiveSniffer();
    const checked = pipeline(body, sniffer, () => undefined);
    const put = await store.put(key, checked, {
      maxBytes: deps.imageArchiveMaxBytes,
      contentType: 'application/octet-stream',
    });
    return { store, key, size: put.size, sha256: put.sha256, format: sniffer.format ?? 'tar' };
  }

  const archiveTarget = (sha256: string) => `archive:sha256:${sha256}`;
  const describe = (a: { fileName: string; size: number; sha256: string }) =>
    `${a.fileName}, ${a.size.toLocaleString('en-US')} bytes, sha256:${a.sha256}`;

  /**
   * Coverage, re-derived after every change. A domain verified by its own TXT record covers itself
   * and everything under it: subdomains, host names and URLs under it, images on a registry under
   * it. A host a super-admin bypassed covers the web applications on exactly that host (the URL's
   * host equals the host's target, any port; never a subdomain), which stay "bypassed": a bypass
   * is never reported as proof. A proven domain wins over a host's bypass.
   */
  async function refreshCoverage(tx: Tx, tenantId: string): Promise<void> {
    const now = clock.now();
    const domainCovers = sql`d.kind = 'domain' and d.verification_status = 'verified' and d.verified_via = 'txt'
      and d.archived_at is null and (a.dns_name = d.target or a.dns_name like '%.' || d.target)`;
    const hostCovers = sql`a.kind = 'webapp' and d.kind = 'host' and d.verification_status = 'bypassed'
      and d.verified_via = 'bypass' and d.archived_at is null and d.target = ${URL_HOST}`;
    // Coverage that no longer holds goes back to pending.
    await sql`
      update assets a set verification_status = 'pending', verified_via = null, covered_by = null, updated_at = ${now}
      where a.tenant_id = ${tenantId} and a.verified_via = 'covered'
        and not exists (select 1 from assets d where d.id = a.covered_by
                        and ((a.verification_status = 'verified' and ${domainCovers})
                             or (a.verification_status = 'bypassed' and ${hostCovers})))`.execute(tx);
    // Pending assets (or ones a host's bypass covers) under a verified domain become covered by the closest one.
    await sql`
      update assets a set verification_status = 'verified', verified_via = 'covered', verified_at = ${now}, updated_at = ${now},
        covered_by = (select d.id from assets d where d.tenant_id = a.tenant_id and d.id <> a.id and ${domainCovers}
                      order by length(d.target) desc limit 1)
      where a.tenant_id = ${tenantId} and a.dns_name is not null
        and (a.verification_status = 'pending' or (a.verification_status = 'bypassed' and a.verified_via = 'covered'))
        and exists (select 1 from assets d where d.tenant_id = a.tenant_id and d.id <> a.id and ${domainCovers})`.execute(
      tx,
    );
    // Pending web applications on a bypassed host are covered by that host's bypass.
    await sql`
      update assets a set verification_status = 'bypassed', verified_via = 'covered', updated_at = ${now},
        covered_by = (select d.id from assets d where d.tenant_id = a.tenant_id and ${hostCovers}
                      order by d.created_at, d.id limit 1)
      where a.tenant_id = ${tenantId} and a.verification_status = 'pending'
        and exists (select 1 from assets d where d.tenant_id = a.tenant_id and ${hostCovers})`.execute(tx);
  }

  /** Applies one check's result; runs in the asset's tenant transaction or as the service role. */
  async function applyCheck(tx: Tx, asset: Row, result: CheckResult, actor: Caller | null): Promise<void> {
    const now = clock.now();
    const wasOwnProof = asset.verification_status === 'verified' && asset.verified_via === 'txt';
    const changes: Partial<Record<keyof Row, unknown>> = {
      last_checked_at: now,
      last_result: result.outcome,
      last_error: result.outcome === 'verified' ? null : result.detail,
      updated_at: now,
    };
    let event: string = 'check';
    if (asset.verification_status === 'bypassed' && result.outcome === 'verified') {
      // Real proof supersedes a bypass.
      Object.assign(changes, {
        verification_status: 'verified',
        verified_via: 'txt',
        covered_by: null,
        verified_at: now,
        bypass_reason: null,
        bypassed_by: null,
        bypassed_by_email: null,
        bypassed_at: null,
      });
      event = 'verified';
    } else if (asset.verification_status !== 'bypassed') {
      if (result.outcome === 'verified') {
        Object.assign(changes, {
          verification_status: 'verified',
          verified_via: 'txt',
          covered_by: null,
          verified_at: wasOwnProof ? asset.verified_at : now,
        });
        event = wasOwnProof ? 'check' : 'verified';
      } else if (result.outcome === 'pending' && wasOwnProof) {
        Object.assign(changes, { verification_status: 'pending', verified_via: null, verified_at: null });
        event = 'proof_lost';
      } else if (result.outcome === 'pending') {
        event = 'pending';
      }
    }
    if (result.outcome === 'failed') event = 'failed';
    await tx
      .updateTable('assets')
      .set(changes as never)
      .where('id', '=', asset.id)
      .execute();
    await log(tx, asset, event, result.detail, actor);
    // A check that cannot complete, or proof that has gone, is a verification failure.
    if (event === 'failed' || event === 'proof_lost') {
      await reporter.report(
        assetVerificationFailedReport({
          tenantId: asset.tenant_id,
          assetId: asset.id,
          target: asset.target,
          reason: event === 'proof_lost' ? `The proof record is gone: ${result.detail}` : result.detail,
        }),
        tx,
      );
    }
    await refreshCoverage(tx, asset.tenant_id);
  }

  return {
    async list(tenantId: string, caller: Caller, q: z.output<typeof listAssetsQuerySchema>) {
      return asMember(tenantId, caller, async (tx) => {
        let query = selectAsset(tx)
          .select(
            sql<string>`to_char(a.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor_at'),
          )
          .where('a.tenant_id', '=', tenantId)
          .where('a.archived_at', q.archived ? 'is not' : 'is', null)
          .orderBy('a.created_at', 'desc')
          .orderBy('a.id', 'desc')
          .limit(q.limit + 1);
        if (q.kind) query = query.where('a.kind', '=', q.kind);
        if (q.status) query = query.where('a.verification_status', '=', q.status);
        if (q.tag) query = query.where(sql<boolean>`${q.tag} = any(a.tags)`);
        if (q.q) {
          const like = `%${q.q.replace(/[%_\\]/g, '\\$&')}%`;
          query = query.where((eb) => eb.or([eb('a.name', 'ilike', like), eb('a.target', 'ilike', like)]));
        }
        if (q.before) {
          const [at, id] = q.before.split('_') as [string, string]; // shape checked by the schema
          if (Number.isNaN(Date.parse(at)))
            throw appError('validation_failed', 'Pass nextBefore from the previous page unchanged.');
          query = query.where(sql<boolean>`(a.created_at, a.id) < (${at}::timestamptz, ${id}::uuid)`);
        }
        const rows = await query.execute();
        const page = rows.slice(0, q.limit);
        const last = page.at(-1);
        return {
          assets: page.map(toDto),
          nextBefore: rows.length > q.limit && last ? `${last.cursor_at}_${last.id}` : null,
        };
      });
    },

    async create(tenantId: string, caller: Caller, body: z.output<typeof createAssetBodySchema>) {
      let normalised;
      try {
        normalised = normaliseTarget(body.kind, body.target);
      } catch (e) {
        if (e instanceof TargetError)
          throw new AppError('validation_failed', e.message, {
            details: [{ path: 'body.target', message: e.message }],
          });
        throw e;
      }
      return asMember(tenantId, caller, async (tx) => {
        const exists = await tx
          .selectFrom('assets')
          .select('id')
          .where('tenant_id', '=', tenantId)
          .where('kind', '=', body.kind)
          .where('target', '=', normalised.target)
          .executeTakeFirst();
        if (exists)
          throw appError('asset_exists', `This ${body.kind.replace('_', ' ')} is already registered.`, {
            details: { assetId: exists.id },
          });
        const row = await tx
          .insertInto('assets')
          .values({
            tenant_id: tenantId,
            kind: body.kind,
            target: normalised.target,
            dns_name: normalised.dnsName,
            name: body.name ?? normalised.target,
            tags: [...new Set(body.tags ?? [])],
            owner: body.owner || null,
            notes: body.notes || null,
            verification_token: randomBytes(16).toString('hex'),
            created_by: caller.userId,
          })
          .returning(['id', 'tenant_id'])
          .executeTakeFirstOrThrow()
          .catch((e: unknown) => {
            // Two concurrent adds of the same target: the unique index decides, the loser gets 409.
            if ((e as { code?: string }).code === '23505')
              throw appError('asset_exists', `This ${body.kind.replace('_', ' ')} is already registered.`);
            throw e;
          });
        await log(tx, row, 'created', null, caller);
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action: 'asset.created',
            targetType: 'asset',
            targetId: row.id,
            details: { kind: body.kind, target: normalised.target },
          },
          tx,
        );
        await refreshCoverage(tx, tenantId);
        return { asset: toDto(await load(tx, tenantId, row.id)) };
      });
    },

    async get(tenantId: string, caller: Caller, assetId: string) {
      return asMember(tenantId, caller, async (tx) => {
        const asset = await load(tx, tenantId, assetId);
        const entries = await tx
          .selectFrom('asset_verification_log')
          .select(['id', 'at', 'event', 'detail', 'actor_email'])
          .where('tenant_id', '=', tenantId)
          .where('asset_id', '=', assetId)
          .orderBy('id', 'desc')
          .limit(50)
          .execute();
        const needsProof = asset.kind === 'domain' && asset.verification_status === 'pending';
        return {
          asset: toDto(asset),
          instructions: needsProof
            ? {
                recordName: recordName(asset.target),
                recordType: 'TXT' as const,
                recordValue: recordValue(asset.verification_token),
              }
            : null,
          log: entries.map((e) => ({
            id: e.id,
            at: iso(e.at)!,
            event: e.event as 'check',
            detail: e.detail,
            actorEmail: e.actor_email,
          })),
        };
      });
    },

    async update(tenantId: string, caller: Caller, assetId: string, body: z.output<typeof updateAssetBodySchema>) {
      return asMember(tenantId, caller, async (tx) => {
        await load(tx, tenantId, assetId);
        await tx
          .updateTable('assets')
          .set({
            ...(body.name !== undefined ? { name: body.name } : {}),
            ...(body.tags !== undefined ? { tags: [...new Set(body.tags)] } : {}),
            ...(body.owner !== undefined ? { owner: body.owner || null } : {}),
            ...(body.notes !== undefined ? { notes: body.notes || null } : {}),
            updated_at: clock.now(),
          })
          .where('id', '=', assetId)
          .execute();
        return { asset: toDto(await load(tx, tenantId, assetId)) };
      });
    },

    async setArchived(tenantId: string, caller: Caller, assetId: string, archived: boolean) {
      return asManager(tenantId, caller, async (tx) => {
        const asset = await load(tx, tenantId, assetId);
        await tx
          .updateTable('assets')
          .set({ archived_at: archived ? clock.now() : null, updated_at: clock.now() })
          .where('id', '=', assetId)
          .execute();
        await log(tx, asset, archived ? 'archived' : 'restored', null, caller);
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action: archived ? 'asset.archived' : 'asset.restored',
            targetType: 'asset',
            targetId: assetId,
          },
          tx,
        );
        await refreshCoverage(tx, tenantId);
        return { asset: toDto(await load(tx, tenantId, assetId)) };
      });
    },

    /** Checks the proof now. The DNS query runs outside any transaction. */
    async verifyNow(tenantId: string, caller: Caller, assetId: string) {
      const asset = await asMember(tenantId, caller, (tx) => load(tx, tenantId, assetId));
      let result: CheckResult;
      if (asset.kind === 'domain') result = await verifier.check(asset.target, asset.verification_token);
      else result = { outcome: 'pending', detail: '' };
      return asMember(tenantId, caller, async (tx) => {
        const fresh = await load(tx, tenantId, assetId);
        if (fresh.kind === 'domain') await applyCheck(tx, fresh, result, caller);
        else await refreshCoverage(tx, tenantId);
        const after = await load(tx, tenantId, assetId);
        if (after.kind !== 'domain') {
          // Only coverage by a proven domain is "verified"; a bypass is never reported as proof.
          const outcome: CheckOutcome =
            after.verified_via === 'covered' || after.verified_via === 'upload' ? 'verified' : 'pending';
          result = {
            outcome,
            detail:
              after.verified_via === 'upload'
                ? 'An uploaded image archive: the tenant supplied the image itself, so ownership holds by construction.'
                : after.verified_via === 'covered' && after.verification_status === 'bypassed'
                  ? `Covered by the bypass of host ${after.covered_target}: no proof is on record; scanning is allowed because a platform super-admin bypassed verification of that host.`
                  : after.verified_via === 'covered'
                    ? `Covered by the verified domain ${after.covered_target}.`
                    : after.verification_status === 'bypassed'
                      ? 'No proof is on record; scanning is allowed because a platform super-admin bypassed verification.'
                      : after.dns_name
                        ? `Register and verify a domain that ${after.dns_name} falls under to cover this asset.`
                        : 'This asset has no DNS name to prove (an IP address or a public registry image); a platform super-admin can bypass verification.',
          };
        }
        return { asset: toDto(after), result };
      });
    },

    /**
     * Registers a container image from an uploaded archive (docker save / OCI tar, optionally
     * gzipped). The archive is its own target (`archive:sha256:<digest>`) and is verified by its
     * upload: the tenant supplied the bytes, and there is no host to scan on anyone's network.
     */
    async createFromArchive(
      tenantId: string,
      caller: Caller,
      q: z.output<typeof archiveUploadQuerySchema>,
      body: Readable,
      declaredLength: number | null,
    ) {
      // Refuse non-members before a byte is stored.
      await asMember(tenantId, caller, async () => undefined);
      const assetId = randomUUID();
      const stored = await storeArchive(tenantId, assetId, body, declaredLength);
      const target = archiveTarget(stored.sha256);
      const exists = () => appError('asset_exists', 'This image archive is already registered.');
      try {
        return await asMember(tenantId, caller, async (tx) => {
          const dup = await tx
            .selectFrom('assets')
            .select('id')
            .where('tenant_id', '=', tenantId)
            .where('kind', '=', 'container_image')
            .where('target', '=', target)
            .executeTakeFirst();
          if (dup)
            throw appError('asset_exists', 'This image archive is already registered.', {
              details: { assetId: dup.id },
            });
          const now = clock.now();
          const row = await tx
            .insertInto('assets')
            .values({
              id: assetId,
              tenant_id: tenantId,
              kind: 'container_image',
              target,
              dns_name: null,
              name: q.name ?? q.fileName,
              tags: [],
              verification_token: randomBytes(16).toString('hex'),
              verification_status: 'verified',
              verified_via: 'upload',
              verified_at: now,
              source: 'archive',
              archive_file_name: q.fileName,
              archive_size: stored.size,
              archive_sha256: stored.sha256,
              archive_format: stored.format,
              archive_storage_key: stored.key,
              archive_uploaded_at: now,
              created_by: caller.userId,
            })
            .returning(['id', 'tenant_id'])
            .executeTakeFirstOrThrow()
            .catch((e: unknown) => {
              if ((e as { code?: string }).code === '23505') throw exists();
              throw e;
            });
          await log(tx, row, 'created', null, caller);
          await log(
            tx,
            row,
            'archive_uploaded',
            describe({ fileName: q.fileName, size: stored.size, sha256: stored.sha256 }),
            caller,
          );
          await audit.record(
            {
              tenantId,
              actorUserId: caller.userId,
              actorEmail: caller.email,
              action: 'asset.created',
              targetType: 'asset',
              targetId: row.id,
              details: { kind: 'container_image', target, source: 'archive', fileName: q.fileName, size: stored.size },
            },
            tx,
          );
          return { asset: toDto(await load(tx, tenantId, row.id)) };
        });
      } catch (e) {
        await stored.store.delete(stored.key).catch(() => undefined);
        throw e;
      }
    },

    /** A new version of an archive-backed image: the target follows the new digest; the old file is deleted. */
    async replaceArchive(
      tenantId: string,
      caller: Caller,
      assetId: string,
      q: z.output<typeof archiveReplaceQuerySchema>,
      body: Readable,
      declaredLength: number | null,
    ) {
      const notArchive = () =>
        appError('conflict', 'This image comes from a registry reference; only images added as archives take uploads.');
      const current = await asMember(tenantId, caller, (tx) => load(tx, tenantId, assetId));
      if (current.source !== 'archive') throw notArchive();
      if (current.archived_at)
        throw appError('conflict', 'This asset is archived; restore it before uploading a new version.');
      const stored = await storeArchive(tenantId, assetId, body, declaredLength);
      const target = archiveTarget(stored.sha256);
      let oldKey: string | null = null;
      let result;
      try {
        result = await asMember(tenantId, caller, async (tx) => {
          const fresh = await load(tx, tenantId, assetId);
          if (fresh.source !== 'archive') throw notArchive();
          const clash = await tx
            .selectFrom('assets')
            .select('id')
            .where('tenant_id', '=', tenantId)
            .where('kind', '=', 'container_image')
            .where('target', '=', target)
            .where('id', '<>', assetId)
            .executeTakeFirst();
          if (clash)
            throw appError('asset_exists', 'Another asset already holds this image archive.', {
              details: { assetId: clash.id },
            });
          const now = clock.now();
          await tx
            .updateTable('assets')
            .set({
              target,
              archive_file_name: q.fileName,
              archive_size: stored.size,
              archive_sha256: stored.sha256,
              archive_format: stored.format,
              archive_storage_key: stored.key,
              archive_uploaded_at: now,
              verified_at: now,
              updated_at: now,
            })
            .where('id', '=', assetId)
            .execute();
          await log(
            tx,
            fresh,
            'archive_replaced',
            `${describe({ fileName: q.fileName, size: stored.size, sha256: stored.sha256 })} (was sha256:${fresh.archive_sha256})`,
            caller,
          );
          await audit.record(
            {
              tenantId,
              actorUserId: caller.userId,
              actorEmail: caller.email,
              action: 'asset.archive_replaced',
              targetType: 'asset',
              targetId: assetId,
              details: { from: fresh.target, to: target, fileName: q.fileName, size: stored.size },
            },
            tx,
          );
          oldKey = fresh.archive_storage_key;
          return { asset: toDto(await load(tx, tenantId, assetId)) };
        });
      } catch (e) {
        await stored.store.delete(stored.key).catch(() => undefined);
        throw e;
      }
      if (oldKey && oldKey !== stored.key) await stored.store.delete(oldKey).catch(() => undefined);
      return result;
    },

    /** The uploaded archive's bytes, streamed from the tenant's storage. */
    async openArchive(tenantId: string, caller: Caller, assetId: string) {
      const asset = await asMember(tenantId, caller, (tx) => load(tx, tenantId, assetId));
      if (asset.source !== 'archive' || !asset.archive_storage_key)
        throw appError('object_not_found', 'This asset has no uploaded archive.');
      const { body, info } = await (await storage.forTenant(tenantId)).get(asset.archive_storage_key);
      return {
        body,
        size: info.size,
        fileName: asset.archive_file_name ?? 'image.tar',
        format: asset.archive_format ?? 'tar',
      };
    },

    /** Super-admin: allow scanning without proof. Written to the platform audit log and the verification log. */
    async bypass(assetId: string, actor: Caller, reason: string, revoke: boolean) {
      return withService(db, async (tx) => {
        const asset = await load(tx, null, assetId);
        const now = clock.now();
        if (asset.source === 'archive')
          throw appError(
            'conflict',
            'An uploaded image archive is verified by its upload; there is nothing to bypass.',
          );
        if (asset.verification_status === 'bypassed' && asset.verified_via === 'covered') {
          throw appError(
            'conflict',
            `This web application is covered by the bypass of host ${asset.covered_target}; ${revoke ? 'revoke that bypass, or archive the asset, to stop its scans' : 'it needs no bypass of its own'}.`,
          );
        }
        if (revoke) {
          if (asset.verification_status !== 'bypassed') throw appError('conflict', 'This asset is not bypassed.');
          await tx
            .updateTable('assets')
            .set({
              verification_status: 'pending',
              verified_via: null,
              bypass_reason: null,
              bypassed_by: null,
              bypassed_by_email: null,
              bypassed_at: null,
              updated_at: now,
            })
            .where('id', '=', assetId)
            .execute();
        } else {
          if (asset.verification_status === 'bypassed') throw appError('conflict', 'This asset is already bypassed.');
          await tx
            .updateTable('assets')
            .set({
              verification_status: 'bypassed',
              verified_via: 'bypass',
              covered_by: null,
              bypass_reason: reason,
              bypassed_by: actor.userId,
              bypassed_by_email: actor.email,
              bypassed_at: now,
              updated_at: now,
            })
            .where('id', '=', assetId)
            .execute();
        }
        await log(tx, asset, revoke ? 'bypass_revoked' : 'bypassed', reason, actor);
        await audit.record(
          {
            tenantId: asset.tenant_id,
            actorUserId: actor.userId,
            actorEmail: actor.email,
            action: revoke ? 'asset.bypass_revoked' : 'asset.bypassed',
            targetType: 'asset',
            targetId: assetId,
            details: { reason, target: asset.target, kind: asset.kind },
          },
          tx,
        );
        await refreshCoverage(tx, asset.tenant_id);
        return { asset: toDto(await load(tx, asset.tenant_id, assetId)) };
      });
    },

    /**
     * Before a scan of `assetId` is leased: re-checks the DNS proof it stands on (its own record,
     * or that of the domain covering it) when that check is older than `maxAgeMs`, and says
     * whether the asset may still be scanned. Bypassed and uploaded assets stand on no record.
     * Runs as the service role; the lease path calls it before admission.
     */
    async recheckForLease(
      assetId: string,
      maxAgeMs = LEASE_RECHECK_AFTER_MS,
    ): Promise<{ scannable: boolean; checked: boolean; status: Row['verification_status'] }> {
      const asset = await withService(db, (tx) =>
        tx.selectFrom('assets').selectAll().where('id', '=', assetId).executeTakeFirst(),
      );
      if (!asset || asset.archived_at)
        return { scannable: false, checked: false, status: asset?.verification_status ?? 'pending' };
      // A host's bypass covering a web application stands on no record either.
      const proofId =
        asset.verified_via === 'txt'
          ? asset.id
          : asset.verified_via === 'covered' && asset.verification_status === 'verified'
            ? asset.covered_by
            : null;
      let checked = false;
      if (proofId) {
        const proof = await withService(db, (tx) =>
          tx.selectFrom('assets').selectAll().where('id', '=', proofId).executeTakeFirst(),
        );
        if (
          proof &&
          (!proof.last_checked_at || clock.now().getTime() - new Date(proof.last_checked_at).getTime() > maxAgeMs)
        ) {
          const result = await verifier.check(proof.target, proof.verification_token);
          await withService(db, async (tx) => {
            const fresh = await tx.selectFrom('assets').selectAll().where('id', '=', proof.id).executeTakeFirst();
            if (fresh) await applyCheck(tx, fresh, result, null);
          });
          checked = true;
        }
      }
      const now = await withService(db, (tx) =>
        tx
          .selectFrom('assets')
          .select(['verification_status', 'archived_at'])
          .where('id', '=', assetId)
          .executeTakeFirst(),
      );
      const status = now?.verification_status ?? 'pending';
      return {
        scannable: !!now && !now.archived_at && (status === 'verified' || status === 'bypassed'),
        checked,
        status,
      };
    },

    /** Daily re-check of domain proofs (also run before a scan is leased). Returns how many it checked. */
    async recheckDue(limit = 50): Promise<number> {
      const due = await withService(db, (tx) =>
        tx
          .selectFrom('assets')
          .selectAll()
          .where('kind', '=', 'domain')
          .where('archived_at', 'is', null)
          .where('verification_status', '!=', 'bypassed')
          .where((eb) =>
            eb.or([
              eb('last_checked_at', 'is', null),
              eb('last_checked_at', '<', new Date(clock.now().getTime() - RECHECK_AFTER_MS)),
            ]),
          )
          .orderBy('last_checked_at', 'asc')
          .limit(limit)
          .execute(),
      );
      for (const asset of due) {
        const result = await verifier.check(asset.target, asset.verification_token);
        await withService(db, async (tx) => {
          const fresh = await tx.selectFrom('assets').selectAll().where('id', '=', asset.id).executeTakeFirst();
          if (fresh) await applyCheck(tx, fresh, result, null);
        });
      }
      return due.length;
    },
  };
}

export type AssetsService = ReturnType<typeof createAssetsService>;
