// The callback endpoint of out-of-band checks (any method, any path under /oob/<token>, no
// authentication: targets call it) and the signed worker route that reads a lease's callbacks.
// A callback is recorded in an onRequest hook, before any parsing or input rule, so that odd
// requests (the point of many such checks) still count; the answer is always the same.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  interactionsBodySchema,
  interactionsResponseSchema,
  scanIdParamsSchema,
  WORKER_API_PREFIX,
} from '../lib/worker-wire.ts';
import { registerWorkerRoutes, workerOf, type WorkerAuth } from '../workers/worker-auth.ts';
import { oobDnsToken } from './oob-dns.ts';
import type { OobService } from './oob-service.ts';

const MAX_BODY = 16_384;

/** Records an HTTP callback (request line, headers and the start of the body) and answers "ok". */
async function recordHttp(oob: OobService, token: string | null, req: FastifyRequest, reply: FastifyReply) {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req.raw as AsyncIterable<Buffer>) {
    if (size < MAX_BODY) chunks.push(c);
    size += c.length;
  }
  if (token) {
    const head = [`${req.raw.method} ${req.raw.url} HTTP/${req.raw.httpVersion}`];
    for (let i = 0; i < req.raw.rawHeaders.length; i += 2)
      head.push(`${req.raw.rawHeaders[i]}: ${req.raw.rawHeaders[i + 1]}`);
    const request = `${head.join('\r\n')}\r\n\r\n${Buffer.concat(chunks).subarray(0, MAX_BODY).toString('latin1')}`;
    await oob.record({ token, protocol: 'http', remoteAddress: req.ip, request });
  }
  return reply.code(200).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send('ok\n');
}

export function registerOobRoutes(app: FastifyInstance, deps: { oob: OobService; workerAuth: WorkerAuth }): void {
  const { oob } = deps;
  // With a DNS zone, callbacks are names under it: an HTTP request for such a name, on any path,
  // is a callback (the zone's A answer points here), whatever route its path would reach.
  const zone = oob.dnsDomain;
  if (zone)
    app.addHook('onRequest', async (req, reply) => {
      const host = (req.headers.host ?? '').toLowerCase().replace(/:\d+$/, '');
      if (!host.endsWith(`.${zone}`)) return;
      return recordHttp(oob, oobDnsToken(host, zone), req, reply);
    });
  void app.register(async (scope) => {
    scope.addHook('onRequest', async (req, reply) => {
      const token = /^\/oob\/([A-Za-z0-9]{12,40})(?:[/?#]|$)/.exec(req.raw.url ?? '')?.[1];
      return recordHttp(oob, token ?? null, req, reply);
    });
    scope.all('/oob/*', { schema: { hide: true } }, async (_req, reply) => reply.send('ok\n'));
  });

  registerWorkerRoutes(app, deps.workerAuth, (scope) => {
    scope.withTypeProvider<ZodTypeProvider>().post(
      `${WORKER_API_PREFIX}/scans/:scanId/interactions`,
      {
        schema: {
          tags: ['worker'],
          summary: 'Out-of-band callbacks received for a leased template scan',
          params: scanIdParamsSchema,
          body: interactionsBodySchema,
          response: { 200: interactionsResponseSchema },
        },
      },
      async (req) => {
        const w = workerOf(req);
        return oob.read(
          { workerId: w.workerId, tenantId: w.tenantId },
          req.params.scanId,
          req.body.leaseToken,
          req.body.after,
        );
      },
    );
  });
}
