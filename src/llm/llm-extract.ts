// Text extraction for evidence review: PDF (unpdf, i.e. PDF.js), plain text and Markdown. Word
// files get a clear "save it as PDF first"; anything else is refused. Limits: EXTRACT_LIMITS
// (files, total bytes, pages per file, characters per file, time for all files). A PDF whose pages
// carry (almost) no text is a scan: it is reported as "not assessable", never guessed at.
//
// Extracted text is untrusted data. Nothing here interprets it; prompts delimit it (llm-prompts.ts).
import { getDocumentProxy } from 'unpdf';
import { llmError } from './llm-errors.ts';
import { LlmAbortedError } from './llm-gateway.ts';

export const EXTRACT_LIMITS = {
  files: 8,
  /** "About 8 MB" in all (spec limits table). */
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

/** A file name fit for display and citation: no path, no control characters, bounded. */
export function cleanFileName(name: string | undefined, index: number): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const clean = base.replace(/[\u0000-\u001f\u007f<>]/g, '').trim().slice(0, 200);
  return clean || `file-${index + 1}`;
}

const isPdf = (b: Buffer) => b.subarray(0, 1024).includes('%PDF-');
const isOle = (b: Buffer) => b.length >= 8 && b.readUInt32BE(0) === 0xd0cf11e0 && b.readUInt32BE(4) === 0xa1b11ae1;
const isZipWord = (b: Buffer) => b.length > 4 && b.readUInt32BE(0) === 0x504b0304 && b.subarray(0, 64 * 1024).includes('word/');

/** The kind of an uploaded file, or an llm_* error saying what to do instead. */
export function classify(f: UploadedFile): DocumentKind {
  if (WORD_EXT.test(f.fileName) || isOle(f.data) || isZipWord(f.data))
    throw llmError('llm_word_document', `"${f.fileName}" is a Word document. Save it as PDF first (File → Save As → PDF), then upload the PDF.`, { details: { fileName: f.fileName } });
  if (isPdf(f.data)) return 'pdf';
  if (TEXT_EXT.test(f.fileName) || MD_EXT.test(f.fileName) || !/\.[a-z0-9]{1,8}$/i.test(f.fileName)) {
    if (f.data.includes(0)) throw llmError('llm_file_type_not_supported', `"${f.fileName}" is not a text file. Upload PDF, plain text or Markdown.`, { details: { fileName: f.fileName } });
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(f.data);
    } catch {
      throw llmError('llm_file_type_not_supported', `"${f.fileName}" is not UTF-8 text. Upload PDF, plain text or Markdown.`, { details: { fileName: f.fileName } });
    }
    return MD_EXT.test(f.fileName) ? 'markdown' : 'text';
  }
  throw llmError('llm_file_type_not_supported', `"${f.fileName}" is not a supported file type. Upload PDF, plain text (.txt) or Markdown (.md); save Word files as PDF first.`, { details: { fileName: f.fileName } });
}

/** Checks count and total size before anything is parsed. */
export function checkUploadLimits(files: readonly UploadedFile[], limits: Pick<ExtractLimits, 'files' | 'totalBytes'> = EXTRACT_LIMITS): void {
  if (files.length === 0) throw llmError('llm_file_missing', 'Attach at least one file (PDF, plain text or Markdown) in the form field "files".');
  if (files.length > limits.files) throw llmError('llm_too_many_files', `Upload at most ${limits.files} files at once.`, { details: { maxFiles: limits.files } });
  const total = files.reduce((n, f) => n + f.data.length, 0);
  if (total > limits.totalBytes) throw llmError('llm_files_too_large', `The files total ${(total / 1024 / 1024).toFixed(1)} MB; at most ${(limits.totalBytes / 1024 / 1024).toFixed(0)} MB in all are accepted.`, { details: { maxTotalBytes: limits.totalBytes } });
}

class ExtractTimeout extends Error {}

/** `p`, or an ExtractTimeout once the deadline passed (PDF.js yields often enough for the timer to run). */
function beforeDeadline<T>(p: Promise<T>, deadline: number): Promise<T> {
  const left = deadline - Date.now();
  if (left <= 0) {
    p.catch(() => undefined);
    return Promise.reject(new ExtractTimeout());
  }
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new ExtractTimeout()), left)));
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

const normalise = (s: string) => s.replace(/\r\n?/g, '\n').replace(/[ \t\f\v]+/g, ' ');

