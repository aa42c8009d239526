// A mesh peer's view of our dispatch route, signed by code written apart from src/mesh (so a bug
// there cannot hide itself in the tests).
import { createHash, createHmac } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { App } from '../../src/server/app.ts';

export const DISPATCH = '/api/public/svc/dispatch';

export function peerSign(secret: string, caller: string, timestamp: string, body: string | Buffer): string {
  const bodyHash = createHash('sha256').update(body).digest('hex');
  return createHmac('sha256', secret).update([caller, timestamp, 'POST', DISPATCH, bodyHash].join('\n')).digest('hex');
}

export interface DispatchCall {
  caller: string;
  secret: string;
  /** An object is serialised once; a string or Buffer is sent byte for byte. */
  body: unknown;
  requestId?: string;
  timestamp?: string;
  at?: Date;
  headers?: Record<string, string | string[]>;
  omit?: ('x-svc-caller' | 'x-svc-timestamp' | 'x-svc-signature' | 'content-type')[];
}

export async function dispatch(app: App, c: DispatchCall): Promise<LightMyRequestResponse> {
  const raw = typeof c.body === 'string' || Buffer.isBuffer(c.body) ? c.body : JSON.stringify(c.body);
  const timestamp = c.timestamp ?? (c.at ?? new Date()).toISOString();
  const headers: Record<string, string | string[]> = {
    'content-type': 'application/json',
    'x-svc-caller': c.caller,
    'x-svc-timestamp': timestamp,
    'x-svc-signature': peerSign(c.secret, c.caller, timestamp, raw),
    ...(c.requestId ? { 'x-svc-request-id': c.requestId } : {}),
    ...c.headers,
  };
  for (const h of c.omit ?? []) delete headers[h];
  return app.inject({ method: 'POST', url: DISPATCH, headers, payload: raw });
}
