// The CMMC module's errors (codes and statuses live in src/lib/errors.ts; docs/errors.md lists them).
import { appError, type AppError } from '../lib/errors.ts';

export const cmmcErrors = {
  profileNotFound: (): AppError =>
    appError('cmmc_profile_not_found', 'This tenant has no CMMC profile yet; fill in the Scope tab first.'),
  /** Same answer for a missing, malformed, revoked or unknown token: nothing to learn from it. */
  deviceTokenInvalid: (): AppError =>
    appError(
      'cmmc_device_token_invalid',
      'The device-check token is missing, revoked or not valid. Download a fresh script from the Device check tab.',
      { headers: { 'www-authenticate': 'Bearer realm="rampart-cmmc"' } },
    ),
  verifyRateLimited: (limit: number, retryAfterSeconds: number): AppError =>
    appError(
      'cmmc_verify_rate_limited',
      `This profile already sent ${limit} device-check runs in the last hour; wait and run the script again.`,
      {
        headers: { 'retry-after': String(retryAfterSeconds) },
        details: { limit, windowSeconds: 3600, retryAfterSeconds },
      },
    ),
  signingUnavailable: (): AppError =>
    appError(
      'cmmc_signing_unavailable',
      'Device-check scripts cannot be signed: CMMC_SCRIPT_SIGNING_SEED is not configured on this server. Ask the operator to set it.',
    ),
  deviceNotFound: (hostname: string): AppError =>
    appError(
      'cmmc_device_not_found',
      `No device-check results from a computer named "${hostname.slice(0, 253)}" in this profile.`,
    ),
  deviceRetireConflict: (message: string): AppError => appError('cmmc_device_retire_conflict', message),
  /** The reason goes into the audit log and the frozen SPRS snapshot: a computer never leaves scope without one. */
  retireReasonRequired: (): AppError =>
    appError(
      'cmmc_retire_reason_required',
      'Say why this computer leaves scope (replaced, sold, disposed of, no longer handles FCI); the reason is kept with it and in the SPRS snapshot.',
    ),
  attestationNotFound: (hostname: string): AppError =>
    appError(
      'cmmc_device_not_found',
      `No attestation for a computer named "${hostname.slice(0, 253)}" in this profile.`,
    ),
  forbidden: (): AppError =>
    appError(
      'tenant_forbidden',
      'Changing the CMMC profile or issuing device-check scripts needs the owner or admin role in this tenant.',
    ),
};
