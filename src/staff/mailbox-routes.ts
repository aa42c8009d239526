// Staff → Mailbox: the mails an installation without SMTP kept instead of sending (src/auth/mailbox.ts).
//   GET /api/v1/staff/mailbox       newest first, paged by id; `to` filters on the recipient
//   GET /api/v1/staff/mailbox/:id   one mail with its text, HTML part and link
// Super-admin only: the mails hold password-reset, verification and invitation links, so whoever
// reads them can act as any recipient (a support role included). Reading is not audited per mail;
// the list is the installation's own outgoing mail, kept at most 14 days.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Mailbox } from '../auth/mailbox.ts';
import { appError } from '../lib/errors.ts';
import {
  mailboxIdParamsSchema,
  mailboxMessageSchema,
  mailboxPageSchema,
  mailboxQuerySchema,
} from './mailbox-schemas.ts';
import type { SessionGuards } from '../server/plugins/session.ts';

export function registerMailboxRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; mailbox: Mailbox; smtpConfigured: boolean },
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, mailbox } = deps;
  const tags = ['staff'];

  r.get(
    '/api/v1/staff/mailbox',
    {
      schema: {
        tags,
        summary: 'Mails kept instead of sent (no SMTP), newest first (super-admin)',
        querystring: mailboxQuerySchema,
        response: { 200: mailboxPageSchema },
      },
    },
    async (req) => {
      await guards.requireSuperAdmin(req);
      return { ...(await mailbox.list(req.query)), smtpConfigured: deps.smtpConfigured };
    },
  );

  r.get(
    '/api/v1/staff/mailbox/:id',
    {
      schema: {
        tags,
        summary: 'One kept mail with its text, HTML part and link (super-admin)',
        params: mailboxIdParamsSchema,
        response: { 200: mailboxMessageSchema },
      },
    },
    async (req) => {
      await guards.requireSuperAdmin(req);
      const message = await mailbox.get(req.params.id);
      if (!message) throw appError('mail_not_found', 'There is no kept mail with this id; it may have been pruned.');
      return message;
    },
  );
}
