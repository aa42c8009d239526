import type { PlatformRoleName, TenantRole } from './types.ts';

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

function parse(value: string | null | undefined): Date | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

export function formatDateTime(value: string | null | undefined): string {
  const date = parse(value);
  return date ? dateTime.format(date) : '—';
}

export function formatDate(value: string | null | undefined): string {
  const date = parse(value);
  return date ? dateOnly.format(date) : '—';
}

export const TENANT_ROLE_LABELS: Record<TenantRole, string> = { owner: 'Owner', admin: 'Admin', member: 'Member' };

export function tenantRoleLabel(role: string): string {
  return TENANT_ROLE_LABELS[role as TenantRole] ?? role;
}

export const PLATFORM_ROLE_LABELS: Record<PlatformRoleName, string> = { staff: 'Staff', super_admin: 'Super-admin' };

export function platformRoleLabel(role: string): string {
  return PLATFORM_ROLE_LABELS[role as PlatformRoleName] ?? role;
}

/** "Acme Corp, Inc." → "acme-corp-inc" */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/g, '');
}

export function initials(nameOrEmail: string): string {
  const parts = nameOrEmail
    .trim()
    .split(/[\s@._-]+/)
    .filter(Boolean);
  const letters = parts.slice(0, 2).map((p) => p[0]?.toUpperCase() ?? '');
  return letters.join('') || '?';
}

/** Local calendar date (YYYY-MM-DD) → ISO instant at the start or end of that local day. */
export function localDateToIso(date: string, edge: 'start' | 'end'): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return undefined;
  const d = new Date(`${date}T${edge === 'start' ? '00:00:00.000' : '23:59:59.999'}`);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

export function pluralize(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
