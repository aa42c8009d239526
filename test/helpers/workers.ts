// Enrolled workers for tests: an enrollment code redeemed through the public route, the tenant's
// signing secret, and signed requests (bearer + X-Rampart-Signature over the exact body bytes,
// fresh sentAt and nonce) sent through inject.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { signBody } from '../../src/lib/worker-wire.ts';
import type { Response as InjectResponse } from 'light-my-request';
import type { TestApp } from './app.ts';
import { Client } from './client.ts';

export const WORKER_BASE = '/api/public/worker/v1';

export interface TestWorker {
  workerId: string;
  token: string;
  secret: string;
  /** Signed POST of `body` (sentAt and nonce added unless given) to a worker route. */
  post(path: string, body?: Record<string, unknown>): Promise<InjectResponse>;
  /** Signed POST of exact bytes (for replays and tampering). */
  postRaw(path: string, raw: string, signature?: string): Promise<InjectResponse>;
}

/** The tenant's signing secret, generating one the first time (the owner must be an admin). */
export async function signingSecret(owner: Client, tenantId: string): Promise<string> {
  const res = await owner.post(`/api/v1/tenants/${tenantId}/webhook-secret`, { graceHours: 0 });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().secret;
}

export async function enrollWorker(
  t: TestApp,
  owner: Client,
  tenantId: string,
  opts: { name?: string; secret: string; now?: () => Date },
): Promise<TestWorker> {
  const code = (await owner.post(`/api/v1/tenants/${tenantId}/worker-enrollments`)).json().code;
  const res = await new Client(t.app).post(`${WORKER_BASE}/enroll`, {
    code,
    name: opts.name ?? 'test worker',
    platform: 'linux/x64',
    version: '1.0.0',
  });
  expect(res.statusCode, res.body).toBe(201);
  const { workerId, token } = res.json() as { workerId: string; token: string };
  const now = opts.now ?? (() => new Date());
  const postRaw = (path: string, raw: string, signature = signBody(opts.secret, raw)) =>
    t.app.inject({
      method: 'POST',
      url: `${WORKER_BASE}/${path}`,
      payload: raw,
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
        'x-rampart-signature': signature,
      },
    });
  return {
    workerId,
    token,
    secret: opts.secret,
    postRaw,
    post: (path, body = {}) =>
      postRaw(
        path,
        JSON.stringify({ sentAt: now().toISOString(), nonce: randomBytes(16).toString('base64url'), ...body }),
      ),
  };
}
