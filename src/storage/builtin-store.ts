// Built-in storage: files under DATA_DIR/storage. A put streams into a temporary file (same file
// system) while it is counted and hashed, and is renamed into place only when every check passed,
// so readers never see a partial object and a refused upload leaves nothing behind. One node only:
// deployments with several replicas configure S3 (docs/operations.md).
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { appError } from '../lib/errors.ts';
import { Meter } from './meter.ts';
import { assertObjectKey, assertTenantId } from './object-keys.ts';
import type { ObjectInfo, ObjectStore } from './storage-types.ts';

interface Meta {
  size: number;
  contentType: string | null;
  sha256: string;
}

/**
 * @param root DATA_DIR/storage
 * @param scope the store's directory under root/objects: `platform` or `tenants/<tenant id>`
 */
export function createBuiltinStore(root: string, scope: string): ObjectStore {
  const base = resolve(root, 'objects', scope);
  const tmpDir = resolve(root, 'tmp');

  function pathOf(key: string): string {
    assertObjectKey(key);
    const p = resolve(base, key);
    // The key rule already forbids it; this keeps it true if the rule ever loosens.
    if (!p.startsWith(base + sep)) throw appError('invalid_object_key', 'The object key leaves its storage area.');
    return p;
  }
  // Metadata sits next to the object under a dot-name, which no valid key can reach.
  const metaOf = (p: string) => join(dirname(p), `.${basename(p)}.meta.json`);

  async function readMeta(p: string, size: number): Promise<Meta | null> {
    try {
      const meta = JSON.parse(await readFile(metaOf(p), 'utf8')) as Meta;
      return meta.size === size ? meta : null;
    } catch {
      return null;
    }
  }

  async function openObject(key: string) {
    const p = pathOf(key);
    try {
      const fh = await open(p, 'r');
      const st = await fh.stat();
      if (!st.isFile()) {
        await fh.close();
        return null;
      }
      return { p, fh, size: st.size };
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
  }

  return {
    kind: 'builtin',

    async put(key, body, opts) {
      const p = pathOf(key);
      const meter = new Meter(opts);
      await mkdir(tmpDir, { recursive: true });
      const tmp = join(tmpDir, randomUUID());
      try {
        await pipeline(body, meter, createWriteStream(tmp, { flags: 'wx', mode: 0o600 }));
        const result = meter.result();
        await mkdir(dirname(p), { recursive: true });
        const meta: Meta = { size: result.size, contentType: opts.contentType ?? null, sha256: result.sha256 };
        await writeFile(`${tmp}.meta`, JSON.stringify(meta), { mode: 0o600 });
        await rename(tmp, p);
        await rename(`${tmp}.meta`, metaOf(p));
        return result;
      } catch (e) {
        body.destroy();
        await Promise.all([rm(tmp, { force: true }), rm(`${tmp}.meta`, { force: true })]);
        if ((e as NodeJS.ErrnoException).code === 'ENOTDIR' || (e as NodeJS.ErrnoException).code === 'EISDIR')
          throw appError('invalid_object_key', 'The object key collides with another object’s path.');
        throw e;
      }
    },

    async get(key) {
      const o = await openObject(key);
      if (!o) throw appError('object_not_found', 'No such object.');
      const meta = await readMeta(o.p, o.size);
      return { body: o.fh.createReadStream(), info: { size: o.size, contentType: meta?.contentType ?? null } };
    },

    async head(key): Promise<ObjectInfo | null> {
      const o = await openObject(key);
      if (!o) return null;
      await o.fh.close();
      const meta = await readMeta(o.p, o.size);
      return { size: o.size, contentType: meta?.contentType ?? null };
    },

    async delete(key) {
      const p = pathOf(key);
      await rm(p, { force: true });
      await rm(metaOf(p), { force: true });
      // Prune directories the delete emptied, up to the store's base.
      for (let dir = dirname(p); dir.startsWith(base + sep); dir = dirname(dir)) {
        try {
          await rmdir(dir);
        } catch {
          break;
        }
      }
    },
  };
}

export const tenantScope = (tenantId: string): string => {
  assertTenantId(tenantId);
  return `tenants/${tenantId.toLowerCase()}`;
};

const isMissing = (e: unknown) => ['ENOENT', 'ENOTDIR'].includes((e as NodeJS.ErrnoException).code ?? '');
