// A mesh peer's view of our dispatch route, signed by code written apart from src/mesh (so a bug
// there cannot hide itself in the tests).
import { createHash, createHmac } from 'node:crypto';
import { request } from 'node:http';
import type { App } from '../../src/server/app.ts';

export const DISPATCH = '/api/public/svc/dispatch';

export function peerSign(secret: string, caller: string, timestamp: string, body: string | Buffer): string {
  const bodyHash = createHash('sha256').update(body).digest('hex');
  return createHmac('sha256', secret).update([caller, timestamp, 'POST', DISPATCH, bodyHash].join('\n')).digest('hex');
}

/** What a test reads from an answer, the same over app.inject() and over a real socket. */
export interface Reply {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  json(): any; // eslint-disable-line @typescript-eslint/no-explicit-any
}
export interface SendRequest {
  method: string;
  url: string;
  headers?: Record<string, string | string[]>;
  payload?: string | Buffer;
}
export type Send = (r: SendRequest) => Promise<Reply>;

export const injectSend =
  (app: App): Send =>
  async (r) =>
    app.inject(r);

/**
 * Requests over a real TCP connection to a listening server: the path production traffic takes
 * (the dispatch URL is answered before Fastify's router there). Array header values go out as
 * repeated header lines.
 */
export function socketSend(origin: string): Send {
  const { hostname, port } = new URL(origin);
  return (r) =>
    new Promise((resolve, reject) => {
      const req = request({ host: hostname, port, method: r.method, path: r.url, headers: r.headers ?? {} }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(r.payload);
    });
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

/** A signed dispatch call, through app.inject() or any other Send. */
export async function dispatch(to: App | Send, c: DispatchCall): Promise<Reply> {
  const send = typeof to === 'function' ? to : injectSend(to);
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
  return send({ method: 'POST', url: DISPATCH, headers, payload: raw });
}
