// A local OpenAI-compatible chat-completions server on loopback for the language-model tests:
// real HTTP, streaming SSE chunks, non-streaming (JSON) answers, scripted failures (429 with
// Retry-After, 402, malformed output, slow first token, no answer at all, structured output that
// requires response_format json_schema), and a record of every
// request (headers and body) so tests can check what the platform sent, and whether the client
// went away before the answer ended (the stop button).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32, deflateSync } from 'node:zlib';
import { PDFDocument, StandardFonts } from 'pdf-lib';

export type LlmScript =
  /**
   * An SSE stream of content pieces; `firstDelayMs` before the first, `delayMs` between the rest;
   * `cutAfter` drops the connection after that many; `holdAfter`: after that many, nothing more is
   * sent and the connection stays open until the client closes it (a model still answering, with
   * no timing to race against).
   */
  | { kind: 'stream'; chunks: string[]; firstDelayMs?: number; delayMs?: number; cutAfter?: number; holdAfter?: number }
  /**
   * A whole (non-streaming) answer with this content; streamed as one piece when the request
   * streams. `delayMs`: the response headers at once, the body only after this long (a model
   * still thinking; only the client going away ends it sooner).
   */
  | { kind: 'json'; content: string; delayMs?: number }
  /** An error status, optionally with Retry-After (seconds or an HTTP date) and other headers (e.g. retry-after-ms). */
  | { kind: 'status'; status: number; retryAfter?: string; message?: string; headers?: Record<string, string> }
  /**
   * A server enforcing structured output: answers `content` (non-streaming) only when the request
   * asked for response_format json_schema with a schema; otherwise 400, as such a server would.
   */
  | { kind: 'response_format'; content: string }
  /** Bytes that are not an OpenAI answer. */
  | { kind: 'malformed' }
  /** Accepts the request and never answers (connect / header timeout). */
  | { kind: 'hang' };

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: {
    model?: string;
    stream?: boolean;
    messages?: { role: string; content: string }[];
    response_format?: {
      type: string;
      json_schema?: { name?: string; strict?: boolean; schema?: Record<string, unknown> };
    };
    [k: string]: unknown;
  };
  raw: string;
  /** The client closed the connection before the answer was complete. */
  closedEarly: boolean;
  /** Content pieces written before the end (or the close). */
  written: number;
  /** performance.now() when the first content piece was written. */
  firstTokenAt?: number;
}

