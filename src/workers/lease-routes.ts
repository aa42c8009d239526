// Signed worker routes for leasing and report uploads (docs/worker-protocol.md), and the built-in
// storage PUT that the upload URL points at (authenticated by the URL's own signature).
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { isAppError } from '../lib/errors.ts';
import type { ArchiveService } from './archive-service.ts';
import type { EnrollmentService } from './enrollment-service.ts';
import type { LeaseService } from './lease-service.ts';
import type { UploadService } from './upload-service.ts';
import { registerWorkerRoutes, workerOf, type WorkerAuth } from './worker-auth.ts';
import {
  archiveBodySchema,
  failBodySchema,
  failResponseSchema,
  heartbeatLeasesBodySchema,
  heartbeatLeasesResponseSchema,
  leaseBodySchema,
  leaseResponseSchema,
  legacyReportBodySchema,
  okResponseSchema,
  progressBodySchema,
  progressResponseSchema,
  releaseBodySchema,
  reportFinalizeBodySchema,
  reportFinalizedSchema,
  reportInitBodySchema,
  reportInitResponseSchema,
  scanIdParamsSchema,
  uploadParamsSchema,
  uploadPutResponseSchema,
  uploadQuerySchema,
  WORKER_API_PREFIX,
} from '../lib/worker-wire.ts';

export interface LeaseRoutesDeps {
  workerAuth: WorkerAuth;
  leases: LeaseService;
  uploads: UploadService;
  archives: ArchiveService;
  enrollments: EnrollmentService;
  clock: { now(): Date };
  /** Body limit of the legacy single-shot report route. */
  legacyReportMaxBytes: number;
}

