// Outgoing mail. With SMTP_URL, messages go through SMTP. Without it they are kept in the
// development mailbox (mailbox.ts) for the installation's super-admins, and written to the log
// (their links included) so a single-machine install still works from the terminal.
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** An HTML part; the text part stays the one every reader can rely on. */
  html?: string;
  /** The one action link in the message, logged when there is no SMTP. */
  link?: string;
  /** The tenant the mail is about, if any (the mailbox shows it). */
  tenantId?: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

export function createLogMailer(log: Pick<Logger, 'info'>): Mailer {
  return {
    async send(m) {
      log.info(
        { mail: { to: m.to, subject: m.subject, link: m.link } },
        `mail (no SMTP configured): ${m.subject} → ${m.to}${m.link ? ` ${m.link}` : ''}`,
      );
    },
  };
}

export function createSmtpMailer(smtpUrl: string, from: string): Mailer & { close(): void } {
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    async send(m) {
      await transport.sendMail({
        from,
        to: m.to,
        subject: m.subject,
        text: m.text,
        ...(m.html !== undefined ? { html: m.html } : {}),
      });
    },
    close: () => transport.close(),
  };
}
