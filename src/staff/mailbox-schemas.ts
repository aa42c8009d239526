// Staff → Mailbox API shapes (mailbox-routes.ts), shared with the web app.
import { z } from 'zod';

export const mailboxSummarySchema = z.object({
  id: z.number().int(),
  createdAt: z.string(),
  to: z.string(),
  subject: z.string(),
  tenantId: z.string().nullable(),
  tenantName: z.string().nullable(),
  hasLink: z.boolean(),
});
export const mailboxMessageSchema = mailboxSummarySchema.extend({
  text: z.string(),
  html: z.string().nullable(),
  link: z.string().nullable(),
});
export const mailboxPageSchema = z.object({
  messages: z.array(mailboxSummarySchema),
  nextBefore: z.number().int().nullable(),
  /** Whether this server sends mail: with SMTP the mailbox keeps nothing new. */
  smtpConfigured: z.boolean(),
  keep: z.number().int(),
  maxAgeDays: z.number().int(),
});
export const mailboxQuerySchema = z.object({
  to: z.string().trim().min(1).max(320).optional().describe('Part of the recipient address, any case.'),
  before: z.coerce.number().int().positive().optional().describe('The `nextBefore` of the previous page.'),
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Page size, 1 to 200 (default 50).'),
});

export const mailboxIdParamsSchema = z.object({ id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER) });
