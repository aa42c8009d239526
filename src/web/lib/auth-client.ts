// Better Auth client (same origin, mounted at /api/auth) and a helper that turns its
// `{ data, error }` results into values or thrown ApiErrors with a message fit for people.
import { organizationClient, twoFactorClient } from 'better-auth/client/plugins';
import { createAuthClient } from 'better-auth/react';
import { ApiError } from './api.ts';

export const authClient = createAuthClient({
  baseURL: window.location.origin,
  basePath: '/api/auth',
  plugins: [
    organizationClient(),
    // The sign-in page reads `twoFactorRedirect` from the result and shows the code step itself,
    // so the plugin must not navigate anywhere.
    twoFactorClient({ onTwoFactorRedirect: () => undefined }),
  ],
});

interface AuthErrorLike {
  status?: number;
  statusText?: string;
  code?: string;
  message?: string;
}

interface AuthResult<T> {
  data: T | null;
  error: AuthErrorLike | null;
}

export function authErrorToApiError(error: AuthErrorLike): ApiError {
  const status = error.status ?? 0;
  const code = (error.code ?? `auth_${status}`).toLowerCase();
  let message = error.message?.trim() || error.statusText || 'Something went wrong. Try again.';
  if (status === 429) message = 'Too many attempts, wait a minute.';
  else if (status >= 500) message = 'The server had a problem. Try again in a moment.';
  else if (status === 0) message = 'Cannot reach the Rampart server. Check your connection and try again.';
  return new ApiError(status, code, message);
}

/** Awaits a Better Auth client call and returns its data, throwing an ApiError on failure. */
export async function authCall<T>(call: Promise<AuthResult<T>>): Promise<T> {
  let result: AuthResult<T>;
  try {
    result = await call;
  } catch {
    throw new ApiError(0, 'network_error', 'Cannot reach the Rampart server. Check your connection and try again.');
  }
  if (result.error) throw authErrorToApiError(result.error);
  return result.data as T;
}
