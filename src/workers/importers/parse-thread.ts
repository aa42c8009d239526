// The thread a stored report is parsed on during ingestion (parse-on-thread.ts starts it). Its
// heap is capped, so a report that would exhaust memory ends this thread, never the server. It
// pulls the report's bytes from the server thread chunk by chunk and sends findings back in
// batches, waiting for the server to take them (at most MAX_UNACKED batches in flight), so both
// sides hold a bounded amount whatever the report's size.
import { parentPort, workerData } from 'node:worker_threads';
import { ImportError, metaJson } from './common.ts';
import { parseReport, type ImportedFinding, type ReportFormat } from './index.ts';
import type { FromThread, ToThread } from './parse-on-thread.ts';

const port = parentPort!;
const { format, batchSize } = workerData as { format: ReportFormat; batchSize: number };
const MAX_UNACKED = 3;

let wantChunk: ((m: Buffer | null) => void) | null = null;
let ack: (() => void) | null = null;
let unacked = 0;
port.on('message', (m: ToThread) => {
  if (m.t === 'chunk') wantChunk?.(m.end ? null : Buffer.from(m.buf!));
  else if (m.t === 'ack') {
    unacked -= 1;
    ack?.();
  }
});

async function* bytes(): AsyncGenerator<Buffer> {
  for (;;) {
    const chunk = await new Promise<Buffer | null>((resolve) => {
      wantChunk = resolve;
      port.postMessage({ t: 'pull' } satisfies FromThread);
    });
    wantChunk = null;
    if (chunk === null) return;
    yield chunk;
  }
}

async function send(findings: ImportedFinding[], skipped: number): Promise<void> {
  while (unacked >= MAX_UNACKED) await new Promise<void>((resolve) => (ack = resolve));
  unacked += 1;
  port.postMessage({ t: 'findings', findings, skipped } satisfies FromThread);
}

const report = parseReport(format, bytes());
try {
  let batch: ImportedFinding[] = [];
  for await (const f of report) {
    batch.push(f);
    if (batch.length >= batchSize) {
      await send(batch, report.meta.skipped);
      batch = [];
    }
  }
  if (batch.length) await send(batch, report.meta.skipped);
  port.postMessage({ t: 'done', meta: metaJson(report.meta) } satisfies FromThread);
} catch (e) {
  if (e instanceof ImportError) {
    port.postMessage({
      t: 'importError',
      code: e.code,
      format: e.format,
      message: e.message,
      line: e.line,
      offset: e.offset,
    } satisfies FromThread);
  } else {
    port.postMessage({
      t: 'failed',
      message: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
    } satisfies FromThread);
  }
}
