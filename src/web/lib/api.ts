// One fetch helper for the Rampart API: JSON in and out, the CSRF header on every non-GET request,
// and error bodies ({error, message, details}) turned into thrown ApiError values.
import { ME_KEY, queryClient } from './query-client.ts';
import type { Me } from './types.ts';

export interface FieldIssue {
  path: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;

  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
  }

  /** Field-level issues of a 400 validation_failed answer, keyed by field path. */
  fieldIssues(): Record<string, string> {
    const out: Record<string, string> = {};
    if (!Array.isArray(this.details)) return out;
    for (const item of this.details as unknown[]) {
      if (typeof item !== 'object' || item === null) continue;
      const { path, message } = item as { path?: unknown; message?: unknown };
      const key = Array.isArray(path) ? path.join('.') : typeof path === 'string' ? path : '';
      if (key && typeof message === 'string' && !(key in out)) out[key] = message;
    }
    return out;
  }
}

const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'The request was not accepted. Check the values and try again.',
  401: 'Your session has ended. Sign in again.',
  403: 'You do not have permission to do that.',
  404: 'Not found.',
  409: 'That conflicts with the current state. Reload and try again.',
  429: 'Too many attempts, wait a minute and try again.',
};

export function defaultMessageFor(status: number): string {
  return (
    DEFAULT_MESSAGES[status] ??
    (status >= 500 ? 'The server had a problem. Try again in a moment.' : `Request failed (${status}).`)
  );
}

type QueryValue = string | number | boolean | null | undefined;

export interface ApiOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  query?: Record<string, QueryValue>;
  signal?: AbortSignal;
}

export function buildUrl(path: string, query?: Record<string, QueryValue>): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    params.set(key, String(value));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

async function toApiError(response: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    // not JSON (proxy error page, empty body): fall back to a generic message
  }
  const obj = (typeof body === 'object' && body !== null ? body : {}) as {
    error?: unknown;
    message?: unknown;
    details?: unknown;
  };
  const code = typeof obj.error === 'string' ? obj.error : `http_${response.status}`;
  const message =
    response.status === 429
      ? 'Too many attempts, wait a minute and try again.'
      : typeof obj.message === 'string' && obj.message.trim()
        ? obj.message
        : defaultMessageFor(response.status);
  return new ApiError(response.status, code, message, obj.details);
}

async function send(path: string, options: ApiOptions, csrfToken: string | null): Promise<Response> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  try {
    return await fetch(buildUrl(path, options.query), {
      method,
      headers,
      credentials: 'same-origin',
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, 'network_error', 'Cannot reach the Rampart server. Check your connection and try again.');
  }
}

/** GET /api/v1/me; null when signed out. */
export async function fetchMe(): Promise<Me | null> {
  const response = await send('/api/v1/me', {}, null);
  if (response.status === 401) return null;
  if (!response.ok) throw await toApiError(response);
  return (await response.json()) as Me;
}

async function csrfToken(refresh: boolean): Promise<string | null> {
  if (!refresh) {
    const cached = queryClient.getQueryData<Me | null>(ME_KEY);
    if (cached) return cached.csrfToken;
  }
  const me = await queryClient.fetchQuery({ queryKey: ME_KEY, queryFn: fetchMe, staleTime: 0 });
  return me?.csrfToken ?? null;
}

export async function api<T>(path: string, options: ApiOptions = {}): Promise<T> {
  const method = options.method ?? 'GET';
  const token = method === 'GET' ? null : await csrfToken(false);
  let response = await send(path, options, token);
  if (response.status === 403 && method !== 'GET') {
    // A stale CSRF token (new session, rotated secret): refresh it once and retry.
    const error = await toApiError(response.clone());
    if (error.code.includes('csrf')) response = await send(path, options, await csrfToken(true));
  }
  if (!response.ok) throw await toApiError(response);
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}
