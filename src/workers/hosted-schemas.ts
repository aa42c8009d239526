// Request and response shapes of the staff hosted-workers API, shared with the web app
// (type-only imports).
import { z } from 'zod';

export const hostedWorkerBodySchema = z.object({ tenantId: z.uuid() });

export const hostedWorkerSchema = z.object({
  id: z.uuid(),
  tenantId: z.uuid(),
  tenantName: z.string(),
  name: z.string(),
  platform: z.string(),
  version: z.string(),
  status: z.enum(['active', 'revoked']),
  enrolledAt: z.string(),
  lastSeenAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  /** This server holds the worker's credentials and runs it in-process when its runner is on. */
  embedded: z.boolean(),
  /** An agent for it runs in the server process that answered. */
  running: z.boolean(),
});
export type HostedWorkerDto = z.infer<typeof hostedWorkerSchema>;

export const hostedWorkerListSchema = z.object({
  workers: z.array(hostedWorkerSchema),
  /** Whether the server process that answered runs embedded hosted workers (EMBEDDED_WORKER). */
  runnerActive: z.boolean(),
});
export type HostedWorkerListDto = z.infer<typeof hostedWorkerListSchema>;
