// Text extraction for evidence review: PDF (unpdf, i.e. PDF.js), plain text and Markdown. Word
// files get a clear "save it as PDF first"; anything else is refused. Limits: EXTRACT_LIMITS
// (files, total bytes, pages per file, characters per file, time for all files). A PDF whose pages
// carry (almost) no text is a scan: it is reported as "not assessable", never guessed at.
//
// Extracted text is untrusted data. Nothing here interprets it; prompts delimit it (llm-prompts.ts).
import { cleanFileName } from '../lib/file-names.ts';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { normaliseText, unreadablePdf } from './llm-extract-pdf.ts';
import type { PdfTask } from './llm-extract-worker.ts';
import { llmError } from './llm-errors.ts';
import { LlmAbortedError } from './llm-gateway.ts';

export const EXTRACT_LIMITS = {
  files: 8,
  /** "About 8 MB" in all (docs/llm.md). */
  totalBytes: 8 * 1024 * 1024,
  pagesPerFile: 300,
  charsPerFile: 400_000,
  /** Wall-clock budget for extracting every file of one request. */
  timeMs: 20_000,
  /** Fewer characters than this on average per page: the PDF is a scan (image-only). */
  scannedCharsPerPage: 20,
} as const;
export type ExtractLimits = { -readonly [K in keyof typeof EXTRACT_LIMITS]: number };

export interface UploadedFile {
  fileName: string;
  data: Buffer;
}

export type DocumentKind = 'pdf' | 'text' | 'markdown';

export interface ExtractedDocument {
  fileName: string;
  kind: DocumentKind;
  size: number;
  /** Page texts, 1-based page n at index n-1; a text or Markdown file is one page. */
  pages: string[];
  /** Pages in the file (a PDF may have more than were read). */
  pageCount: number;
  /** false for scans (image-only PDFs) and unreadable PDFs: not assessable. */
  assessable: boolean;
  /** Why the file is not assessable, or what limit cut it short. */
  note?: string;
  truncated?: boolean;
}

const WORD_EXT = /\.(docx?|docm|dotx?|rtf|odt)$/i;
const TEXT_EXT = /\.(txt|text|log)$/i;
const MD_EXT = /\.(md|markdown|mdown|mkd)$/i;

/** A file name fit for display and citation (see cleanFileName), else its place in the upload. */
export const uploadedFileName = (name: string | undefined, index: number): string =>
  cleanFileName(name) || `file-${index + 1}`;

const isPdf = (b: Buffer) => b.subarray(0, 1024).includes('%PDF-');
const isOle = (b: Buffer) => b.length >= 8 && b.readUInt32BE(0) === 0xd0cf11e0 && b.readUInt32BE(4) === 0xa1b11ae1;
const isZipWord = (b: Buffer) =>
  b.length > 4 && b.readUInt32BE(0) === 0x504b0304 && b.subarray(0, 64 * 1024).includes('word/');

/** The kind of an uploaded file, or an llm_* error saying what to do instead. */
export function classify(f: UploadedFile): DocumentKind {
  if (WORD_EXT.test(f.fileName) || isOle(f.data) || isZipWord(f.data))
    throw llmError(
      'llm_word_document',
      `"${f.fileName}" is a Word document. Save it as PDF first (File → Save As → PDF), then upload the PDF.`,
      { details: { fileName: f.fileName } },
    );
  if (isPdf(f.data)) return 'pdf';
  if (TEXT_EXT.test(f.fileName) || MD_EXT.test(f.fileName) || !/\.[a-z0-9]{1,8}$/i.test(f.fileName)) {
    if (f.data.includes(0))
      throw llmError(
        'llm_file_type_not_supported',
        `"${f.fileName}" is not a text file. Upload PDF, plain text or Markdown.`,
        { details: { fileName: f.fileName } },
      );
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(f.data);
    } catch {
      throw llmError(
        'llm_file_type_not_supported',
        `"${f.fileName}" is not UTF-8 text. Upload PDF, plain text or Markdown.`,
        { details: { fileName: f.fileName } },
      );
    }
    return MD_EXT.test(f.fileName) ? 'markdown' : 'text';
  }
  throw llmError(
    'llm_file_type_not_supported',
    `"${f.fileName}" is not a supported file type. Upload PDF, plain text (.txt) or Markdown (.md); save Word files as PDF first.`,
    { details: { fileName: f.fileName } },
  );
}

/** Checks count and total size before anything is parsed. */
export function checkUploadLimits(
  files: readonly UploadedFile[],
  limits: Pick<ExtractLimits, 'files' | 'totalBytes'> = EXTRACT_LIMITS,
): void {
  if (files.length === 0)
    throw llmError(
      'llm_file_missing',
      'Attach at least one file (PDF, plain text or Markdown) in the form field "files".',
    );
  if (files.length > limits.files)
    throw llmError('llm_too_many_files', `Upload at most ${limits.files} files at once.`, {
      details: { maxFiles: limits.files },
    });
  const total = files.reduce((n, f) => n + f.data.length, 0);
  if (total > limits.totalBytes)
    throw llmError(
      'llm_files_too_large',
      `The files total ${(total / 1024 / 1024).toFixed(1)} MB; at most ${(limits.totalBytes / 1024 / 1024).toFixed(0)} MB in all are accepted.`,
      { details: { maxTotalBytes: limits.totalBytes } },
    );
}