export interface LlmServer {
  /** Base URL for LLM_BASE_URL, ending in /v1. */
  url: string;
  requests: RecordedRequest[];
  /** Scripts for the next requests, in order; when none is queued, `fallback` answers. */
  enqueue(...scripts: LlmScript[]): void;
  fallback: (req: RecordedRequest) => LlmScript;
  /** Resolves once a request's connection has closed (after its answer or when the client left). */
  closed(index: number): Promise<void>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function chunk(content: string | null, finish: string | null): string {
  const delta = content === null ? {} : { role: 'assistant', content };
  return `data: ${JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'test-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

export async function startLlmServer(
  opts: { fallback?: (req: RecordedRequest) => LlmScript } = {},
): Promise<LlmServer> {
  const queue: LlmScript[] = [];
  const requests: RecordedRequest[] = [];
  const closeWaiters = new Map<number, { promise: Promise<void>; resolve: () => void }>();
  const waiter = (i: number) => {
    let w = closeWaiters.get(i);
    if (!w) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      w = { promise, resolve };
      closeWaiters.set(i, w);
    }
    return w;
  };
  const hanging = new Set<ServerResponse>();

  const server: Server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const raw = Buffer.concat(parts).toString('utf8');
    let body: RecordedRequest['body'] = {};
    try {
      body = JSON.parse(raw) as RecordedRequest['body'];
    } catch {
      // recorded as is
    }
    const rec: RecordedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body,
      raw,
      closedEarly: false,
      written: 0,
    };
    const index = requests.push(rec) - 1;
    let ended = false;
    res.on('close', () => {
      if (!ended) rec.closedEarly = true;
      waiter(index).resolve();
    });
    const script = queue.shift() ?? api.fallback(rec);
    const alive = () => !res.destroyed && !rec.closedEarly;
    if (!/\/chat\/completions$/.test(rec.url)) {
      ended = true;
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    // A structured-output script is a JSON answer once the request asked for the schema.
    const effective: LlmScript =
      script.kind === 'response_format'
        ? body.response_format?.type === 'json_schema' && body.response_format.json_schema?.schema
          ? { kind: 'json', content: script.content }
          : { kind: 'status', status: 400, message: 'response_format json_schema is required by this server' }
        : script;
    switch (effective.kind) {
      case 'hang':
        hanging.add(res);
        return;
      case 'status': {
        ended = true;
        const headers: Record<string, string> = { 'content-type': 'application/json', ...effective.headers };
        if (effective.retryAfter !== undefined) headers['retry-after'] = effective.retryAfter;
        res.writeHead(effective.status, headers).end(
          JSON.stringify({
            error: {
              message: effective.message ?? `status ${effective.status}`,
              type: 'test_error',
              code: String(effective.status),
            },
          }),
        );
        return;
      }
      case 'malformed': {
        ended = true;
        if (body.stream)
          res
            .writeHead(200, { 'content-type': 'text/event-stream' })
            .end('data: {"this is": not json\n\ndata: [DONE]\n\n');
        else res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices": "not an array"');
        return;
      }
      case 'json': {
        if (body.stream) {
          ended = true;
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          rec.firstTokenAt = performance.now();
          rec.written = 1;
          res.end(chunk(effective.content, null) + chunk(null, 'stop') + 'data: [DONE]\n\n');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        if (effective.delayMs) {
          res.flushHeaders();
          // Ends early when the client goes away, so no timer outlives the test.
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, effective.delayMs);
            res.once('close', () => {
              clearTimeout(t);
              resolve();
            });
          });
          if (!alive()) return;
        }
        ended = true;
        res.end(
          JSON.stringify({
            id: 'chatcmpl-test',
            object: 'chat.completion',
            created: 1_700_000_000,
            model: 'test-model',
            choices: [{ index: 0, message: { role: 'assistant', content: effective.content }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
          }),
        );
        return;
      }
      case 'stream': {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.flushHeaders();
        for (const [i, piece] of effective.chunks.entries()) {
          const wait = i === 0 ? (effective.firstDelayMs ?? 0) : (effective.delayMs ?? 0);
          if (wait) await sleep(wait);
          if (!alive()) return;
          if (i === 0) rec.firstTokenAt = performance.now();
          res.write(chunk(piece, null));
          rec.written += 1;
          if (effective.cutAfter !== undefined && rec.written >= effective.cutAfter) {
            // The connection drops mid-answer.
            await sleep(20);
            res.destroy();
            return;
          }
          if (effective.holdAfter !== undefined && rec.written >= effective.holdAfter) {
            // Still "answering": only the client going away (or the server closing) ends it.
            hanging.add(res);
            await new Promise<void>((resolve) => res.once('close', () => resolve()));
            return;
          }
        }
        if (!alive()) return;
        ended = true;
        res.end(chunk(null, 'stop') + 'data: [DONE]\n\n');
        return;
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const api: LlmServer = {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...s) => void queue.push(...s),
    fallback:
      opts.fallback ??
      ((r) =>
        r.body.stream
          ? { kind: 'stream', chunks: ['Hello ', 'from ', 'the ', 'test ', 'model.'] }
          : { kind: 'json', content: 'Hello from the test model.' }),
    closed: (i) => waiter(i).promise,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return api;
}

/** The text of all messages of a recorded request (system and user). */
export function promptText(r: RecordedRequest): string {
  return (r.body.messages ?? [])
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n');
}

// ---- generated documents for the evidence-review tests -----------------------------------------

/** A text PDF: one page per entry, the text wrapped at ~90 characters (ASCII only: WinAnsi font). */
export async function makeTextPdf(pages: string[]): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const page = doc.addPage([612, 792]);
    const lines: string[] = [];
    for (const para of text.split('\n')) {
      let line = '';
      for (const word of para.split(/\s+/)) {
        if ((line + ' ' + word).length > 90) {
          lines.push(line);
          line = word;
        } else line = line ? `${line} ${word}` : word;
      }
      lines.push(line);
    }
    let y = 760;
    for (const l of lines) {
      if (y < 30) break;
      page.drawText(l, { x: 40, y, size: 10, font });
      y -= 13;
    }
  }
  return Buffer.from(await doc.save());
}

/**
 * Encodes 8-bit greyscale rows as a PNG: `rows` holds `height` rows of one filter byte (0) and
 * `width` pixels. The test PDFs and the LLM bench both build their images with it.
 */
export function encodeGreyscalePng(width: number, height: number, rows: Buffer, level = 6): Buffer {
  const chunkOf = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td) >>> 0);
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunkOf('IHDR', ihdr),
    chunkOf('IDAT', deflateSync(rows, { level })),
    chunkOf('IEND', Buffer.alloc(0)),
  ]);
}

function png(width: number, height: number): Buffer {
  const rows = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) rows[y * (width + 1) + 1 + x] = (x * 7 + y * 13) & 0xff;
  return encodeGreyscalePng(width, height, rows);
}

/** An image-only PDF (what a scanner produces): pages with a picture and no text. */
export async function makeImagePdf(pageCount = 2): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const image = await doc.embedPng(png(200, 260));
  for (let i = 0; i < pageCount; i++) {
    const page = doc.addPage([612, 792]);
    page.drawImage(image, { x: 40, y: 40, width: 532, height: 712 });
  }
  return Buffer.from(await doc.save());
}
