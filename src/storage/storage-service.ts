// Where a tenant's objects live, and the tenant's bucket settings. forTenant() answers the
// tenant's own bucket when one is configured and enabled, else built-in storage; reads fall back
// to the other place, so objects written before a switch stay reachable (docs/decisions.md).
import { randomBytes, randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import type { Kysely, Selectable } from 'kysely';
import type { AuditService } from '../audit/index.ts';
import type { DB, TenantStorageSettingsTable } from '../db/schema.ts';
import { type Caller, isTenantAdmin, type Tx, withService, tenantAccess } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import type { SecretBox } from '../lib/crypto.ts';
import { AppError, appError } from '../lib/errors.ts';
import { createBuiltinStore, tenantScope } from './builtin-store.ts';
import { createS3Client, createS3Store, type S3ObjectStore, type S3Settings, type S3StoreOptions } from './s3-store.ts';
import type { EgressPolicy } from '../lib/egress.ts';
import type { S3SettingsBody, StorageSettingsDto, storageTestBodySchema } from './storage-schemas.ts';
import type { ObjectStore, StorageService } from './storage-types.ts';
import type { z } from 'zod';

type Row = Selectable<TenantStorageSettingsTable>;
const iso = (d: Date | string) => new Date(d).toISOString();

export interface StorageDeps {
  db: Kysely<DB>;
  /** DATA_DIR; built-in objects live in DATA_DIR/storage. */
  dataDir: string;
  secretBox: SecretBox;
  audit: AuditService;
  clock: Clock;
  s3Options?: S3StoreOptions;
  /**
   * Platform storage in an S3-compatible bucket instead of DATA_DIR/storage (STORAGE_S3_*): what
   * "built-in storage" means then, for every tenant without a bucket of its own, so that every
   * replica reads what another stored. `prefix` is the root inside the bucket.
   */
  platformS3?: S3Settings;
  /** Test connection: bounded so a silent endpoint answers storage_unreachable quickly. */
  probeOptions?: S3StoreOptions;
  /** The egress policy of tenants' buckets (the platform bucket is the operator's own, unrestricted). */
  egress?: EgressPolicy;
}

export type AppStorage = StorageService & {
  /** Closes cached bucket clients. */
  close(): void;
};

export function createStorage(deps: StorageDeps) {
  const { db, secretBox, audit, clock } = deps;
  const root = resolve(deps.dataDir, 'storage');
  const egress = deps.egress ? { egress: deps.egress } : {};
  // Built-in storage: DATA_DIR/storage, or one client on the platform bucket per scope (a tenant's
  // objects under <prefix>/tenants/<id>, the platform's under <prefix>/platform).
  // One client (one socket pool) for the platform bucket; a store per scope is only a key prefix.
  const platformClient = deps.platformS3 ? createS3Client(deps.platformS3, deps.s3Options) : null;
  const builtinStore = (scope: string): ObjectStore => {
    const s3 = deps.platformS3;
    if (!s3 || !platformClient) return createBuiltinStore(root, scope);
    return createS3Store(
      { ...s3, prefix: s3.prefix ? `${s3.prefix}/${scope}` : scope },
      { ...deps.s3Options, client: platformClient },
    );
  };
  const platform = builtinStore('platform');
  const cache = new Map<string, { stamp: string; store: S3ObjectStore }>();

  function openKeys(row: Row): { accessKeyId: string; secretAccessKey: string } {
    try {
      return {
        accessKeyId: secretBox.open(row.access_key_id_sealed),
        secretAccessKey: secretBox.open(row.secret_access_key_sealed),
      };
    } catch (e) {
      throw appError(
        'storage_auth_failed',
        'The stored bucket keys cannot be decrypted (was APP_ENCRYPTION_KEY changed?). Enter the keys again under Settings → Storage.',
        { cause: e },
      );
    }
  }
  const settingsOf = (row: Row): S3Settings => ({
    endpoint: row.endpoint,
    region: row.region,
    bucket: row.bucket,
    pathStyle: row.path_style,
    prefix: row.prefix,
    ...openKeys(row),
  });

  function bucketStore(row: Row): S3ObjectStore {
    const stamp = `${iso(row.updated_at)}|${row.access_key_id_sealed}|${row.secret_access_key_sealed}`;
    const hit = cache.get(row.tenant_id);
    if (hit?.stamp === stamp) return hit.store;
    // A replaced client is left to finish what it is doing; its idle sockets close on their own.
    const store = createS3Store(settingsOf(row), { ...deps.s3Options, ...egress });
    cache.set(row.tenant_id, { stamp, store });
    return store;
  }

  const storage: AppStorage = {
    builtin: () => platform,
    builtinFor: (tenantId) => builtinStore(tenantScope(tenantId)),

    async forTenant(tenantId) {
      const builtin = builtinStore(tenantScope(tenantId));
      const row = await withService(db, (tx) =>
        tx.selectFrom('tenant_storage_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst(),
      );
      if (!row) return builtin;
      let bucket: ObjectStore;
      try {
        bucket = bucketStore(row);
      } catch (e) {
        // Keys sealed under an earlier APP_ENCRYPTION_KEY: a switched-off bucket must not take
        // built-in storage down with it; a switched-on one is an error the tenant must fix.
        if (!row.enabled) return builtin;
        throw e;
      }
      return row.enabled ? withFallback(bucket, builtin) : withFallback(builtin, bucket);
    },

    close() {
      for (const { store } of cache.values()) store.destroy();
      cache.clear();
      platformClient?.destroy();
    },
  };

  const { asMember, asManager } = tenantAccess(db);

  const readRow = (tx: Tx, tenantId: string) =>
    tx.selectFrom('tenant_storage_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();

  function toDto(row: Row | undefined, canEdit: boolean): StorageSettingsDto {
    if (!row) return { active: 'builtin', s3: null, canEdit };
    return {
      active: row.enabled ? 's3' : 'builtin',
      s3: {
        endpoint: row.endpoint,
        region: row.region,
        bucket: row.bucket,
        pathStyle: row.path_style,
        prefix: row.prefix,
        enabled: row.enabled,
        hasAccessKeyId: row.access_key_id_sealed !== '',
        hasSecretAccessKey: row.secret_access_key_sealed !== '',
        lastTest: row.last_tested_at
          ? {
              at: iso(row.last_tested_at),
              ok: row.last_test_ok === true,
              error: row.last_test_error,
              message: row.last_test_message ?? '',
            }
          : null,
        updatedAt: iso(row.updated_at),
      },
      canEdit,
    };
  }

  const publicFields = (r: {
    endpoint: string;
    region: string;
    bucket: string;
    pathStyle: boolean;
    prefix: string;
    enabled: boolean;
  }) => ({
    endpoint: r.endpoint,
    region: r.region,
    bucket: r.bucket,
    pathStyle: r.pathStyle,
    prefix: r.prefix,
    enabled: r.enabled,
  });

  /** Writes, reads back and deletes a small probe object. Throws the storage error it meets. */
  async function probe(settings: S3Settings): Promise<number> {
    const store = createS3Store(settings, {
      ...(deps.probeOptions ?? { maxAttempts: 1, connectionTimeoutMs: 5_000, requestTimeoutMs: 15_000 }),
      ...egress,
    });
    const started = performance.now();
    try {
      const key = `rampart-connection-test/${randomUUID()}.txt`;
      const payload = Buffer.from(`Rampart connection test ${randomBytes(8).toString('hex')}\n`);
      await store.put(key, Readable.from([payload]), { maxBytes: payload.length, contentType: 'text/plain' });
      const { body } = await store.get(key);
      const chunks: Buffer[] = [];
      for await (const c of body as AsyncIterable<Buffer>) chunks.push(c);
      await store.delete(key);
      if (!Buffer.concat(chunks).equals(payload))
        throw appError('storage_error', 'The probe object read back differs from what was written.');
      return Math.round(performance.now() - started);
    } finally {
      store.destroy();
    }
  }

  const settings = {
    get(tenantId: string, caller: Caller): Promise<StorageSettingsDto> {
      return asMember(tenantId, caller, async (tx, role) => toDto(await readRow(tx, tenantId), isTenantAdmin(role)));
    },

    put(tenantId: string, caller: Caller, body: S3SettingsBody): Promise<StorageSettingsDto> {
      return asManager(tenantId, caller, async (tx) => {
        const before = await readRow(tx, tenantId);
        const missing = [
          !body.accessKeyId && !before ? 'accessKeyId' : null,
          !body.secretAccessKey && !before ? 'secretAccessKey' : null,
        ].filter((f): f is string => f !== null);
        if (missing.length)
          throw new AppError('validation_failed', 'The request is not valid.', {
            details: missing.map((f) => ({ path: `body.${f}`, message: 'Required when no keys are stored yet.' })),
          });
        const now = clock.now();
        const values = {
          endpoint: body.endpoint,
          region: body.region,
          bucket: body.bucket,
          path_style: body.pathStyle,
          prefix: body.prefix,
          enabled: body.enabled,
          ...(body.accessKeyId ? { access_key_id_sealed: secretBox.seal(body.accessKeyId) } : {}),
          ...(body.secretAccessKey ? { secret_access_key_sealed: secretBox.seal(body.secretAccessKey) } : {}),
          updated_at: now,
          updated_by: caller.userId,
        };
        const where = before
          ? {
              endpoint: before.endpoint,
              region: before.region,
              bucket: before.bucket,
              path_style: before.path_style,
              prefix: before.prefix,
            }
          : null;
        // A test result describes the settings it ran against; a change of where or who clears it.
        const changedTarget =
          !where ||
          where.endpoint !== body.endpoint ||
          where.region !== body.region ||
          where.bucket !== body.bucket ||
          where.path_style !== body.pathStyle ||
          where.prefix !== body.prefix ||
          !!body.accessKeyId ||
          !!body.secretAccessKey;
        const reset = changedTarget
          ? { last_tested_at: null, last_test_ok: null, last_test_error: null, last_test_message: null }
          : {};
        if (before)
          await tx
            .updateTable('tenant_storage_settings')
            .set({ ...values, ...reset })
            .where('tenant_id', '=', tenantId)
            .execute();
        else
          await tx
            .insertInto('tenant_storage_settings')
            .values({
              tenant_id: tenantId,
              ...values,
              access_key_id_sealed: values.access_key_id_sealed!,
              secret_access_key_sealed: values.secret_access_key_sealed!,
            })
            .execute();
        await audit.record(
          {
            tenantId,
            actorUserId: caller.userId,
            actorEmail: caller.email,
            action: 'storage.settings_updated',
            targetType: 'tenant',
            targetId: tenantId,
            details: {
              from: before ? publicFields({ ...before, pathStyle: before.path_style }) : null,
              to: publicFields(body),
              accessKeyIdChanged: !!body.accessKeyId,
              secretAccessKeyChanged: !!body.secretAccessKey,
            },
          },
          tx,
        );
        return toDto(await readRow(tx, tenantId), true);
      });
    },

    /** Back to built-in storage. Objects already in the bucket stay there (they are the tenant's). */
    remove(tenantId: string, caller: Caller): Promise<StorageSettingsDto> {
      return asManager(tenantId, caller, async (tx) => {
        const before = await tx
          .deleteFrom('tenant_storage_settings')
          .where('tenant_id', '=', tenantId)
          .returningAll()
          .executeTakeFirst();
        if (before) {
          await audit.record(
            {
              tenantId,
              actorUserId: caller.userId,
              actorEmail: caller.email,
              action: 'storage.settings_removed',
              targetType: 'tenant',
              targetId: tenantId,
              details: { from: publicFields({ ...before, pathStyle: before.path_style }) },
            },
            tx,
          );
        }
        const cached = cache.get(tenantId);
        cache.delete(tenantId);
        cached?.store.destroy();
        return toDto(undefined, true);
      });
    },

    /**
     * Test connection against the saved settings (no body; the result is recorded) or a candidate
     * (keys it omits come from the saved settings). Answers ok, or throws the storage_* error.
     */
    async test(tenantId: string, caller: Caller, candidate: z.output<typeof storageTestBodySchema>) {
      const saved = await asManager(tenantId, caller, (tx) => readRow(tx, tenantId));
      if (!candidate && !saved)
        throw appError('storage_not_configured', 'No bucket is configured; enter its settings first.');
      let target: S3Settings;
      if (candidate) {
        const keys = saved && (!candidate.accessKeyId || !candidate.secretAccessKey) ? openKeys(saved) : null;
        const accessKeyId = candidate.accessKeyId ?? keys?.accessKeyId;
        const secretAccessKey = candidate.secretAccessKey ?? keys?.secretAccessKey;
        if (!accessKeyId || !secretAccessKey)
          throw new AppError('validation_failed', 'The request is not valid.', {
            details: [
              {
                path: accessKeyId ? 'body.secretAccessKey' : 'body.accessKeyId',
                message: 'Required when no keys are stored yet.',
              },
            ],
          });
        target = {
          endpoint: candidate.endpoint,
          region: candidate.region,
          bucket: candidate.bucket,
          pathStyle: candidate.pathStyle,
          prefix: candidate.prefix,
          accessKeyId,
          secretAccessKey,
        };
      } else {
        target = settingsOf(saved!);
      }
      let latencyMs = 0;
      let failure: AppError | null = null;
      try {
        latencyMs = await probe(target);
      } catch (e) {
        if (!(e instanceof AppError)) throw e;
        failure = e;
      }
      const message = failure ? failure.message : `Wrote, read back and deleted a probe object in ${target.bucket}.`;
      if (!candidate) {
        await asManager(tenantId, caller, (tx) =>
          tx
            .updateTable('tenant_storage_settings')
            .set({
              last_tested_at: clock.now(),
              last_test_ok: !failure,
              last_test_error: failure?.code ?? null,
              last_test_message: message,
            })
            .where('tenant_id', '=', tenantId)
            .execute(),
        );
      }
      if (failure) throw failure;
      return { ok: true as const, message, latencyMs, tested: candidate ? ('candidate' as const) : ('saved' as const) };
    },
  };

  return { storage, settings };
}

export type StorageSettingsService = ReturnType<typeof createStorage>['settings'];

/**
 * Writes go to `primary`; a read that misses there tries `secondary`, whose failures count as a
 * miss (a disabled or broken bucket must not break the tenant's built-in reads). Deletes reach both.
 */
function withFallback(primary: ObjectStore, secondary: ObjectStore): ObjectStore {
  const quiet = <T>(p: Promise<T>, fallback: T) => p.catch(() => fallback);
  return {
    kind: primary.kind,
    put: (key, body, opts) => primary.put(key, body, opts),
    async get(key) {
      try {
        return await primary.get(key);
      } catch (e) {
        if (!(e instanceof AppError && e.code === 'object_not_found')) throw e;
        const alt = await quiet(secondary.get(key), null);
        if (!alt) throw e;
        return alt;
      }
    },
    async head(key) {
      return (await primary.head(key)) ?? (await quiet(secondary.head(key), null));
    },
    async delete(key) {
      await primary.delete(key);
      await quiet(secondary.delete(key), undefined);
    },
    ...(primary.presignPut ? { presignPut: primary.presignPut.bind(primary) } : {}),
  };
}