// PDFs are read on up to two threads of their own (llm-extract-worker.ts), created when first
// needed and ended after a minute idle: PDF.js parsing is CPU work of up to seconds per request,
// which on the request thread would delay every other request, and a hostile file that exhausts
// the thread's heap then ends only that thread (the file is reported unreadable).
const PDF_THREADS = Math.max(1, Math.min(2, availableParallelism()));
const PDF_THREAD_IDLE_MS = 60_000;
const PDF_THREAD_HEAP_MB = 384;

interface PdfJob {
  task: Omit<PdfTask, 'id'>;
  resolve(doc: ExtractedDocument): void;
  reject(e: Error): void;
}
interface PdfThread {
  worker: Worker;
  job: PdfJob | null;
  idleTimer?: NodeJS.Timeout;
}

const threads = new Set<PdfThread>();
const queue: PdfJob[] = [];
let nextTaskId = 1;

function startThread(): PdfThread {
  const thread: PdfThread = {
    worker: new Worker(new URL('./llm-extract-worker.ts', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: PDF_THREAD_HEAP_MB },
    }),
    job: null,
  };
  threads.add(thread);
  const settled = () => {
    const job = thread.job;
    thread.job = null;
    return job;
  };
  thread.worker.on('message', (m: { doc?: ExtractedDocument; aborted?: boolean; error?: string }) => {
    const job = settled();
    if (job) {
      if (m.doc) job.resolve(m.doc);
      else if (m.aborted) job.reject(new LlmAbortedError());
      // PDF.js failed inside the document (not a limit): the file is unreadable, never a 500.
      else job.resolve(unreadablePdf({ fileName: job.task.fileName, data: job.task.data }));
    }
    idle(thread);
    pump();
  });
  // Out of memory or a crash: the file is unreadable; the next job gets a new thread.
  const gone = () => {
    if (!threads.delete(thread)) return;
    clearTimeout(thread.idleTimer);
    const job = settled();
    if (job) {
      if (Atomics.load(job.task.abort, 0) === 1) job.reject(new LlmAbortedError());
      else job.resolve(unreadablePdf({ fileName: job.task.fileName, data: job.task.data }));
    }
    pump();
  };
  thread.worker.on('error', gone);
  thread.worker.on('exit', gone);
  return thread;
}

/** An idle thread does not keep the process alive, and ends after a minute without work. */
function idle(thread: PdfThread): void {
  thread.worker.unref();
  clearTimeout(thread.idleTimer);
  thread.idleTimer = setTimeout(() => {
    if (!thread.job) void thread.worker.terminate();
  }, PDF_THREAD_IDLE_MS).unref();
}

function pump(): void {
  while (queue.length) {
    let thread = [...threads].find((t) => !t.job);
    if (!thread) {
      if (threads.size >= PDF_THREADS) return;
      thread = startThread();
    }
    const job = queue.shift()!;
    thread.job = job;
    clearTimeout(thread.idleTimer);
    thread.worker.ref();
    const data = new Uint8Array(job.task.data); // a copy the thread owns (transferred, not cloned)
    thread.worker.postMessage({ ...job.task, data, id: nextTaskId++ } satisfies PdfTask, [data.buffer]);
  }
}

function extractPdfOnThread(task: Omit<PdfTask, 'id'>): Promise<ExtractedDocument> {
  return new Promise((resolve, reject) => {
    queue.push({ task, resolve, reject });
    pump();
  });
}

function extractText(f: UploadedFile, kind: 'text' | 'markdown', limits: ExtractLimits): ExtractedDocument {
  let text = normaliseText(f.data.toString('utf8').replace(/^\uFEFF/, ''));
  let truncated: string | undefined;
  if (text.length > limits.charsPerFile) {
    text = text.slice(0, limits.charsPerFile);
    truncated = `Only the first ${limits.charsPerFile.toLocaleString('en-US')} characters were read.`;
  }
  const assessable = text.trim().length > 0;
  return {
    fileName: f.fileName,
    kind,
    size: f.data.length,
    pages: [text],
    pageCount: 1,
    assessable,
    ...(assessable
      ? truncated
        ? { note: truncated, truncated: true }
        : {}
      : { note: 'The file is empty. Not assessable.' }),
  };
}

/**
 * Extracts every file's text within the limits; throws an llm_* AppError for refused uploads, and
 * LlmAbortedError once `signal` aborted (the client went away).
 */
export async function extractDocuments(
  files: readonly UploadedFile[],
  limits: ExtractLimits = EXTRACT_LIMITS,
  signal?: AbortSignal,
): Promise<ExtractedDocument[]> {
  checkUploadLimits(files, limits);
  const names = new Set<string>();
  const kinds = files.map((f) => classify(f));
  const deadline = Date.now() + limits.timeMs;
  if (signal?.aborted) throw new LlmAbortedError();
  const abort = new Int32Array(new SharedArrayBuffer(4));
  const onAbort = () => Atomics.store(abort, 0, 1);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const docs = await Promise.all(
      files.map((f, i) => {
        // Citations name files, so names must be unique within a request.
        let name = f.fileName;
        for (let k = 2; names.has(name); k++) name = f.fileName.replace(/(\.[^.]*)?$/, ` (${k})$1`);
        names.add(name);
        const kind = kinds[i]!;
        return kind === 'pdf'
          ? extractPdfOnThread({ fileName: name, data: f.data, limits: { ...limits }, deadline, abort })
          : extractText({ ...f, fileName: name }, kind, limits);
      }),
    );
    if (signal?.aborted) throw new LlmAbortedError();
    return docs;
  } finally {
    onAbort(); // whatever is still being read for this request stops at its next page
    signal?.removeEventListener('abort', onAbort);
  }
}