export function registerLeaseRoutes(app: FastifyInstance, deps: LeaseRoutesDeps): void {
  const { leases, uploads, enrollments } = deps;
  const tags = ['worker'];
  const who = (req: FastifyRequest) => {
    const w = workerOf(req);
    return { workerId: w.workerId, tenantId: w.tenantId };
  };

  registerWorkerRoutes(app, deps.workerAuth, (scope) => {
    const r = scope.withTypeProvider<ZodTypeProvider>();

    r.post(
      `${WORKER_API_PREFIX}/lease`,
      {
        schema: {
          tags,
          summary: 'Long poll (≤ 25 s) for a scan to run; null when none came',
          body: leaseBodySchema,
          response: { 200: leaseResponseSchema },
        },
      },
      async (req) => {
        // A caller that hangs up stops the wait, so no lease is handed to a closed connection.
        const gone = new AbortController();
        const onClose = () => gone.abort();
        req.raw.socket.once('close', onClose);
        try {
          return {
            lease: await leases.lease(
              who(req),
              { kinds: req.body.kinds, waitSeconds: req.body.waitSeconds },
              gone.signal,
            ),
          };
        } finally {
          req.raw.socket.off('close', onClose);
        }
      },
    );

    r.post(
      `${WORKER_API_PREFIX}/heartbeat`,
      {
        schema: {
          tags,
          summary:
            'Signed liveness report: records last seen and version, extends held leases, tells which were cancelled or lost',
          body: heartbeatLeasesBodySchema,
          response: { 200: heartbeatLeasesResponseSchema },
        },
      },
      async (req) => {
        const w = workerOf(req);
        if (req.body.version) await enrollments.recordVersion(w.workerId, req.body.version);
        const states = await leases.heartbeat(who(req), req.body.leases);
        return { ok: true as const, workerId: w.workerId, serverTime: deps.clock.now().toISOString(), leases: states };
      },
    );

    r.post(
      `${WORKER_API_PREFIX}/scans/:scanId/progress`,
      {
        schema: {
          tags,
          summary: 'Progress under a lease (extends it)',
          params: scanIdParamsSchema,
          body: progressBodySchema,
          response: { 200: progressResponseSchema },
        },
      },
      async (req) => ({ ok: true as const, ...(await leases.progress(who(req), req.params.scanId, req.body)) }),
    );

    r.post(
      `${WORKER_API_PREFIX}/scans/:scanId/archive`,
      {
        schema: {
          tags,
          summary:
            'The uploaded image archive a leased container scan reads (bytes; X-Rampart-Sha256 names their digest)',
          params: scanIdParamsSchema,
          body: archiveBodySchema,
        },
      },
      async (req, reply) => {
        const a = await deps.archives.open(who(req), req.params.scanId, req.body.leaseToken);
        return reply
          .header('content-type', a.format === 'tar+gzip' ? 'application/gzip' : 'application/x-tar')
          .header('content-length', String(a.size))
          .header('x-rampart-sha256', a.sha256)
          .header('content-disposition', `attachment; filename="${a.fileName.replace(/[^\w.-]+/g, '_')}"`)
          .send(a.body);
      },
    );

    r.post(
      `${WORKER_API_PREFIX}/scans/:scanId/release`,
      {
        schema: {
          tags,
          summary: 'Give a lease back unfinished; the scan is queued again',
          params: scanIdParamsSchema,
          body: releaseBodySchema,
          response: { 200: okResponseSchema },
        },
      },
      async (req) => {
        await leases.release(who(req), req.params.scanId, req.body.leaseToken);
        return { ok: true as const };
      },
    );

    r.post(
      `${WORKER_API_PREFIX}/scans/:scanId/fail`,
      {
        schema: {
          tags,
          summary: 'Report that the scanner could not run',
          params: scanIdParamsSchema,
          body: failBodySchema,
          response: { 200: failResponseSchema },
        },
      },
      async (req) => ({ ok: true as const, status: await leases.fail(who(req), req.params.scanId, req.body) }),
    );

    r.post(
      `${WORKER_API_PREFIX}/report/init`,
      {
        schema: {
          tags,
          summary: 'Start a two-phase report upload; answers a signed PUT URL (≤ 15 min)',
          body: reportInitBodySchema,
          response: { 201: reportInitResponseSchema },
        },
      },
      async (req, reply) => reply.code(201).send(await uploads.init(who(req), req.body)),
    );

    r.post(
      `${WORKER_API_PREFIX}/report/finalize`,
      {
        schema: {
          tags,
          summary: 'Complete an upload: verifies size and SHA-256, queues ingestion (idempotent)',
          body: reportFinalizeBodySchema,
          response: { 200: reportFinalizedSchema },
        },
      },
      async (req) => uploads.finalize(who(req), req.body),
    );
  });

  // The legacy single shot carries the report in its signed body: a scope with a larger limit.
  registerWorkerRoutes(
    app,
    deps.workerAuth,
    (scope) => {
      scope.withTypeProvider<ZodTypeProvider>().post(
        `${WORKER_API_PREFIX}/report`,
        {
          schema: {
            tags,
            summary: 'Legacy single-shot report upload (report text inside the signed JSON body)',
            body: legacyReportBodySchema,
            response: { 200: reportFinalizedSchema },
          },
        },
        async (req) => uploads.legacy(who(req), req.body),
      );
    },
    { bodyLimit: deps.legacyReportMaxBytes, fileFields: ['report'] },
  );

  // Built-in storage PUT: the URL's signature is the credential; bytes stream straight to storage.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    const declared = (req: FastifyRequest) => {
      const n = Number(req.headers['content-length']);
      return req.headers['content-length'] !== undefined && Number.isSafeInteger(n) && n >= 0 ? n : null;
    };
    const refuse = async <T>(reply: FastifyReply, fn: () => Promise<T>): Promise<T> => {
      try {
        return await fn();
      } catch (e) {
        // The rest of a refused upload may still be arriving: answer and close.
        if (
          isAppError(e) &&
          (e.code === 'payload_too_large' || e.code === 'upload_mismatch' || e.code.startsWith('upload_url'))
        )
          void reply.header('connection', 'close');
        throw e;
      }
    };
    scope.withTypeProvider<ZodTypeProvider>().put(
      `${WORKER_API_PREFIX}/uploads/:uploadId`,
      {
        schema: {
          tags,
          summary: 'Upload target of report/init on built-in storage (HMAC-signed URL)',
          params: uploadParamsSchema,
          querystring: uploadQuerySchema,
          response: { 200: uploadPutResponseSchema },
        },
      },
      async (req, reply) => {
        const body =
          req.body instanceof Readable ? req.body : Readable.from(Buffer.isBuffer(req.body) ? [req.body] : []);
        return refuse(reply, () =>
          uploads.put({
            uploadId: req.params.uploadId,
            expires: req.query.expires,
            signature: req.query.signature,
            contentLength: declared(req),
            body,
          }),
        );
      },
    );
  });
}
