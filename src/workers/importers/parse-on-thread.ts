// Parsing a stored report on a thread of its own (parse-thread.ts) with a capped heap: a report
// that exhausts the thread's memory, or makes no progress for stallMs, ends that thread and fails
// with ResourceExhausted, which the ingestion runner records as final (never retried), instead of
// taking the server down and, after a restart, taking the next replica down with it.
import { Worker } from 'node:worker_threads';
import {
  ImportError,
  type ImportedFinding,
  type ImportErrorCode,
  type ReportFormat,
  type ReportMetaJson,
} from './common.ts';

export type ToThread = { t: 'chunk'; buf?: ArrayBuffer; end?: boolean } | { t: 'ack' };
export type FromThread =
  | { t: 'pull' }
  | { t: 'findings'; findings: ImportedFinding[]; skipped: number }
  | { t: 'done'; meta: ReportMetaJson }
  | {
      t: 'importError';
      code: ImportErrorCode;
      format: ReportFormat | null;
      message: string;
      line: number | undefined;
      offset: number | undefined;
    }
  | { t: 'failed'; message: string };

/** The report needed more memory or time than a parse may use. */
export class ResourceExhausted extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResourceExhausted';
  }
}

export interface ParseThreadOptions {
  /** Old-generation heap of the thread. */
  heapMb?: number;
  batchSize?: number;
  /** Longest wait for the thread's next message while the runner waits for it. */
  stallMs?: number;
}

export interface ThreadedParse extends AsyncIterable<{ findings: ImportedFinding[]; skipped: number }> {
  /** Complete once iteration ended. */
  meta(): ReportMetaJson;
}

export const PARSE_THREAD_HEAP_MB = 160;

export function parseOnThread(
  format: ReportFormat,
  source: AsyncIterable<Buffer | string>,
  opts: ParseThreadOptions = {},
): ThreadedParse {
  let meta: ReportMetaJson | null = null;
  const heapMb = opts.heapMb ?? PARSE_THREAD_HEAP_MB;
  const stallMs = opts.stallMs ?? 120_000;
  async function* run(): AsyncGenerator<{ findings: ImportedFinding[]; skipped: number }> {
    const worker = new Worker(new URL('./parse-thread.ts', import.meta.url), {
      name: 'report-parse',
      workerData: { format, batchSize: opts.batchSize ?? 1_000 },
      resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 16 },
      stdout: false,
      stderr: false,
    });
    const it = (source as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
    const inbox: FromThread[] = [];
    let failure: Error | null = null;
    let wake: (() => void) | null = null;
    const notify = () => {
      const w = wake;
      wake = null;
      w?.();
    };
    let pulling = false;
    const pull = async () => {
      if (pulling) return;
      pulling = true;
      try {
        const r = await it.next();
        if (r.done) worker.postMessage({ t: 'chunk', end: true } satisfies ToThread);
        else {
          const copy = new Uint8Array(typeof r.value === 'string' ? Buffer.from(r.value) : r.value);
          worker.postMessage({ t: 'chunk', buf: copy.buffer } satisfies ToThread, [copy.buffer]);
        }
      } catch (e) {
        failure ??= e as Error;
        notify();
      } finally {
        pulling = false;
      }
    };
    worker.on('message', (m: FromThread) => {
      if (m.t === 'pull') void pull();
      else {
        inbox.push(m);
        notify();
      }
    });
    worker.on('error', (e: Error & { code?: string }) => {
      failure ??=
        e.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new ResourceExhausted(
              `Reading the report needed more than the ${heapMb} MB a report may use; it was stopped.`,
            )
          : new Error(`The report reader stopped: ${e.message}`);
      notify();
    });
    worker.on('exit', () => {
      failure ??= new Error('The report reader stopped unexpectedly.');
      notify();
    });
    try {
      for (;;) {
        while (inbox.length === 0 && !failure) {
          let timer: NodeJS.Timeout | undefined;
          await new Promise<void>((resolve) => {
            wake = resolve;
            timer = setTimeout(() => {
              failure ??= new ResourceExhausted(
                `Reading the report made no progress for ${Math.round(stallMs / 1000)} s; it was stopped.`,
              );
              resolve();
            }, stallMs);
          });
          clearTimeout(timer);
        }
        const m = inbox.shift();
        if (!m) throw failure!;
        if (m.t === 'findings') {
          worker.postMessage({ t: 'ack' } satisfies ToThread);
          yield { findings: m.findings, skipped: m.skipped };
        } else if (m.t === 'done') {
          meta = m.meta;
          return;
        } else if (m.t === 'importError') {
          throw new ImportError(m.code, m.format, m.message, { line: m.line, offset: m.offset }, true);
        } else if (m.t === 'failed') {
          throw new Error(m.message);
        }
      }
    } finally {
      worker.removeAllListeners('exit');
      await worker.terminate();
      await it.return?.();
    }
  }
  return {
    [Symbol.asyncIterator]: run,
    meta: () => {
      if (!meta) throw new Error('The report has not been read to its end');
      return meta;
    },
  };
}
