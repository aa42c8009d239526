// CMMC routes: the tenant's profile (Scope), device-check tokens and scripts, the device list, and
// the two public routes: the script results receiver and the signing key.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { SessionGuards } from '../server/plugins/session.ts';
import {
  attestDeviceBodySchema,
  deviceAttestationSchema,
  deviceListSchema,
  deviceSchema,
  withdrawAttestationBodySchema,
  retireBodySchema,
  unretireBodySchema,
  issuedTokenSchema,
  profileBodySchema,
  profileResponseSchema,
  signingKeySchema,
  tenantParamsSchema,
  VERIFY_BODY_LIMIT,
  verifyResponseSchema,
} from './cmmc-schemas.ts';
import type { CmmcService } from './cmmc-service.ts';

export const VERIFY_ROUTE = '/api/public/compliance/verify';
export const SIGNING_KEY_ROUTE = '/api/public/cmmc/signing-key';

export function registerCmmcRoutes(app: FastifyInstance, deps: { guards: SessionGuards; cmmc: CmmcService }): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, cmmc } = deps;
  const caller = (s: { user: { id: string; email: string } }) => ({ userId: s.user.id, email: s.user.email });
  const tags = ['cmmc'];
  const base = '/api/v1/tenants/:tenantId/cmmc';

  r.get(
    `${base}/profile`,
    {
      schema: {
        tags,
        summary: "The tenant's CMMC Level 1 profile (null before Scope is saved)",
        params: tenantParamsSchema,
        response: { 200: profileResponseSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return cmmc.getProfile(req.params.tenantId, caller(s));
    },
  );

  r.put(
    `${base}/profile`,
    {
      schema: {
        tags,
        summary: 'Create or update the CMMC profile (Scope); owner or admin',
        params: tenantParamsSchema,
        body: profileBodySchema,
        response: { 200: profileResponseSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return cmmc.saveProfile(req.params.tenantId, caller(s), req.body);
    },
  );

  r.post(
    `${base}/device-token`,
    {
      schema: {
        tags,
        summary:
          'issueCmmcDeviceToken: a new device-check token (shown once; the previous one stops working) and the signed Windows and macOS scripts; owner or admin',
        params: tenantParamsSchema,
        response: { 201: issuedTokenSchema },
      },
    },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      const issued = await cmmc.issueDeviceToken(req.params.tenantId, caller(s));
      return reply.code(201).header('cache-control', 'no-store').send(issued);
    },
  );

  r.get(
    `${base}/devices`,
    {
      schema: {
        tags,
        summary: 'Devices that sent device-check results: the latest run per hostname, pending when older than 30 days',
        params: tenantParamsSchema,
        response: { 200: deviceListSchema },
      },
    },
    async (req) => {
      const s = await guards.requireSession(req);
      return cmmc.listDevices(req.params.tenantId, caller(s));
    },
  );

  r.post(
    `${base}/devices/retire`,
    {
      schema: {
        tags,
        summary:
          'Retire a computer (replaced or gone): scoring, exports and the staff dashboard leave it out until it sends a new run; owner or admin, audited',
        params: tenantParamsSchema,
        body: retireBodySchema,
        response: { 200: deviceSchema },
      },
    },
    async (req) =>
      cmmc.setDeviceRetired(
        req.params.tenantId,
        caller(await guards.requireSession(req)),
        req.body.hostname,
        true,
        req.body.reason ?? req.body.note,
      ),
  );

  r.post(
    `${base}/devices/attest`,
    {
      schema: {
        tags,
        summary:
          'Attest a computer that cannot send a device-check run: it counts as covered for 30 days unless a current run decides; owner or admin, audited',
        params: tenantParamsSchema,
        body: attestDeviceBodySchema,
        response: { 200: deviceAttestationSchema },
      },
    },
    async (req) => cmmc.attestDevice(req.params.tenantId, caller(await guards.requireSession(req)), req.body),
  );

  r.post(
    `${base}/devices/attest/withdraw`,
    {
      schema: {
        tags,
        summary: "Withdraw a computer's attestation; owner or admin, audited",
        params: tenantParamsSchema,
        body: withdrawAttestationBodySchema,
        response: { 200: z.object({ withdrawn: z.literal(true) }) },
      },
    },
    async (req) =>
      cmmc.withdrawDeviceAttestation(req.params.tenantId, caller(await guards.requireSession(req)), req.body.hostname),
  );

  r.post(
    `${base}/devices/unretire`,
    {
      schema: {
        tags,
        summary:
          'Un-retire a computer: its latest run counts again (pending when older than 30 days); owner or admin, audited',
        params: tenantParamsSchema,
        body: unretireBodySchema,
        response: { 200: deviceSchema },
      },
    },
    async (req) =>
      cmmc.setDeviceRetired(
        req.params.tenantId,
        caller(await guards.requireSession(req)),
        req.body.hostname,
        false,
        null,
      ),
  );

  // Public: the device-check scripts post here with `Authorization: Bearer <device token>`. The
  // body is validated after the token (docs/cmmc.md), so it has no route schema.
  r.post(
    VERIFY_ROUTE,
    {
      bodyLimit: VERIFY_BODY_LIMIT,
      schema: {
        tags,
        summary:
          'Receives device-check script results (bearer: the profile device token; 30 runs per hour per profile)',
        response: { 201: verifyResponseSchema },
      },
    },
    async (req, reply) => reply.code(201).send(await cmmc.verify(req.headers.authorization, req.body, req.ip)),
  );

  r.get(
    SIGNING_KEY_ROUTE,
    {
      schema: {
        tags,
        summary: 'The Ed25519 public key that verifies device-check scripts',
        response: { 200: signingKeySchema },
      },
    },
    async (_req, reply) => {
      return reply.header('cache-control', 'public, max-age=300').send(cmmc.signingKey());
    },
  );
}