async function extractPdf(f: UploadedFile, limits: ExtractLimits, deadline: number, signal?: AbortSignal): Promise<ExtractedDocument> {
  const base = { fileName: f.fileName, kind: 'pdf' as const, size: f.data.length };
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // A copy: PDF.js may transfer (detach) the buffer it is given.
    const loading = getDocumentProxy(new Uint8Array(f.data), { isEvalSupported: false, maxImageSize: 1, stopAtErrors: false });
    pdf = await beforeDeadline(loading, deadline).catch((e: unknown) => {
      // Opened too late: close it once it is open.
      if (e instanceof ExtractTimeout) loading.then((d) => d.destroy()).catch(() => undefined);
      throw e;
    });
  } catch (e) {
    if (e instanceof ExtractTimeout) return { ...base, pages: [], pageCount: 0, assessable: false, note: 'The time limit for reading the files was reached before this PDF could be opened. Not assessable; upload fewer or smaller files.' };
    return { ...base, pages: [], pageCount: 0, assessable: false, note: 'The PDF could not be read (damaged or password-protected). Not assessable.' };
  }
  try {
    const pageCount = pdf.numPages;
    const pages: string[] = [];
    let chars = 0;
    let truncated: string | undefined;
    for (let n = 1; n <= pageCount; n++) {
      if (n > limits.pagesPerFile) {
        truncated = `Only the first ${limits.pagesPerFile} of ${pageCount} pages were read.`;
        break;
      }
      if (signal?.aborted) throw new LlmAbortedError();
      if (Date.now() > deadline) {
        truncated = `Reading stopped at page ${n - 1} of ${pageCount}: the time limit for extraction was reached.`;
        break;
      }
      let page: Awaited<ReturnType<typeof pdf.getPage>>;
      let content: Awaited<ReturnType<typeof page.getTextContent>>;
      try {
        page = await beforeDeadline(pdf.getPage(n), deadline);
        content = await beforeDeadline(page.getTextContent(), deadline);
      } catch (e) {
        if (!(e instanceof ExtractTimeout)) throw e;
        truncated = `Reading stopped at page ${n - 1} of ${pageCount}: the time limit for extraction was reached.`;
        break;
      }
      let text = '';
      for (const item of content.items) {
        if ('str' in item) text += item.str + (item.hasEOL ? '\n' : ' ');
      }
      page.cleanup();
      text = normalise(text).trim();
      if (chars + text.length > limits.charsPerFile) {
        pages.push(text.slice(0, Math.max(0, limits.charsPerFile - chars)));
        truncated = `Only the first ${limits.charsPerFile.toLocaleString('en-US')} characters were read.`;
        break;
      }
      chars += text.length;
      pages.push(text);
    }
    const textChars = pages.reduce((a, p) => a + p.replace(/\s/g, '').length, 0);
    if (pages.length > 0 && textChars < limits.scannedCharsPerPage * pages.length && textChars < 200)
      return { ...base, pages: pages.map(() => ''), pageCount, assessable: false, note: 'No extractable text: the PDF looks scanned (image-only). Not assessable; upload a text PDF (export it from the source document, or run OCR first).' };
    if (pages.length === 0) return { ...base, pages, pageCount, assessable: false, note: truncated ? `${truncated} Not assessable.` : 'The PDF has no pages. Not assessable.' };
    return { ...base, pages, pageCount, assessable: true, ...(truncated ? { note: truncated, truncated: true } : {}) };
  } finally {
    await pdf.destroy().catch(() => undefined);
  }
}

function extractText(f: UploadedFile, kind: 'text' | 'markdown', limits: ExtractLimits): ExtractedDocument {
  let text = normalise(f.data.toString('utf8').replace(/^\uFEFF/, ''));
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
    ...(assessable ? (truncated ? { note: truncated, truncated: true } : {}) : { note: 'The file is empty. Not assessable.' }),
  };
}

/**
 * Extracts every file's text within the limits; throws an llm_* AppError for refused uploads, and
 * LlmAbortedError once `signal` aborted (the client went away).
 */
export async function extractDocuments(files: readonly UploadedFile[], limits: ExtractLimits = EXTRACT_LIMITS, signal?: AbortSignal): Promise<ExtractedDocument[]> {
  checkUploadLimits(files, limits);
  const names = new Set<string>();
  const kinds = files.map((f) => classify(f));
  const deadline = Date.now() + limits.timeMs;
  const out: ExtractedDocument[] = [];
  for (const [i, f] of files.entries()) {
    // Citations name files, so names must be unique within a request.
    let name = f.fileName;
    for (let k = 2; names.has(name); k++) name = f.fileName.replace(/(\.[^.]*)?$/, ` (${k})$1`);
    names.add(name);
    const file = { ...f, fileName: name };
    const kind = kinds[i]!;
    if (signal?.aborted) throw new LlmAbortedError();
    out.push(kind === 'pdf' ? await extractPdf(file, limits, deadline, signal) : extractText(file, kind, limits));
  }
  return out;
}
