// The cast most tenant tests need: an owner with a tenant, a plain member of it, and an outsider
// with a tenant of their own.
import type { TestApp } from './app.ts';
import { uniqueEmail } from './app.ts';
import { Client } from './client.ts';

export interface TenantCast {
  owner: Client;
  tenant: string;
  member: Client;
  other: Client;
  otherTenant: string;
}

/** An owner, signed in, with a tenant of their own ("<label> Co"). */
export async function ownerWithTenant(t: TestApp, label: string): Promise<{ owner: Client; tenant: string }> {
  const owner = new Client(t.app);
  await owner.signUp(uniqueEmail(`${label}-owner`));
  const tenant = await owner.createTenant(`${label} Co`);
  await owner.me();
  return { owner, tenant };
}

export async function tenantCast(t: TestApp, label: string): Promise<TenantCast> {
  const { owner, tenant } = await ownerWithTenant(t, label);
  const member = new Client(t.app);
  const m = await member.signUp(uniqueEmail(`${label}-member`));
  await t.database.db
    .insertInto('member')
    .values({ organizationId: tenant, userId: m.user.id, role: 'member', createdAt: new Date() })
    .execute();
  await member.me();
  const other = new Client(t.app);
  await other.signUp(uniqueEmail(`${label}-other`));
  const otherTenant = await other.createTenant(`Other ${label} Co`);
  await other.me();
  return { owner, tenant, member, other, otherTenant };
}
