// First run and installation settings: whether the install still needs its administrator (the
// sign-in page asks; the setup link itself only to someone on this machine), redeeming the link,
// and the super-admins' installation settings.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { SessionGuards } from '../server/plugins/session.ts';
import type { SetupService } from './setup-service.ts';

const domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'a domain such as example.com');
const settingsSchema = z.object({
  staffEmailDomains: z.array(z.string()),
  configuredStaffEmailDomains: z.array(z.string()),
});
const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export function registerSetupRoutes(app: FastifyInstance, deps: { guards: SessionGuards; setup: SetupService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, setup } = deps;
  const tags = ['setup'];

  r.get(
    '/api/v1/setup',
    {
      schema: {
        tags,
        summary: 'Whether the installation needs its first administrator',
        response: { 200: z.object({ needed: z.boolean(), setupUrl: z.string().nullable() }) },
      },
    },
    async (req) => {
      const needed = await setup.needed();
      // The link makes its holder super-admin: only a browser on the server's own machine sees it.
      return { needed, setupUrl: needed && LOOPBACK.has(req.ip) ? await setup.currentLink() : null };
    },
  );

  r.post(
    '/api/v1/setup',
    {
      schema: {
        tags,
        summary: 'Redeem the one-time setup link: the signed-in user becomes super-admin',
        body: z.object({ token: z.string().min(1).max(200) }),
        response: { 200: z.object({ staffEmailDomains: z.array(z.string()) }) },
      },
    },
    async (req) => {
      const session = await guards.requireSession(req);
      return setup.complete(req.body.token, session.user);
    },
  );

  r.get(
    '/api/v1/staff/installation',
    { schema: { tags: ['staff'], response: { 200: settingsSchema } } },
    async (req) => {
      await guards.requireSuperAdmin(req);
      return setup.settings();
    },
  );

  r.put(
    '/api/v1/staff/installation',
    {
      schema: {
        tags: ['staff'],
        body: z.object({ staffEmailDomains: z.array(domain).max(50) }),
        response: { 200: settingsSchema },
      },
    },
    async (req) => {
      const me = await guards.requireSuperAdmin(req);
      return setup.updateSettings(req.body, me.user);
    },
  );
}
