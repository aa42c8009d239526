// Outgoing mail. Without SMTP_URL, messages (with their links) are written to the log so a
// single-machine install still works; with it, they go through SMTP.
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** The one action link in the message, logged when there is no SMTP. */
  link?: string;
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
      await transport.sendMail({ from, to: m.to, subject: m.subject, text: m.text });
    },
    close: () => transport.close(),
  };
}
