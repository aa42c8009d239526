// The development mailbox: without SMTP_URL every mail is kept, and only a super-admin reads it
// (the mails carry reset, verification and invitation links). With SMTP_URL nothing is kept.
// Retention runs on a database of its own, so its pruning never touches other files' mails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailbox, mailboxMailer, type Mailbox } from '../../src/auth/mailbox.ts';
import { withService, withTenant } from '../../src/db/tenant.ts';
import type { Clock } from '../../src/lib/clock.ts';
import { createTestApp, STAFF_DOMAIN, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';
import { openFreshDatabase } from '../helpers/fresh-database.ts';
import { createMemoryMailer } from '../helpers/mailer.ts';
import { bootstrapStaff } from '../helpers/staff.ts';

interface Summary {
  id: number;
  createdAt: string;
  to: string;
  subject: string;
  tenantId: string | null;
  tenantName: string | null;
  hasLink: boolean;
}
interface Page {
  messages: Summary[];
  nextBefore: number | null;
  smtpConfigured: boolean;
  keep: number;
  maxAgeDays: number;
}

describe('without SMTP_URL', () => {
  let t: TestApp;
  let admin: Client;
  let support: Client;
  let owner: Client;
  let ownerEmail: string;
  let tenantId: string;

  beforeAll(async () => {
    t = await createTestApp();
    admin = await bootstrapStaff(t, uniqueEmail('root', STAFF_DOMAIN), 'super_admin');
    support = await bootstrapStaff(t, uniqueEmail('support', STAFF_DOMAIN), 'staff');
    owner = new Client(t.app);
    ownerEmail = uniqueEmail('owner');
    await owner.signUp(ownerEmail);
    tenantId = await owner.createTenant('Mailbox Co');
  });
  afterAll(() => t.close());

  const list = async (c: Client, query: string) => {
    const res = await c.get(`/api/v1/staff/mailbox${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Page;
  };

  it('says so in the public config, without the SMTP URL', async () => {
    const res = await new Client(t.app).get('/api/v1/public/config');
    expect(res.json()).toMatchObject({ mailDelivery: 'mailbox' });
    expect(res.body).not.toMatch(/smtp:/i);
  });

  it('keeps the verification mail of a sign-up; a super-admin lists it and reads its link', async () => {
    const page = await list(admin, `?to=${encodeURIComponent(ownerEmail.toUpperCase())}`);
    expect(page.smtpConfigured).toBe(false);
    expect(page.keep).toBe(500);
    expect(page.maxAgeDays).toBe(14);
    expect(page.messages).toHaveLength(1);
    const [summary] = page.messages;
    expect(summary).toMatchObject({ to: ownerEmail, subject: 'Verify your e-mail address for Rampart', hasLink: true });
    // The list carries neither bodies nor links.
    expect(JSON.stringify(page)).not.toContain('verify-email');

    const res = await admin.get(`/api/v1/staff/mailbox/${summary!.id}`);
    expect(res.statusCode).toBe(200);
    const mail = res.json() as Summary & { text: string; html: string | null; link: string };
    const sent = t.mailer.lastLink(ownerEmail, /Verify/);
    expect(mail.link).toBe(sent);
    expect(mail.text).toContain(sent);
    expect(mail.html).toBeNull();
    // The kept link works: it verifies the address.
    const verify = await new Client(t.app).get(sent.replace(t.config.PUBLIC_BASE_URL, ''));
    expect(verify.statusCode).toBeLessThan(400);
    expect((await owner.me()).user.emailVerified).toBe(true);
  });

  it('keeps a password reset and an invitation (with its tenant); newest first, paged', async () => {
    const invitee = uniqueEmail('invitee');
    const invite = await owner.post('/api/auth/organization/invite-member', {
      email: invitee,
      role: 'member',
      organizationId: tenantId,
    });
    expect(invite.statusCode, invite.body).toBe(200);
    const reset = await new Client(t.app).post('/api/auth/request-password-reset', {
      email: ownerEmail,
      redirectTo: '/reset-password',
    });
    expect(reset.statusCode).toBe(200);

    const mine = await list(admin, `?to=${encodeURIComponent(ownerEmail)}`);
    expect(mine.messages.map((m) => m.subject)).toEqual([
      'Set your Rampart password',
      'Verify your e-mail address for Rampart',
    ]);
    const first = await list(admin, `?to=${encodeURIComponent(ownerEmail)}&limit=1`);
    expect(first.messages).toHaveLength(1);
    expect(first.nextBefore).toBe(first.messages[0]!.id);
    const second = await list(admin, `?to=${encodeURIComponent(ownerEmail)}&limit=1&before=${first.nextBefore}`);
    expect(second.messages.map((m) => m.subject)).toEqual(['Verify your e-mail address for Rampart']);
    expect(second.nextBefore).toBeNull();

    const invitation = await list(admin, `?to=${encodeURIComponent(invitee)}`);
    expect(invitation.messages).toHaveLength(1);
    expect(invitation.messages[0]).toMatchObject({ tenantId, tenantName: 'Mailbox Co' });
    const full = (await admin.get(`/api/v1/staff/mailbox/${invitation.messages[0]!.id}`)).json() as { link: string };
    expect(full.link).toBe(t.mailer.lastLink(invitee));
  });

  it('is for super-admins only: not a support role, a tenant owner or the signed-out', async () => {
    const anyId = (await list(admin, `?to=${encodeURIComponent(ownerEmail)}`)).messages[0]!.id;
    for (const path of ['/api/v1/staff/mailbox', `/api/v1/staff/mailbox/${anyId}`]) {
      const asSupport = await support.get(path);
      expect(asSupport.statusCode).toBe(403);
      expect(asSupport.json()).toMatchObject({ error: 'super_admin_only' });
      const asOwner = await owner.get(path);
      expect(asOwner.statusCode).toBe(403);
      expect(asOwner.json()).toMatchObject({ error: 'staff_only' });
      expect((await new Client(t.app).get(path)).statusCode).toBe(401);
      for (const res of [asSupport, asOwner]) expect(res.body).not.toContain('reset-password');
    }
  });

  it('is out of reach of tenant database paths', async () => {
    await expect(
      withTenant(t.database.db, { tenantId }, (tx) => tx.selectFrom('dev_mailbox').selectAll().execute()),
    ).rejects.toThrow(/permission denied/);
  });

  it('answers mail_not_found and validation_failed, never a 500', async () => {
    const missing = await admin.get('/api/v1/staff/mailbox/999999999999');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: 'mail_not_found' });
    for (const bad of ['/api/v1/staff/mailbox/abc', '/api/v1/staff/mailbox/-1', '/api/v1/staff/mailbox?limit=0']) {
      const res = await admin.get(bad);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json()).toMatchObject({ error: 'validation_failed' });
    }
    const long = await admin.get(`/api/v1/staff/mailbox?to=${'a'.repeat(400)}`);
    expect(long.statusCode).toBe(400);
  });
});

describe('with SMTP_URL', () => {
  let t: TestApp;
  // A closed port: the test app's capturing mailer stands in for the SMTP transport.
  beforeAll(async () => (t = await createTestApp({ env: { SMTP_URL: 'smtp://127.0.0.1:9' } })));
  afterAll(() => t.close());

  it('keeps nothing, and says mail is sent', async () => {
    const email = uniqueEmail('smtp');
    await new Client(t.app).signUp(email);
    expect(t.mailer.lastLink(email, /Verify/)).toContain('verify-email');
    const kept = await withService(t.database.db, (tx) =>
      tx.selectFrom('dev_mailbox').select('id').where('to_address', '=', email).execute(),
    );
    expect(kept).toEqual([]);
    const config = await new Client(t.app).get('/api/v1/public/config');
    expect(config.json()).toMatchObject({ mailDelivery: 'smtp' });
    expect(config.body).not.toContain('127.0.0.1:9');
    const admin = await bootstrapStaff(t, uniqueEmail('root', STAFF_DOMAIN), 'super_admin');
    const page = (await admin.get('/api/v1/staff/mailbox')).json() as Page;
    expect(page.smtpConfigured).toBe(true);
  });
});

describe('retention', () => {
  let fresh: Awaited<ReturnType<typeof openFreshDatabase>>;
  beforeAll(async () => (fresh = await openFreshDatabase('mailbox')));
  afterAll(() => fresh.cleanup());

  it('keeps the newest mails within the count and the age bounds, pruned on insert', async () => {
    let now = new Date('2026-05-01T12:00:00Z');
    const clock: Clock = { now: () => new Date(now) };
    const mailbox = createMailbox({ db: fresh.database.db, clock, keep: 3, maxAgeDays: 14 });
    for (let i = 1; i <= 5; i++) await mailbox.store({ to: `n${i}@example.test`, subject: `mail ${i}`, text: 'x' });
    let page = await mailbox.list({ limit: 50 });
    expect(page.messages.map((m) => m.subject)).toEqual(['mail 5', 'mail 4', 'mail 3']);

    // Fifteen days on, one more mail: the three older ones are past 14 days and go.
    now = new Date(now.getTime() + 15 * 24 * 3_600_000);
    await mailbox.store({ to: 'late@example.test', subject: 'late', text: 'x', link: 'http://x.test/l' });
    page = await mailbox.list({ limit: 50 });
    expect(page.messages.map((m) => m.subject)).toEqual(['late']);

    // Oversized fields are cut to the column bounds, never refused.
    await mailbox.store({ to: 'big@example.test', subject: 's'.repeat(5000), text: 't'.repeat(200_000) });
    const big = await mailbox.get((await mailbox.list({ to: 'big@', limit: 1 })).messages[0]!.id);
    expect(big!.subject).toHaveLength(1000);
    expect(big!.text).toHaveLength(100_000);
  });
});

describe('a mailbox that cannot be written', () => {
  it('logs the failure and still hands the mail on, so the sign-up or reset succeeds', async () => {
    const broken: Mailbox = {
      store: () => Promise.reject(new Error('disk full')),
      list: () => Promise.reject(new Error('unused')),
      get: () => Promise.reject(new Error('unused')),
    };
    const next = createMemoryMailer();
    const errors: unknown[] = [];
    const mailer = mailboxMailer(broken, next, { error: (obj: unknown) => void errors.push(obj) });
    await mailer.send({
      to: 'a@example.test',
      subject: 'Set your Rampart password',
      text: 'x',
      link: 'http://l.test/r',
    });
    expect(next.lastLink('a@example.test')).toBe('http://l.test/r');
    expect(errors).toHaveLength(1);
    // The log entry names the subject, never the link.
    expect(JSON.stringify(errors[0])).not.toContain('l.test');
  });
});
