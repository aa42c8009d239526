// Queries and mutations of the CMMC Level 1 area (/api/v1/tenants/:tenantId/cmmc/...), the public
// signing key, and the in-browser signature check of a device-check script (/verify-script).
// Types come from the server's zod schemas (type-only imports: nothing of zod enters the bundle).
import { queryOptions } from '@tanstack/react-query';
import type {
  DeviceAttestationDto,
  DeviceDto,
  DeviceListDto,
  IssuedTokenDto,
  ProfileBody,
  ProfileDto,
  ProfileResponse,
  SigningKeyDto,
} from '../../cmmc/cmmc-schemas.ts';
import { api, ApiError, defaultMessageFor, fetchMe } from './api.ts';
import { ed25519Verify } from './ed25519.ts';
import { ME_KEY, queryClient } from './query-client.ts';
import type { Me } from './types.ts';

export type {
  DeviceAttestationDto,
  DeviceDto,
  DeviceListDto,
  IssuedTokenDto,
  ProfileBody,
  ProfileDto,
  ProfileResponse,
  SigningKeyDto,
};
export type IssuedScript = IssuedTokenDto['scripts'][number];

export const cmmcKeys = {
  all: (tenantId: string) => ['tenant', tenantId, 'cmmc'] as const,
  profile: (tenantId: string) => ['tenant', tenantId, 'cmmc', 'profile'] as const,
  devices: (tenantId: string) => ['tenant', tenantId, 'cmmc', 'devices'] as const,
  signingKey: ['cmmc', 'signing-key'] as const,
};

const base = (tenantId: string) => `/api/v1/tenants/${encodeURIComponent(tenantId)}/cmmc`;
export const SIGNING_KEY_URL = '/api/public/cmmc/signing-key';

export const profileQuery = (tenantId: string) =>
  queryOptions({
    queryKey: cmmcKeys.profile(tenantId),
    queryFn: ({ signal }) => api<ProfileResponse>(`${base(tenantId)}/profile`, { signal }),
  });
export const devicesQuery = (tenantId: string) =>
  queryOptions({
    queryKey: cmmcKeys.devices(tenantId),
    queryFn: ({ signal }) => api<DeviceListDto>(`${base(tenantId)}/devices`, { signal }),
  });
export const signingKeyQuery = queryOptions({
  queryKey: cmmcKeys.signingKey,
  queryFn: ({ signal }) => api<SigningKeyDto>(SIGNING_KEY_URL, { signal }),
  staleTime: 300_000,
});

export function saveProfile(tenantId: string, body: ProfileBody) {
  return api<ProfileResponse>(`${base(tenantId)}/profile`, { method: 'PUT', body });
}

/** issueCmmcDeviceToken: a new token (shown once) and the signed scripts that carry it. */
export function issueDeviceToken(tenantId: string) {
  return api<IssuedTokenDto>(`${base(tenantId)}/device-token`, { method: 'POST' });
}

/** Retires a computer (replaced or gone) for a stated reason: scoring leaves it out until it sends a new run. */
export function retireDevice(tenantId: string, hostname: string, reason: string) {
  return api<DeviceDto>(`${base(tenantId)}/devices/retire`, { method: 'POST', body: { hostname, reason } });
}
/** Attests a computer that cannot send a run (owner or admin): it counts as covered for 30 days. */
export function attestDevice(tenantId: string, hostname: string, statement: string) {
  return api<DeviceAttestationDto>(`${base(tenantId)}/devices/attest`, {
    method: 'POST',
    body: { hostname, statement },
  });
}
export function withdrawDeviceAttestation(tenantId: string, hostname: string) {
  return api<{ withdrawn: true }>(`${base(tenantId)}/devices/attest/withdraw`, { method: 'POST', body: { hostname } });
}
/** Un-retires a computer: its latest run counts again. */
export function unretireDevice(tenantId: string, hostname: string) {
  return api<DeviceDto>(`${base(tenantId)}/devices/unretire`, { method: 'POST', body: { hostname } });
}

