import { z } from 'zod';

export const publicConfigSchema = z.object({
  signupEnabled: z.boolean(),
  version: z.string(),
  opsDocVersion: z.string(),
});
export const healthSchema = z.object({ ok: z.literal(true) });
export const readySchema = z.object({ ok: z.literal(true), database: z.string() });
