// Queries and mutations of the frameworks API (/api/v1/tenants/:tenantId/frameworks/...) and the
// evidence files (/api/v1/tenants/:tenantId/evidence/:id). Uploads go as multipart/form-data with
// the fields first and the file last, so the server checks them before storing a byte.
import { queryOptions } from '@tanstack/react-query';
import type { z } from 'zod';
import type {
  controlDetailSchema,
  controlRowSchema,
  controlStatusSchema,
  evidenceResponseSchema,
  evidenceSchema,
  frameworkDetailSchema,
  frameworkIdSchema,
  frameworkListSchema,
  listControlsQuerySchema,
  mappedFindingSchema,
} from '../../compliance/compliance-schemas.ts';
import { api, ApiError, defaultMessageFor, fetchMe } from './api.ts';
import { ME_KEY, queryClient } from './query-client.ts';
import type { Me } from './types.ts';

export type FrameworkId = z.infer<typeof frameworkIdSchema>;
export type ControlStatus = z.infer<typeof controlStatusSchema>;
export type FrameworkList = z.infer<typeof frameworkListSchema>;
export type FrameworkSummaryItem = FrameworkList['frameworks'][number];
export type FrameworkDetail = z.infer<typeof frameworkDetailSchema>;
export type ControlRow = z.infer<typeof controlRowSchema>;
export type ControlDetail = z.infer<typeof controlDetailSchema>;
export type Evidence = z.infer<typeof evidenceSchema>;
export type MappedFinding = z.infer<typeof mappedFindingSchema>;
export type ControlFilters = z.input<typeof listControlsQuerySchema>;

export const FRAMEWORK_IDS: readonly FrameworkId[] = ['soc2', 'gdpr', 'iso27001', 'nist-csf', 'cis-v8'];
export const isFrameworkId = (v: unknown): v is FrameworkId =>
  typeof v === 'string' && (FRAMEWORK_IDS as readonly string[]).includes(v);

export const complianceKeys = {
  all: (tenantId: string) => ['tenant', tenantId, 'compliance'] as const,
  frameworks: (tenantId: string) => ['tenant', tenantId, 'compliance', 'frameworks'] as const,
  framework: (tenantId: string, framework: string, filters: ControlFilters) =>
    ['tenant', tenantId, 'compliance', 'framework', framework, filters] as const,
  control: (tenantId: string, framework: string, controlId: string) =>
    ['tenant', tenantId, 'compliance', 'control', framework, controlId] as const,
};

const base = (tenantId: string) => `/api/v1/tenants/${encodeURIComponent(tenantId)}/frameworks`;
const controlPath = (tenantId: string, framework: string, controlId: string) =>
  `${base(tenantId)}/${encodeURIComponent(framework)}/controls/${encodeURIComponent(controlId)}`;

export const frameworksQuery = (tenantId: string) =>
  queryOptions({
    queryKey: complianceKeys.frameworks(tenantId),
    queryFn: ({ signal }) => api<FrameworkList>(base(tenantId), { signal }),
  });

export const frameworkQuery = (tenantId: string, framework: string, filters: ControlFilters) =>
  queryOptions({
    queryKey: complianceKeys.framework(tenantId, framework, filters),
    queryFn: ({ signal }) =>
      api<FrameworkDetail>(`${base(tenantId)}/${encodeURIComponent(framework)}`, {
        query: { q: filters.q, status: filters.status, group: filters.group },
        signal,
      }),
    placeholderData: (previous) => previous,
  });

export const controlQuery = (tenantId: string, framework: string, controlId: string) =>
  queryOptions({
    queryKey: complianceKeys.control(tenantId, framework, controlId),
    queryFn: ({ signal }) => api<ControlDetail>(controlPath(tenantId, framework, controlId), { signal }),
  });

export const evidenceDownloadUrl = (tenantId: string, evidenceId: string) =>
  `/api/v1/tenants/${encodeURIComponent(tenantId)}/evidence/${encodeURIComponent(evidenceId)}/download`;

export function deleteEvidence(tenantId: string, evidenceId: string) {
  return api<void>(`/api/v1/tenants/${encodeURIComponent(tenantId)}/evidence/${encodeURIComponent(evidenceId)}`, {
    method: 'DELETE',
  });
}

export interface EvidenceUploadInput {
  title: string;
  description: string;
  effectiveDate: string;
  expiresAt: string;
  file: File;
}

async function postForm(path: string, form: FormData, refreshCsrf: boolean): Promise<Response> {
  let me = queryClient.getQueryData<Me | null>(ME_KEY);
  if (refreshCsrf || !me) me = await queryClient.fetchQuery({ queryKey: ME_KEY, queryFn: fetchMe, staleTime: 0 });
  try {
    return await fetch(path, {
      method: 'POST',
      body: form,
      credentials: 'same-origin',
      headers: { accept: 'application/json', ...(me ? { 'x-csrf-token': me.csrfToken } : {}) },
    });
  } catch {
    throw new ApiError(0, 'network_error', 'Cannot reach the Rampart server. Check your connection and try again.');
  }
}

/** Uploads one evidence file; fields precede the file in the form. */
export async function uploadEvidence(
  tenantId: string,
  framework: string,
  controlId: string,
  input: EvidenceUploadInput,
) {
  const form = new FormData();
  form.append('title', input.title);
  if (input.description) form.append('description', input.description);
  form.append('effectiveDate', input.effectiveDate);
  if (input.expiresAt) form.append('expiresAt', input.expiresAt);
  form.append('file', input.file, input.file.name);
  const path = `${controlPath(tenantId, framework, controlId)}/evidence`;
  let response = await postForm(path, form, false);
  if (response.status === 403) {
    const body = (await response
      .clone()
      .json()
      .catch(() => null)) as { error?: string } | null;
    if (body?.error?.includes('csrf')) response = await postForm(path, form, true);
  }
  if (!response.ok) {
    const body = (await response.json().catch(() => null)) as {
      error?: string;
      message?: string;
      details?: unknown;
    } | null;
    throw new ApiError(
      response.status,
      body?.error ?? `http_${response.status}`,
      body?.message ?? defaultMessageFor(response.status),
      body?.details,
    );
  }
  return (await response.json()) as z.infer<typeof evidenceResponseSchema>;
}
