// The development mailbox: without SMTP_URL, every outgoing mail is kept in dev_mailbox so the
// installation's super-admins can read it under Staff → Mailbox (the links in these mails are
// credentials: reading is super-admin only, see docs/security.md). Each insert prunes the table
// to the newest `keep` mails and to `maxAgeDays`, so it stays small without a background job.
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../db/schema.ts';
import { withService } from '../db/tenant.ts';
import type { Clock } from '../lib/clock.ts';
import type { MailMessage, Mailer } from './mailer.ts';

export const MAILBOX_KEEP = 500;
export const MAILBOX_MAX_AGE_DAYS = 14;
const DAY_MS = 24 * 60 * 60 * 1000;

/** One kept mail in a list: no bodies, no link. */
export interface MailboxSummary {
  id: number;
  createdAt: string;
  to: string;
  subject: string;
  tenantId: string | null;
  tenantName: string | null;
  hasLink: boolean;
}

export interface MailboxMessage extends MailboxSummary {
  text: string;
  html: string | null;
  link: string | null;
}

export interface MailboxPage {
  messages: MailboxSummary[];
  nextBefore: number | null;
  keep: number;
  maxAgeDays: number;
}

export interface Mailbox {
  /** Keeps one mail and prunes what is past the bounds. */
  store(m: MailMessage): Promise<void>;
  /** Newest first; `to` matches part of the recipient, case-insensitively; `before` is an id. */
  list(q: { to?: string | undefined; before?: number | undefined; limit: number }): Promise<MailboxPage>;
  get(id: number): Promise<MailboxMessage | null>;
}

// The column checks of migration 0039; a longer value is cut, never refused (a mail must not fail).
const cut = (s: string, max: number) => (s.length > max ? s.slice(0, max) : s);

export function createMailbox(deps: { db: Kysely<DB>; clock: Clock; keep?: number; maxAgeDays?: number }): Mailbox {
  const { db, clock } = deps;
  const keep = deps.keep ?? MAILBOX_KEEP;
  const maxAgeDays = deps.maxAgeDays ?? MAILBOX_MAX_AGE_DAYS;

  const base = (tx: Kysely<DB>) =>
    tx
      .selectFrom('dev_mailbox as m')
      .leftJoin('organization as o', 'o.id', 'm.about_tenant_id')
      .select([
        'm.id',
        'm.created_at',
        'm.to_address',
        'm.subject',
        'm.about_tenant_id',
        'o.name as tenant_name',
        sql<boolean>`m.link is not null`.as('has_link'),
      ]);
  type Row = {
    id: number;
    created_at: Date;
    to_address: string;
    subject: string;
    about_tenant_id: string | null;
    tenant_name: string | null;
    has_link: boolean;
  };
  const summary = (r: Row): MailboxSummary => ({
    id: Number(r.id),
    createdAt: new Date(r.created_at).toISOString(),
    to: r.to_address,
    subject: r.subject,
    tenantId: r.about_tenant_id,
    tenantName: r.tenant_name,
    hasLink: r.has_link,
  });

  return {
    async store(m) {
      const now = clock.now();
      await withService(db, async (tx) => {
        await tx
          .insertInto('dev_mailbox')
          .values({
            created_at: now,
            to_address: cut(m.to, 320),
            subject: cut(m.subject, 1000),
            text_body: cut(m.text, 100_000),
            html_body: m.html === undefined ? null : cut(m.html, 200_000),
            link: m.link === undefined || m.link.length > 4000 ? null : m.link,
            about_tenant_id: m.tenantId ?? null,
          })
          .execute();
        await sql`delete from dev_mailbox
          where created_at < ${new Date(now.getTime() - maxAgeDays * DAY_MS)}
             or id <= (select id from dev_mailbox order by id desc offset ${keep} limit 1)`.execute(tx);
      });
    },

    async list(q) {
      const rows = await withService(db, (tx) => {
        let query = base(tx);
        if (q.to) query = query.where(sql<boolean>`position(${q.to.toLowerCase()} in lower(m.to_address)) > 0`);
        if (q.before !== undefined) query = query.where('m.id', '<', q.before);
        return query
          .orderBy('m.id', 'desc')
          .limit(q.limit + 1)
          .execute();
      });
      const page = rows.slice(0, q.limit).map(summary);
      return {
        messages: page,
        nextBefore: rows.length > q.limit ? page[page.length - 1]!.id : null,
        keep,
        maxAgeDays,
      };
    },

    async get(id) {
      const row = await withService(db, (tx) =>
        base(tx).select(['m.text_body', 'm.html_body', 'm.link']).where('m.id', '=', id).executeTakeFirst(),
      );
      if (!row) return null;
      return { ...summary(row), text: row.text_body, html: row.html_body, link: row.link };
    },
  };
}

/**
 * The transport without SMTP: keep the mail in the mailbox, then hand it to `next` (the log line).
 * A mailbox that cannot be written is logged; the mail's caller (a sign-up, a reset) still succeeds.
 */
export function mailboxMailer(mailbox: Mailbox, next: Mailer, log: Pick<Logger, 'error'>): Mailer {
  return {
    async send(m) {
      await mailbox
        .store(m)
        .catch((err: unknown) =>
          log.error({ err, mail: { subject: m.subject } }, 'could not keep the mail in the mailbox'),
        );
      await next.send(m);
    },
  };
}
