// The tenant's storage settings (/api/v1/tenants/:tenantId/storage): built-in storage or the
// tenant's own S3-compatible bucket. Keys are write-only: the server answers presence booleans.
import { queryOptions } from '@tanstack/react-query';
import type { z } from 'zod';
import type {
  s3SettingsBodySchema,
  storageSettingsSchema,
  storageTestResponseSchema,
} from '../../storage/storage-schemas.ts';
import { api } from './api.ts';

export type StorageSettings = z.infer<typeof storageSettingsSchema>;
export type S3SettingsBody = z.input<typeof s3SettingsBodySchema>;
export type StorageTestResult = z.infer<typeof storageTestResponseSchema>;

export const storageKeys = { settings: (tenantId: string) => ['tenant', tenantId, 'storage'] as const };

const base = (tenantId: string) => `/api/v1/tenants/${encodeURIComponent(tenantId)}/storage`;

export const storageQuery = (tenantId: string) =>
  queryOptions({
    queryKey: storageKeys.settings(tenantId),
    queryFn: ({ signal }) => api<StorageSettings>(base(tenantId), { signal }),
  });

export function saveStorage(tenantId: string, body: S3SettingsBody) {
  return api<StorageSettings>(base(tenantId), { method: 'PUT', body });
}

/** Back to built-in storage. */
export function removeStorage(tenantId: string) {
  return api<StorageSettings>(base(tenantId), { method: 'DELETE' });
}

/** Tests the saved settings (no body) or the form's candidate settings. */
export function testStorage(tenantId: string, candidate?: Omit<S3SettingsBody, 'enabled'>) {
  return api<StorageTestResult>(`${base(tenantId)}/test`, {
    method: 'POST',
    ...(candidate ? { body: candidate } : {}),
  });
}
