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

export const templatesQuery = (tenantId: string) => queryOptions({ queryKey: templateKeys.list(tenantId), queryFn: ({ signal }) => api<TemplateList>(base(tenantId), { signal }) });

export const templateQuery = (tenantId: string, id: string) =>
  queryOptions({ queryKey: templateKeys.detail(tenantId, id), queryFn: ({ signal }) => api<{ template: ScanTemplateDetail }>(one(tenantId, id), { signal }) });

export function createTemplate(tenantId: string, yaml: string) {
  return api<{ template: ScanTemplateDetail }>(base(tenantId), { method: 'POST', body: { yaml } });
}

export function replaceTemplate(tenantId: string, id: string, yaml: string) {
  return api<{ template: ScanTemplateDetail }>(one(tenantId, id), { method: 'PUT', body: { yaml } });
}

export function deleteTemplate(tenantId: string, id: string) {
  return api<null>(one(tenantId, id), { method: 'DELETE' });
}
