import type { MailMessage, Mailer } from '../../src/auth/mailer.ts';

export interface MemoryMailer extends Mailer {
  sent: MailMessage[];
  /** The newest link mailed to `to` whose subject matches. */
  lastLink(to: string, subject?: RegExp): string;
}

export function createMemoryMailer(): MemoryMailer {
  const sent: MailMessage[] = [];
  return {
    sent,
    async send(m) {
      sent.push(m);
    },
    lastLink(to, subject) {
      const m = [...sent].reverse().find((x) => x.to === to && (!subject || subject.test(x.subject)));
      if (!m?.link) throw new Error(`no mail with a link to ${to}${subject ? ` matching ${subject}` : ''}`);
      return m.link;
    },
  };
}
