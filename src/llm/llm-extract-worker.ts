// A PDF thread of the evidence review (llm-extract.ts): reads one PDF per message, so PDF.js's
// parsing (seconds of CPU for hundreds of pages) runs beside the request thread, files of one
// request in parallel, and a hostile file that exhausts memory kills only this thread.
import { parentPort } from 'node:worker_threads';
import { ExtractAborted, extractPdf } from './llm-extract-pdf.ts';
import type { ExtractLimits } from './llm-extract.ts';

export interface PdfTask {
  id: number;
  fileName: string;
  data: Uint8Array;
  limits: ExtractLimits;
  deadline: number;
  /** Int32Array over a SharedArrayBuffer: [0] becomes 1 when the request is cancelled. */
  abort: Int32Array;
}

parentPort!.on('message', (task: PdfTask) => {
  extractPdf(
    { fileName: task.fileName, data: task.data },
    task.limits,
    task.deadline,
    () => Atomics.load(task.abort, 0) === 1,
  ).then(
    (doc) => parentPort!.postMessage({ id: task.id, doc }),
    (e: unknown) =>
      parentPort!.postMessage({
        id: task.id,
        aborted: e instanceof ExtractAborted,
        error: e instanceof ExtractAborted ? undefined : String(e),
      }),
  );
});
