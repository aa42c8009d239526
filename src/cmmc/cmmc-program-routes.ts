// Routes of the CMMC program: attestations and their evidence files, policies (Markdown and PDF),
// score, SPRS confirmation, exports, the renewal cron hook, handoff links and the staff list.
// Over 500 lines on purpose: one thin declaration per route (schemas, session check, one call into
// the program's modules), the program's 24 routes kept together so its URL surface reads in one
// place; the logic is in cmmc-attestations.ts, cmmc-policy-documents.ts, cmmc-sprs.ts,
// cmmc-exports.ts, cmmc-renewals.ts, cmmc-handoff.ts and cmmc-staff-list.ts.
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { appError } from '../lib/errors.ts';
import { cronAuthorized } from '../scans/scans-routes.ts';
import type { SessionGuards } from '../server/plugins/session.ts';
import {
  answerBodySchema,
  answerResponseSchema,
  answersBodySchema,
  answersResponseSchema,
  approvePoliciesBodySchema,
  approvePoliciesResponseSchema,
  reviewDateBodySchema,
  attestationsResponseSchema,
  controlsJsonSchema,
  evidenceUploadResponseSchema,
  fileDownloadSchema,
  generatePoliciesResponseSchema,
  handoffClaimResponseSchema,
  handoffPreviewResponseSchema,
  policiesResponseSchema,
  policyDocSchema,
  policyDocWithBodySchema,
  renewalSweepResponseSchema,
  scoreResponseSchema,
  sprsConfirmationResponseSchema,
  sprsProofResponseSchema,
  staffListResponseSchema,
  approvePolicyBodySchema,
  evidenceParamsSchema,
  generatePoliciesBodySchema,
  handoffClaimBodySchema,
  handoffPreviewQuerySchema,
  itemParamsSchema,
  policyParamsSchema,
  sprsConfirmBodySchema,
  staffQuerySchema,
} from './cmmc-program-schemas.ts';
import type { CmmcProgram } from './cmmc-program.ts';
import { tenantParamsSchema } from './cmmc-schemas.ts';
import type { PolicyKind } from './cmmc-scoring.ts';
import { readOneFile } from '../server/multipart.ts';

export const RENEWALS_HOOK_PATH = '/api/public/hooks/cmmc-renewals';

