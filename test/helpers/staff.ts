// A staff user made the way an operator makes one: the admin CLI, its one-time link, a password,
// a sign-in.
import { runAdmin } from '../../src/ops/admin-cli.ts';
import { TEST_AUTH_SECRET, TEST_BASE_URL, type TestApp } from './app.ts';
import { Client } from './client.ts';

export const STAFF_PASSWORD = 'staff passphrase 123';

export async function runAdminCli(
  t: Pick<TestApp, 'config' | 'database'>,
  argv: string[],
): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(argv, {
    config: t.config,
    database: t.database,
    authSecret: TEST_AUTH_SECRET,
    io: { out: (l) => out.push(l), err: (l) => err.push(l) },
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

export async function bootstrapStaff(t: TestApp, email: string, role: 'staff' | 'super_admin'): Promise<Client> {
  const r = await runAdminCli(t, ['create', '--email', email, '--role', role]);
  if (r.code !== 0) throw new Error(`admin create failed: ${r.err}`);
  const link = /(http\S+reset-password\S+)/.exec(r.out)![1]!;
  const c = new Client(t.app);
  const landing = await c.get(link.replace(TEST_BASE_URL, ''));
  const token = new URL(String(landing.headers.location), TEST_BASE_URL).searchParams.get('token')!;
  if ((await c.post('/api/auth/reset-password', { newPassword: STAFF_PASSWORD, token })).statusCode !== 200)
    throw new Error('could not set the password');
  if ((await c.signIn(email, STAFF_PASSWORD)).statusCode !== 200) throw new Error('could not sign in');
  await c.me();
  return c;
}
