import { z } from 'zod';

export const publicConfigSchema = z.object({
  signupEnabled: z.boolean(),
  /** `mailbox`: no SMTP_URL, mails are kept under Staff → Mailbox instead of sent. */
  mailDelivery: z.enum(['smtp', 'mailbox']),
  version: z.string(),
  opsDocVersion: z.string(),
});
export const healthSchema = z.object({ ok: z.literal(true) });
export const readySchema = z.object({ ok: z.literal(true), database: z.string() });