export async function registerCmmcProgramRoutes(
  app: FastifyInstance,
  deps: { guards: SessionGuards; program: CmmcProgram; cronSecret: string | undefined; evidenceMaxBytes: number },
): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { guards, program } = deps;
  const caller = (s: { user: { id: string; email: string } }) => ({ userId: s.user.id, email: s.user.email });
  const tags = ['cmmc'];
  const base = '/api/v1/tenants/:tenantId/cmmc';
  const download = (name: string) => `attachment; filename="${name}"`;

  r.get(
    `${base}/attestations`,
    {
      schema: {
        tags,
        summary: 'Attestation items of the 15 requirements with answers and evidence files',
        params: tenantParamsSchema,
        response: { 200: attestationsResponseSchema },
      },
    },
    async (req) => program.attestations(req.params.tenantId, caller(await guards.requireSession(req))),
  );

  r.put(
    `${base}/attestations/:itemId`,
    {
      schema: {
        tags,
        summary: 'Answer an attestation item: yes, no, or not applicable with a note; owner or admin',
        params: itemParamsSchema,
        body: answerBodySchema,
        response: { 200: answerResponseSchema },
      },
    },
    async (req) =>
      program.answer(req.params.tenantId, caller(await guards.requireSession(req)), req.params.itemId, req.body),
  );

  r.put(
    `${base}/attestations`,
    {
      schema: {
        tags,
        summary: 'Answer several attestation items at once (a section or all); all are stored or none; owner or admin',
        description:
          'Every answer is checked before any is stored. A `validation_failed` answer lists each bad one in ' +
          '`details` (`path` `body.answers.<n>.<field>`, `itemId`, `message`). Items sent with the answer and note ' +
          'they already have are left as they were (`unchanged`).',
        params: tenantParamsSchema,
        body: answersBodySchema,
        response: { 200: answersResponseSchema },
      },
    },
    async (req) => program.answerMany(req.params.tenantId, caller(await guards.requireSession(req)), req.body),
  );

  r.get(
    `${base}/evidence/:evidenceId`,
    {
      schema: {
        tags,
        summary: 'Download an attestation evidence file',
        params: evidenceParamsSchema,
        response: { 200: fileDownloadSchema('The evidence file as uploaded') },
      },
    },
    async (req, reply) => {
      const f = await program.openEvidence(
        req.params.tenantId,
        caller(await guards.requireSession(req)),
        req.params.evidenceId,
      );
      return reply
        .header('content-type', f.contentType)
        .header('content-disposition', f.disposition)
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('cache-control', 'private, no-store')
        .header('x-evidence-sha256', f.sha256)
        .send(f.body);
    },
  );

  r.delete(
    `${base}/evidence/:evidenceId`,
    {
      schema: {
        tags,
        summary: 'Delete an attestation evidence file; owner or admin',
        params: evidenceParamsSchema,
        response: { 204: z.null() },
      },
    },
    async (req, reply) => {
      await program.deleteEvidence(
        req.params.tenantId,
        caller(await guards.requireSession(req)),
        req.params.evidenceId,
      );
      return reply.code(204).send(null);
    },
  );

  r.get(
    `${base}/policies`,
    {
      schema: {
        tags,
        summary: 'The Level 1 policy set: newest version and version in force per document',
        params: tenantParamsSchema,
        response: { 200: policiesResponseSchema },
      },
    },
    async (req) => program.policies(req.params.tenantId, caller(await guards.requireSession(req))),
  );

  r.post(
    `${base}/policies/generate`,
    {
      schema: {
        tags,
        summary: 'Generate (or refresh) the draft policies from the Scope data; owner or admin',
        params: tenantParamsSchema,
        body: generatePoliciesBodySchema,
        response: { 200: generatePoliciesResponseSchema },
      },
    },
    async (req) =>
      program.generatePolicies(
        req.params.tenantId,
        caller(await guards.requireSession(req)),
        (req.body.kinds as PolicyKind[] | null | undefined) ?? null,
      ),
  );

  r.get(
    `${base}/policies/:docId`,
    {
      schema: {
        tags,
        summary: 'One policy document with its Markdown text',
        params: policyParamsSchema,
        response: { 200: policyDocWithBodySchema },
      },
    },
    async (req) => program.getPolicy(req.params.tenantId, caller(await guards.requireSession(req)), req.params.docId),
  );

  r.get(
    `${base}/policies/:docId/pdf`,
    {
      schema: {
        tags,
        summary: 'One policy document as PDF',
        params: policyParamsSchema,
        response: { 200: fileDownloadSchema('application/pdf') },
      },
    },
    async (req, reply) => {
      const f = await program.policyPdf(
        req.params.tenantId,
        caller(await guards.requireSession(req)),
        req.params.docId,
      );
      return reply
        .header('content-type', 'application/pdf')
        .header('content-disposition', download(f.fileName))
        .header('cache-control', 'private, no-store')
        .send(f.pdf);
    },
  );

  r.post(
    `${base}/policies/:docId/approve`,
    {
      schema: {
        tags,
        summary:
          'Approve a draft with its effective date and review date (it counts from the one until the other); ' +
          'the Affirming Official',
        params: policyParamsSchema,
        body: approvePolicyBodySchema,
        response: { 200: policyDocSchema },
      },
    },
    async (req) =>
      program.approvePolicy(
        req.params.tenantId,
        caller(await guards.requireSession(req)),
        req.params.docId,
        req.body.effectiveDate,
        req.body.reviewDate,
      ),
  );

  r.post(
    `${base}/policies/approve`,
    {
      schema: {
        tags,
        summary: 'Approve several drafts in one confirmation, all or none; the Affirming Official',
        description:
          'One effective date and review date (by default one year after today) for every draft named. When a ' +
          'document is missing or already approved, nothing is approved: `cmmc_policies_not_approvable` lists each ' +
          'in `details`.',
        params: tenantParamsSchema,
        body: approvePoliciesBodySchema,
        response: { 200: approvePoliciesResponseSchema },
      },
    },
    async (req) => program.approvePolicies(req.params.tenantId, caller(await guards.requireSession(req)), req.body),
  );

  r.put(
    `${base}/policies/:docId/review-date`,
    {
      schema: {
        tags,
        summary: 'Record a review of an approved policy: its next review-by date; the Affirming Official',
        description:
          'A policy past its review date no longer counts for scoring; setting a new date (after the effective ' +
          'date, not in the past, at most three years ahead) makes it count again.',
        params: policyParamsSchema,
        body: reviewDateBodySchema,
        response: { 200: policyDocSchema },
      },
    },
    async (req) =>
      program.setReviewDate(
        req.params.tenantId,
        caller(await guards.requireSession(req)),
        req.params.docId,
        req.body.reviewDate,
      ),
  );

  r.get(
    `${base}/score`,
    {
      schema: {
        tags,
        summary: 'The 15 requirements scored MET / NOT MET (no partial credit)',
        params: tenantParamsSchema,
        response: { 200: scoreResponseSchema },
      },
    },
    async (req) => program.score(req.params.tenantId, caller(await guards.requireSession(req))),
  );

  r.post(
    `${base}/sprs-confirmation`,
    {
      schema: {
        tags,
        summary: 'The Affirming Official confirms the SPRS entry they made (15/15 only); the service never files',
        params: tenantParamsSchema,
        body: sprsConfirmBodySchema,
        response: { 201: sprsConfirmationResponseSchema },
      },
    },
    async (req, reply) => {
      const s = await guards.requireSession(req);
      const res = await program.confirmSprs(req.params.tenantId, caller(s), req.body, {
        address: req.ip,
        userAgent: req.headers['user-agent'] ?? null,
      });
      return reply.code(201).send(res);
    },
  );

  r.get(
    `${base}/sprs-confirmation/proof`,
    {
      schema: {
        tags,
        summary: 'Download the SPRS proof file of the latest confirmation',
        params: tenantParamsSchema,
        response: { 200: fileDownloadSchema('PDF, PNG or JPEG as attached') },
      },
    },
    async (req, reply) => {
      const f = await program.openSprsProof(req.params.tenantId, caller(await guards.requireSession(req)));
      return reply
        .header('content-type', f.contentType)
        .header('content-disposition', f.disposition)
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('cache-control', 'private, no-store')
        .send(f.body);
    },
  );

  r.get(
    `${base}/export/controls.csv`,
    {
      schema: {
        tags,
        summary: 'Controls CSV (cmmc-controls-<YYYYMMDD>-<HHMMSS>.csv, UTF-8 BOM, formula-safe)',
        params: tenantParamsSchema,
        response: { 200: fileDownloadSchema('text/csv') },
      },
    },
    async (req, reply) => {
      const f = await program.controlsCsv(req.params.tenantId, caller(await guards.requireSession(req)));
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', download(f.fileName))
        .header('cache-control', 'private, no-store')
        .send(f.csv);
    },
  );

  r.get(
    `${base}/export/controls.json`,
    { schema: { tags, summary: 'Controls JSON', params: tenantParamsSchema, response: { 200: controlsJsonSchema } } },
    async (req, reply) => {
      const f = await program.controlsJson(req.params.tenantId, caller(await guards.requireSession(req)));
      return reply
        .header('content-disposition', download(f.fileName))
        .header('cache-control', 'private, no-store')
        .send(f.body);
    },
  );

  r.get(
    `${base}/export/evidence-pack.zip`,
    {
      schema: {
        tags,
        summary:
          'Evidence pack (zip): controls, attestations, device results, policies, confirmations, evidence files; no secrets',
        params: tenantParamsSchema,
        response: { 200: fileDownloadSchema('application/zip') },
      },
    },
    async (req, reply) => {
      const f = await program.evidencePack(req.params.tenantId, caller(await guards.requireSession(req)));
      return reply
        .header('content-type', 'application/zip')
        .header('content-disposition', download(f.fileName))
        .header('cache-control', 'private, no-store')
        .send(f.zip);
    },
  );

  // Handoff links from the bid portal: the page previews (never consumes); a signed-in owner or admin claims.
  r.get(
    '/api/v1/cmmc/handoff',
    {
      schema: {
        tags,
        summary: 'What a handoff link holds (does not use it up)',
        querystring: handoffPreviewQuerySchema,
        response: { 200: handoffPreviewResponseSchema },
      },
    },
    async (req) => {
      await guards.requireSession(req);
      return program.handoffPreview(req.query.token);
    },
  );

  r.post(
    `${base}/handoff/claim`,
    {
      schema: {
        tags,
        summary: 'Use a one-time handoff link for this tenant; returns the prefill for Scope',
        params: tenantParamsSchema,
        body: handoffClaimBodySchema,
        response: { 200: handoffClaimResponseSchema },
      },
    },
    async (req) => program.claimHandoff(req.params.tenantId, caller(await guards.requireSession(req)), req.body.token),
  );

  r.get(
    '/api/v1/staff/cmmc/profiles',
    {
      schema: {
        tags: ['staff'],
        summary: 'listCmmcProfilesStaff: profiles with device fields and the six tiles, sorted by CAGE code',
        querystring: staffQuerySchema,
        response: { 200: staffListResponseSchema },
      },
    },
    async (req) => {
      await guards.requireStaff(req);
      return program.listStaff(req.query);
    },
  );

  r.post(
    RENEWALS_HOOK_PATH,
    {
      schema: {
        tags: ['cron'],
        summary: 'Daily CMMC renewal sweep (day 335 renewal due, day 365 expired); safe to call twice',
        response: { 200: renewalSweepResponseSchema },
      },
      onRequest: async (req) => {
        if (!cronAuthorized(req, deps.cronSecret))
          throw appError('Unauthorized', 'Send Authorization: Bearer <CRON_SECRET> or x-cron-secret.');
        if (!req.headers['content-length'] || req.headers['content-length'] === '0') delete req.headers['content-type'];
      },
    },
    async () => program.renewalSweep(),
  );

  // Evidence uploads: multipart in this child scope only, one streamed file.
  await app.register(async (scope) => {
    await scope.register(multipart, {
      defParamCharset: 'utf8',
      limits: { fileSize: deps.evidenceMaxBytes + 1, files: 1, fields: 2, fieldSize: 1024, parts: 3, headerPairs: 100 },
    } as Parameters<typeof multipart>[1]);
    scope.withTypeProvider<ZodTypeProvider>().post(
      `${base}/attestations/:itemId/evidence`,
      {
        schema: {
          tags,
          summary: 'Attach an evidence file to an attestation item; owner or admin',
          params: itemParamsSchema,
          consumes: ['multipart/form-data'],
          response: { 201: evidenceUploadResponseSchema },
        },
      },
      async (req, reply) => {
        const s = await guards.requireSession(req);
        if (!req.isMultipart())
          throw appError('unsupported_media_type', 'Send the file as multipart/form-data in the field "file".');
        const result = await readOneFile(
          req.parts(),
          { missing: () => appError('evidence_file_missing', 'Attach the evidence file in the form field "file".') },
          (file) => program.uploadEvidence(req.params.tenantId, caller(s), req.params.itemId, file),
        );
        return reply.code(201).send(result);
      },
    );
    scope.withTypeProvider<ZodTypeProvider>().post(
      `${base}/sprs-confirmation/proof`,
      {
        schema: {
          tags,
          summary:
            'Attach a screenshot or PDF of the SPRS entry to the latest confirmation (PDF, PNG, JPEG); owner or admin',
          params: tenantParamsSchema,
          consumes: ['multipart/form-data'],
          response: { 201: sprsProofResponseSchema },
        },
      },
      async (req, reply) => {
        const s = await guards.requireSession(req);
        if (!req.isMultipart())
          throw appError('unsupported_media_type', 'Send the file as multipart/form-data in the field "file".');
        const result = await readOneFile(
          req.parts(),
          { missing: () => appError('evidence_file_missing', 'Attach the proof in the form field "file".') },
          (file) => program.attachSprsProof(req.params.tenantId, caller(s), file),
        );
        return reply.code(201).send(result);
      },
    );
  });
}
