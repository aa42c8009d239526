// Client-side checks for quick feedback; the server stays the authority.
export const MIN_PASSWORD_LENGTH = 10;
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function requireText(value: string, label: string): string | null {
  return value.trim() ? null : `${label} is required`;
}

export function validateEmail(value: string): string | null {
  if (!value.trim()) return 'Email is required';
  return EMAIL_RE.test(value.trim()) ? null : 'Enter a valid e-mail address, like name@example.com';
}

export function validateNewPassword(value: string): string | null {
  if (!value) return 'Password is required';
  return value.length >= MIN_PASSWORD_LENGTH ? null : `Use at least ${MIN_PASSWORD_LENGTH} characters`;
}

export function validateSlug(value: string): string | null {
  if (!value) return 'Slug is required';
  return /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(value) ? null : 'Use lower-case letters, digits and single dashes';
}

/** Only same-site paths are accepted as post-login destinations (no open redirects). */
export function safeRedirect(value: unknown, fallback = '/home'): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\'))
    return fallback;
  if (value.startsWith('/sign-in') || value.startsWith('/sign-up')) return fallback;
  return value;
}

export function hasErrors(errors: Record<string, string | null | undefined>): boolean {
  return Object.values(errors).some(Boolean);
}
