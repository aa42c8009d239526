// Mail through a real SMTP server on loopback, and the log mailer used when there is none.
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogMailer, createSmtpMailer } from '../../src/auth/mailer.ts';
import { createTestApp, uniqueEmail, type TestApp } from '../helpers/app.ts';
import { Client } from '../helpers/client.ts';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

describe('SMTP mailer', () => {
  const received: Received[] = [];
  let smtp: SMTPServer;
  let port: number;
  let t: TestApp;
  let mailer: ReturnType<typeof createSmtpMailer>;

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, callback) {
        let raw = '';
        stream.on('data', (d: Buffer) => (raw += d.toString('utf8')));
        stream.on('end', () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    port = (smtp.server.address() as { port: number }).port;
    mailer = createSmtpMailer(`smtp://127.0.0.1:${port}`, 'Rampart <no-reply@rampart.test>');
    t = await createTestApp({ deps: { mailer } });
  });
  afterAll(async () => {
    await t.close();
    mailer.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it('delivers the verification mail of a sign-up through SMTP', async () => {
    const email = uniqueEmail('smtp');
    await new Client(t.app).signUp(email);
    await vi.waitFor(() => expect(received.some((m) => m.to.includes(email))).toBe(true), { timeout: 5000 });
    const mail = received.find((m) => m.to.includes(email))!;
    expect(mail.from).toBe('no-reply@rampart.test');
    expect(mail.raw).toMatch(/Subject: Verify your e-mail address for Rampart/);
    expect(mail.raw.replace(/=\r?\n/g, '')).toMatch(/\/api\/auth\/verify-email\?token=/);
  });
});

describe('log mailer', () => {
  it('writes the link to the log when no SMTP is configured', async () => {
    const info = vi.fn();
    await createLogMailer({ info } as never).send({ to: 'a@b.test', subject: 'Hello', text: 'x', link: 'http://x/y' });
    expect(info).toHaveBeenCalledWith(
      { mail: { to: 'a@b.test', subject: 'Hello', link: 'http://x/y' } },
      expect.stringContaining('http://x/y'),
    );
  });
});
