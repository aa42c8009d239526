// Queries and mutations of tenant scan templates (/api/v1/tenants/:tenantId/scan-templates/...).
// Types come from the server's zod schemas (type-only imports: nothing of zod enters the bundle).
import { queryOptions } from '@tanstack/react-query';
import type { z } from 'zod';
import type { templateDetailSchema, templateListSchema } from '../../templates/templates-schemas.ts';
import { api } from './api.ts';

export type TemplateList = z.infer<typeof templateListSchema>;
export type ScanTemplate = TemplateList['templates'][number];
export type BuiltinTemplate = TemplateList['builtin'][number];
export type ScanTemplateDetail = z.infer<typeof templateDetailSchema>['template'];

export const templateKeys = {
  all: (tenantId: string) => ['tenant', tenantId, 'scan-templates'] as const,
  list: (tenantId: string) => ['tenant', tenantId, 'scan-templates', 'list'] as const,
  detail: (tenantId: string, id: string) => ['tenant', tenantId, 'scan-templates', 'detail', id] as const,
};

const base = (tenantId: string) => `/api/v1/tenants/${encodeURIComponent(tenantId)}/scan-templates`;
const one = (tenantId: string, id: string) => `${base(tenantId)}/${encodeURIComponent(id)}`;

export const templatesQuery = (tenantId: string) =>
  queryOptions({
    queryKey: templateKeys.list(tenantId),
    queryFn: ({ signal }) => api<TemplateList>(base(tenantId), { signal }),
  });

export const templateQuery = (tenantId: string, id: string) =>
  queryOptions({
    queryKey: templateKeys.detail(tenantId, id),
    queryFn: ({ signal }) => api<{ template: ScanTemplateDetail }>(one(tenantId, id), { signal }),
  });

/** Payload files by the path the template names them (helpers/wordlists/users.txt) → text. */
export type PayloadFiles = Record<string, string>;

export function createTemplate(tenantId: string, yaml: string, payloadFiles?: PayloadFiles) {
  return api<{ template: ScanTemplateDetail }>(base(tenantId), {
    method: 'POST',
    body: { yaml, ...(payloadFiles ? { payloadFiles } : {}) },
  });
}

/** Without payloadFiles the stored files stay. */
export function replaceTemplate(tenantId: string, id: string, yaml: string, payloadFiles?: PayloadFiles) {
  return api<{ template: ScanTemplateDetail }>(one(tenantId, id), {
    method: 'PUT',
    body: { yaml, ...(payloadFiles ? { payloadFiles } : {}) },
  });
}

/**
 * The path under which the template names a picked file: the `payloads:` value ending in the
 * file's name (browsers give names, not folders); the bare name when the template names none.
 */
export function payloadPathFor(yaml: string, fileName: string): string {
  for (const m of yaml.matchAll(/^\s+[\w-]+:\s*["']?([\w./-]+)["']?\s*$/gm)) {
    const p = m[1]!;
    if (p === fileName || p.endsWith(`/${fileName}`)) return p;
  }
  return fileName;
}

export function deleteTemplate(tenantId: string, id: string) {
  return api<null>(one(tenantId, id), { method: 'DELETE' });
}
