// Object keys are relative paths of safe segments, the same rule for both stores: a key can then
// never climb out of its tenant's directory (built-in) or prefix (S3), whatever a caller builds it from.
import { appError } from '../lib/errors.ts';

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$/;
export const MAX_KEY_LENGTH = 1024;

/** Throws `invalid_object_key` unless `key` is `seg/seg/...` of [A-Za-z0-9._-], no segment starting with a dot. */
export function assertObjectKey(key: string): void {
  const ok = key.length > 0 && key.length <= MAX_KEY_LENGTH && key.split('/').every((s) => SEGMENT.test(s));
  if (!ok)
    throw appError(
      'invalid_object_key',
      'Object keys are relative paths of letters, digits, ".", "_" and "-" (no segment may start with a dot).',
    );
}

/** Tenant ids become path segments and key prefixes; they are UUIDs, checked all the same. */
export function assertTenantId(tenantId: string): void {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(tenantId))
    throw new Error('tenant id must be a UUID');
}
