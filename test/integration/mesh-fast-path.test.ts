// What only the direct dispatch path on a real socket can show (src/mesh/mesh-fast-path.ts): body
// limits while streaming, request ids, graceful shutdown draining and refusing, and that every
// other method and URL still reaches Fastify. The protocol itself is covered over both paths in
// mesh-dispatch.test.ts.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { dispatch, DISPATCH, peerSign, socketSend, type Send } from '../helpers/mesh.ts';

const RUN = Math.random().toString(36).slice(2, 8);
const peer = `fast-${RUN}`;
const SECRET = 'fast-path-secret';
const sfx = (n: string) => n.toUpperCase().replace(/[^A-Z0-9]/g, '_');
const env = {
  [`SVC_SECRET_FROM_${sfx(peer)}`]: SECRET,
  [`SVC_PEER_FLOWS_${sfx(peer)}`]: 'ping,health_check,event_report,cmmc_status',
  SVC_BID_PEER: peer,
  SVC_MAX_BODY_BYTES: '4096',
};

/** Sends raw bytes on a fresh connection and returns everything the server wrote until it closed or went quiet. */
function rawExchange(port: number, bytes: string[], quietMs = 300): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let out = '';
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      socket.destroy();
      resolve(out);
    };
    socket.on('data', (d) => {
      out += d.toString('utf8');
      clearTimeout(timer);
      timer = setTimeout(done, quietMs);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
    socket.on('error', reject);
    socket.on('connect', () => {
      for (const b of bytes) socket.write(b);
    });
  });
}

describe('direct dispatch path', () => {
  let t: TestApp;
  let send: Send;
  let port = 0;

  beforeAll(async () => {
    t = await createTestApp({ env });
    const origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = Number(new URL(origin).port);
    send = socketSend(origin);
  });
  afterAll(() => t.close());

  it('echoes a well-formed x-request-id and makes one up otherwise', async () => {
    const a = await dispatch(send, {
      caller: peer,
      secret: SECRET,
      body: { flow: 'ping', payload: {} },
      headers: { 'x-request-id': 'trace-123' },
    });
    expect(a.statusCode).toBe(200);
    expect(a.headers['x-request-id']).toBe('trace-123');
    const b = await dispatch(send, {
      caller: peer,
      secret: SECRET,
      body: { flow: 'ping', payload: {} },
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    expect(b.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses a chunked body that outgrows the limit while streaming, and closes that connection', async () => {
    const chunk = 'x'.repeat(3000);
    const head = `POST ${DISPATCH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const reply = await rawExchange(port, [
      head,
      `${chunk.length.toString(16)}\r\n${chunk}\r\n`,
      `${chunk.length.toString(16)}\r\n${chunk}\r\n`,
      '0\r\n\r\n',
    ]);
    expect(reply).toMatch(/^HTTP\/1\.1 413 /);
    expect(reply).toMatch(/connection: close/i);
    expect(reply).toContain('"error":"payload_too_large"');
    // The server is still fine for everyone else.
    expect(
      (await dispatch(send, { caller: peer, secret: SECRET, body: { flow: 'ping', payload: {} } })).statusCode,
    ).toBe(200);
  });

  it('refuses a declared oversized body before reading it', async () => {
    const head = `POST ${DISPATCH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n`;
    const reply = await rawExchange(port, [head]);
    expect(reply).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('answers pipelined calls on one connection in order, each with its own answer', async () => {
    // Answers are written once per event-loop turn (createAnswerBatch); several calls that arrive
    // together on one socket must still come back in request order.
    const requests = Array.from({ length: 6 }, (_, i) => {
      const body = JSON.stringify({ flow: 'ping', payload: { nonce: `n${i}` } });
      const ts = new Date().toISOString();
      return `POST ${DISPATCH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nx-svc-caller: ${peer}\r\nx-svc-timestamp: ${ts}\r\nx-svc-signature: ${peerSign(SECRET, peer, ts, body)}\r\nx-request-id: r${i}\r\n\r\n${body}`;
    });
    // One write with a bad signature in the middle: its 401 keeps its place too.
    requests.splice(
      3,
      0,
      requests[3]!
        .replace(/x-svc-signature: [0-9a-f]+/, `x-svc-signature: ${'0'.repeat(64)}`)
        .replace('x-request-id: r3', 'x-request-id: bad'),
    );
    const reply = await rawExchange(port, [requests.join('')]);
    const statuses = [...reply.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
    const ids = [...reply.matchAll(/x-request-id: (\S+)/gi)].map((m) => m[1]);
    const nonces = [...reply.matchAll(/"nonce":"(n\d)"/g)].map((m) => m[1]);
    expect(statuses).toEqual([200, 200, 200, 401, 200, 200, 200]);
    expect(ids).toEqual(['r0', 'r1', 'r2', 'bad', 'r3', 'r4', 'r5']);
    expect(nonces).toEqual(['n0', 'n1', 'n2', 'n3', 'n4', 'n5']);
  });

  it('leaves other methods and URLs to Fastify', async () => {
    const get = await send({ method: 'GET', url: DISPATCH });
    expect(get.statusCode).toBe(404);
    expect(get.json()).toMatchObject({ error: 'route_not_found' });
    // A query string is not the exact URL: Fastify's route answers it, with the same protocol.
    const viaRouter = await send({
      method: 'POST',
      url: `${DISPATCH}?via=router`,
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(viaRouter.statusCode).toBe(401);
    expect(viaRouter.json()).toMatchObject({ error: 'missing_svc_headers' });
    expect((await send({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});

describe('graceful shutdown on the direct path', () => {
  it('waits for a running call to answer, and refuses new calls while closing', async () => {
    const t = await createTestApp({ env });
    const origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const send = socketSend(origin);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    t.app.services.mesh.registerFlow('cmmc_status', {
      mutating: false,
      async run() {
        started();
        await gate;
        return { slow: true };
      },
    });
    const slow = dispatch(send, { caller: peer, secret: SECRET, body: { flow: 'cmmc_status', payload: {} } });
    await running;
    // A second connection opened before close, used after it started (keep-alive peers do this).
    const closing = t.app.close();
    let closed = false;
    void closing.then(() => (closed = true));
    const refused = await dispatch(send, { caller: peer, secret: SECRET, body: { flow: 'ping', payload: {} } }).catch(
      (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
    );
    if (!(refused instanceof Error)) {
      // The connection was still accepted: then the answer must be our 503, never a half-done call.
      expect(refused.statusCode).toBe(503);
      expect(refused.json()).toMatchObject({ error: 'service_unavailable' });
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(closed).toBe(false); // still waiting for the running call
    release();
    const answer = await slow;
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ slow: true });
    expect(answer.headers.connection).toBe('close'); // so keep-alive peers let the server go
    await closing;
    await t.database.close().catch(() => {});
  });
});