/** Offers a generated script as a download, byte for byte as the server signed it. */
export function downloadScript(script: Pick<IssuedScript, 'fileName' | 'content'>): void {
  const blob = new Blob([script.content], { type: 'application/octet-stream' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = script.fileName;
  a.rel = 'noopener';
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export const SIGNATURE_PREFIX = '# RAMPART-SIGNATURE v1 ed25519 ';

export type ScriptVerdict =
  | { valid: true; lineEndings: 'lf' | 'crlf'; fileSha256: string; signedSha256: string; keyFingerprint: string }
  | {
      valid: false;
      reason: 'no_signature' | 'bad_signature' | 'unsupported';
      fileSha256: string;
      keyFingerprint: string;
      detail?: string;
    };

const hex = (buf: ArrayBuffer) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, '0')).join('');
const b64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

/**
 * Checks a script's `# RAMPART-SIGNATURE v1 ed25519` line in this browser with WebCrypto Ed25519
 * (or, where the browser lacks it, @noble/ed25519 through ed25519.ts):
 * the signature covers every byte before that line. A file whose line endings were changed to
 * CRLF (e.g. by a Windows editor or mail client) is checked again with LF endings. Nothing is
 * uploaded; only the public key is fetched.
 */
export async function verifyScriptInBrowser(bytes: ArrayBuffer, key: SigningKeyDto): Promise<ScriptVerdict> {
  const subtle = globalThis.crypto?.subtle;
  const keyFingerprint = key.fingerprint;
  if (!subtle)
    return {
      valid: false,
      reason: 'unsupported',
      fileSha256: '',
      keyFingerprint,
      detail: 'This browser offers no WebCrypto here (the page must be served over HTTPS).',
    };
  const fileSha256 = hex(await subtle.digest('SHA-256', bytes));
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
  const trimmed = text.replace(/(\r?\n)+$/, '');
  const start = trimmed.lastIndexOf('\n') + 1;
  const last = trimmed.slice(start).replace(/\r$/, '');
  if (!last.startsWith(SIGNATURE_PREFIX)) return { valid: false, reason: 'no_signature', fileSha256, keyFingerprint };
  const sigText = last.slice(SIGNATURE_PREFIX.length).trim();
  if (!/^[A-Za-z0-9+/]{86}==$/.test(sigText))
    return {
      valid: false,
      reason: 'bad_signature',
      fileSha256,
      keyFingerprint,
      detail: 'The signature line is damaged.',
    };
  const signature = b64(sigText);
  const rawKey = b64(key.publicKey);
  // WebCrypto Ed25519 where the browser has it; otherwise @noble/ed25519 (ed25519.ts).
  let publicKey: CryptoKey | null = null;
  try {
    publicKey = await subtle.importKey('raw', rawKey, { name: 'Ed25519' }, false, ['verify']);
  } catch {
    publicKey = null;
  }
  const check = (message: Uint8Array<ArrayBuffer>) =>
    publicKey
      ? subtle.verify({ name: 'Ed25519' }, publicKey, signature, message)
      : ed25519Verify(rawKey, signature, message);
  const body = trimmed.slice(0, start);
  const enc = new TextEncoder();
  if (await check(enc.encode(body))) {
    return { valid: true, lineEndings: 'lf', fileSha256, signedSha256: fileSha256, keyFingerprint };
  }
  if (body.includes('\r\n')) {
    const lfBody = body.replace(/\r\n/g, '\n');
    if (await check(enc.encode(lfBody))) {
      // The SHA-256 the Device check tab showed is of the LF file as generated.
      const original = `${lfBody}${SIGNATURE_PREFIX}${sigText}\n`;
      return {
        valid: true,
        lineEndings: 'crlf',
        fileSha256,
        signedSha256: hex(await subtle.digest('SHA-256', enc.encode(original))),
        keyFingerprint,
      };
    }
  }
  return { valid: false, reason: 'bad_signature', fileSha256, keyFingerprint };
}

// ---- program: attestations, policies, score and SPRS, exports, handoff, staff -------------------
// Response types come from the program routes' response schemas (type-only import).
import type {
  AnswersResponse,
  AttestationsResponse,
  EvidenceFileDto,
  EvidenceUploadResponse,
  HandoffClaimResponse,
  HandoffPreviewResponse,
  PoliciesResponse,
  PolicyDocDto as PolicyVersionDto,
  PolicyDocWithBody,
  ScoreResponse,
  SprsConfirmationResponse,
  SprsProofResponse,
  STAFF_FILTERS,
  StaffListResponse,
  StaffProfileDto,
} from '../../cmmc/cmmc-program-schemas.ts';
export type AttestationsDto = AttestationsResponse;
export type AttestationItemDto = AttestationsDto['requirements'][number]['items'][number];
export type { EvidenceFileDto, StaffProfileDto };
export type PoliciesDto = PoliciesResponse;
/** A policy version with its Markdown text. */
export type PolicyDocDto = PolicyDocWithBody;
export type { PolicyVersionDto };
export type ScoreDto = ScoreResponse;
export type SprsConfirmationDto = SprsConfirmationResponse;
export type StaffListDto = StaffListResponse;
export type HandoffPreviewDto = HandoffPreviewResponse;
export type StaffFilter = (typeof STAFF_FILTERS)[number];

export const programKeys = {
  attestations: (tenantId: string) => ['tenant', tenantId, 'cmmc', 'attestations'] as const,
  policies: (tenantId: string) => ['tenant', tenantId, 'cmmc', 'policies'] as const,
  policy: (tenantId: string, id: string) => ['tenant', tenantId, 'cmmc', 'policies', id] as const,
  score: (tenantId: string) => ['tenant', tenantId, 'cmmc', 'score'] as const,
  staff: (filter: StaffFilter, q: string) => ['staff', 'cmmc', filter, q] as const,
};

export const cmmcBase = base;
export const attestationsQuery = (tenantId: string) =>
  queryOptions({
    queryKey: programKeys.attestations(tenantId),
    queryFn: ({ signal }) => api<AttestationsDto>(`${base(tenantId)}/attestations`, { signal }),
  });
export const policiesQuery = (tenantId: string) =>
  queryOptions({
    queryKey: programKeys.policies(tenantId),
    queryFn: ({ signal }) => api<PoliciesDto>(`${base(tenantId)}/policies`, { signal }),
  });
export const policyQuery = (tenantId: string, id: string) =>
  queryOptions({
    queryKey: programKeys.policy(tenantId, id),
    queryFn: ({ signal }) => api<PolicyDocDto>(`${base(tenantId)}/policies/${encodeURIComponent(id)}`, { signal }),
  });
export const scoreQuery = (tenantId: string) =>
  queryOptions({
    queryKey: programKeys.score(tenantId),
    queryFn: ({ signal }) => api<ScoreDto>(`${base(tenantId)}/score`, { signal }),
  });
/** Rows per page of the staff dashboard. */
export const STAFF_PAGE_SIZE = 100;
/** The largest page the API serves (staffQuerySchema); the export walks the list in these. */
const STAFF_EXPORT_PAGE = 500;
const staffUrl = (filter: StaffFilter, q: string, limit: number, offset: number) =>
  `/api/v1/staff/cmmc/profiles?${new URLSearchParams({ filter, limit: String(limit), offset: String(offset), ...(q.trim() ? { q: q.trim() } : {}) }).toString()}`;
export const staffProfilesQuery = (filter: StaffFilter, q: string, page = 0) =>
  queryOptions({
    queryKey: [...programKeys.staff(filter, q), page] as const,
    queryFn: ({ signal }) =>
      api<StaffListDto>(staffUrl(filter, q, STAFF_PAGE_SIZE, page * STAFF_PAGE_SIZE), { signal }),
  });
/**
 * Every profile of the filtered, searched list (for the browser export), page by page. Rows that
 * move between pages while it runs (a profile added or renewed meanwhile) are de-duplicated by id.
 */
export async function fetchAllStaffProfiles(filter: StaffFilter, q: string): Promise<StaffListDto> {
  const first = await api<StaffListDto>(staffUrl(filter, q, STAFF_EXPORT_PAGE, 0));
  const byId = new Map(first.profiles.map((p) => [p.id, p]));
  for (let offset = STAFF_EXPORT_PAGE; offset < first.total; offset += STAFF_EXPORT_PAGE) {
    const next = await api<StaffListDto>(staffUrl(filter, q, STAFF_EXPORT_PAGE, offset));
    for (const p of next.profiles) byId.set(p.id, p);
    if (next.profiles.length === 0) break;
  }
  return { ...first, profiles: [...byId.values()] };
}

/** Several answers in one request (a section, or all): stored together or, with a per-item error, not at all. */
export const answerItems = (
  tenantId: string,
  answers: { itemId: string; answer: 'yes' | 'no' | 'not_applicable'; note: string | null }[],
) => api<AnswersResponse>(`${base(tenantId)}/attestations`, { method: 'PUT', body: { answers } });
/** The item ids a failed answerItems names, each with its message (from `details[].path` `body.answers.<n>.…`). */
export function answerItemErrors(err: unknown, sent: { itemId: string }[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!(err instanceof ApiError)) return out;
  for (const [path, message] of Object.entries(err.fieldIssues())) {
    const m = /^body\.answers\.(\d+)/.exec(path);
    const item = m ? sent[Number(m[1])] : undefined;
    if (item && !(item.itemId in out)) out[item.itemId] = message;
  }
  return out;
}
export const deleteCmmcEvidence = (tenantId: string, id: string) =>
  api<void>(`${base(tenantId)}/evidence/${encodeURIComponent(id)}`, { method: 'DELETE' });
export const generatePolicies = (tenantId: string) =>
  api<{ generated: number }>(`${base(tenantId)}/policies/generate`, { method: 'POST', body: {} });
/** Approves the drafts named, all or none, with one effective date and review date. */
export const approvePolicies = (tenantId: string, documentIds: string[], effectiveDate: string, reviewDate: string) =>
  api<{ documents: PolicyVersionDto[] }>(`${base(tenantId)}/policies/approve`, {
    method: 'POST',
    body: { documentIds, effectiveDate, reviewDate, forAffirmingOfficial: true },
  });
/** Records a review of an approved policy: its next review-by date. */
export const setPolicyReviewDate = (tenantId: string, id: string, reviewDate: string) =>
  api<PolicyVersionDto>(`${base(tenantId)}/policies/${encodeURIComponent(id)}/review-date`, {
    method: 'PUT',
    body: { reviewDate },
  });
export const confirmSprs = (
  tenantId: string,
  body: {
    statusDate: string;
    affirmedInSprsOn: string;
    scopeDescription: string;
    cageCodes: string[];
    affirm: true;
    affirmationTextVersion: string;
  },
) => api<SprsConfirmationDto>(`${base(tenantId)}/sprs-confirmation`, { method: 'POST', body });
export const previewHandoff = (token: string) =>
  api<HandoffPreviewDto>(`/api/v1/cmmc/handoff?token=${encodeURIComponent(token)}`);
export const claimHandoff = (tenantId: string, token: string) =>
  api<HandoffClaimResponse>(`${base(tenantId)}/handoff/claim`, { method: 'POST', body: { token } });

export const evidenceUrl = (tenantId: string, id: string) => `${base(tenantId)}/evidence/${encodeURIComponent(id)}`;
export const policyPdfUrl = (tenantId: string, id: string) =>
  `${base(tenantId)}/policies/${encodeURIComponent(id)}/pdf`;
export const exportUrls = (tenantId: string) => ({
  csv: `${base(tenantId)}/export/controls.csv`,
  json: `${base(tenantId)}/export/controls.json`,
  zip: `${base(tenantId)}/export/evidence-pack.zip`,
});

/** Uploads one evidence file for an attestation item. */
export const uploadCmmcEvidence = (tenantId: string, itemId: string, file: File) =>
  postFile<EvidenceUploadResponse>(`${base(tenantId)}/attestations/${encodeURIComponent(itemId)}/evidence`, file);
/** Attaches a screenshot or PDF of the SPRS entry to the latest confirmation. */
export const uploadSprsProof = (tenantId: string, file: File) =>
  postFile<SprsProofResponse>(`${base(tenantId)}/sprs-confirmation/proof`, file);
export const sprsProofUrl = (tenantId: string) => `${base(tenantId)}/sprs-confirmation/proof`;

/** One file as multipart field "file", with the CSRF header as api() sends it. */
async function postFile<T>(path: string, file: File): Promise<T> {
  const form = new FormData();
  form.append('file', file, file.name);
  const me =
    queryClient.getQueryData<Me | null>(ME_KEY) ??
    (await queryClient.fetchQuery({ queryKey: ME_KEY, queryFn: fetchMe, staleTime: 0 }));
  let response: Response;
  try {
    response = await fetch(path, {
      method: 'POST',
      body: form,
      credentials: 'same-origin',
      headers: { accept: 'application/json', ...(me ? { 'x-csrf-token': me.csrfToken } : {}) },
    });
  } catch {
    throw new ApiError(0, 'network_error', 'Cannot reach the Rampart server. Check your connection and try again.');
  }
  const body = (await response.json().catch(() => null)) as {
    error?: string;
    message?: string;
    details?: unknown;
  } | null;
  if (!response.ok)
    throw new ApiError(
      response.status,
      body?.error ?? `http_${response.status}`,
      body?.message ?? defaultMessageFor(response.status),
      body?.details,
    );
  return body as T;
}

// The server's CAGE code rule itself (src/cmmc/cage-code.ts), so the form and the API agree.
import { cageCodeProblem } from '../../cmmc/cage-code.ts';
/** The profile's stored CAGE codes that are not valid (saved before I and O were refused). */
export const invalidStoredCageCodes = (p: Pick<ProfileDto, 'cageCode' | 'additionalCageCodes'>): string[] =>
  [p.cageCode, ...p.additionalCageCodes].filter((c) => cageCodeProblem(c) !== null);

const PREFILL_KEY = 'rampart.cmmc.handoff-prefill';
/**
 * Keeps a claimed handoff's prefill for the Scope tab: it fills in the form of a tenant without a
 * profile, and is shown for comparison (not filled in) when the tenant already had one.
 */
export function storeHandoffPrefill(tenantId: string, prefill: Record<string, unknown>, profileExists = false): void {
  sessionStorage.setItem(PREFILL_KEY, JSON.stringify({ tenantId, prefill, profileExists }));
}
export type HandoffPrefill = {
  cageCode?: string;
  companyName?: string;
  contactEmail?: string;
  profileExisted?: boolean;
};
export function readHandoffPrefill(tenantId: string): HandoffPrefill | null {
  try {
    const v = JSON.parse(sessionStorage.getItem(PREFILL_KEY) ?? 'null') as {
      tenantId: string;
      prefill: Record<string, string>;
      profileExists?: boolean;
    } | null;
    return v && v.tenantId === tenantId ? { ...v.prefill, profileExisted: v.profileExists === true } : null;
  } catch {
    return null;
  }
}
export const clearHandoffPrefill = () => sessionStorage.removeItem(PREFILL_KEY);
