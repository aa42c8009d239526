// The one interface every stored object goes through: built-in storage under DATA_DIR and
// tenant-owned S3-compatible buckets. Bodies stream; nothing is buffered whole in memory.
import type { Readable } from 'node:stream';

export interface PutResult {
  size: number;
  /** lowercase hex SHA-256 of the bytes written */
  sha256: string;
}

export interface ObjectInfo {
  size: number;
  contentType: string | null;
}

export interface ObjectStore {
  readonly kind: 'builtin' | 's3';
  /**
   * Streams `body` to `key`. Aborts (and leaves nothing behind) with AppError `payload_too_large`
   * once more than `maxBytes` have arrived. When `expected` is given, a size or hash mismatch
   * aborts with AppError `upload_mismatch` and nothing is kept.
   */
  put(
    key: string,
    body: Readable,
    opts: { maxBytes: number; contentType?: string; expected?: { size?: number; sha256?: string } },
  ): Promise<PutResult>;
  /** Streams the object; AppError `object_not_found` when absent. */
  get(key: string): Promise<{ body: Readable; info: ObjectInfo }>;
  /** null when absent */
  head(key: string): Promise<ObjectInfo | null>;
  /** Idempotent: deleting an absent key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * S3 stores only: a URL that accepts one PUT of exactly `size` bytes with that SHA-256, valid
   * for at most 15 minutes. The uploader must send every header in `headers`. Built-in storage has
   * none; the workers issue serves its own HMAC-signed URL for it.
   */
  presignPut?(
    key: string,
    opts: { size: number; sha256: string; expiresInSeconds: number; contentType?: string },
  ): Promise<PresignedPut>;
}

export interface PresignedPut {
  url: string;
  method: 'PUT';
  /** Headers the PUT must carry with exactly these values (they are signed). */
  headers: Record<string, string>;
  expiresAt: Date;
}

/** Where a tenant's objects go: its own bucket when configured and enabled, else built-in storage. */
export interface StorageService {
  /**
   * Reads the tenant's settings with its own short query: call it outside any open transaction
   * (PGlite has one connection, so a second transaction would wait for the first forever).
   */
  forTenant(tenantId: string): Promise<ObjectStore>;
  /** Built-in storage (DATA_DIR), for platform-owned objects. */
  builtin(): ObjectStore;
  /** A tenant's part of built-in storage, whatever its bucket settings (objects known to be there). */
  builtinFor(tenantId: string): ObjectStore;
}
