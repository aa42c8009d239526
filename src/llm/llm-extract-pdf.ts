// One PDF's text (unpdf, i.e. PDF.js) within the per-file page and character limits and the
// request's deadline. Runs on the PDF threads (llm-extract-worker.ts); kept free of the server's
// other modules so a thread loads only PDF.js.
import { getDocumentProxy } from 'unpdf';
import type { ExtractedDocument, ExtractLimits } from './llm-extract.ts';

class ExtractTimeout extends Error {}

/** Thrown once the request was cancelled (the client went away). */
export class ExtractAborted extends Error {}

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

export const normaliseText = (s: string) => s.replace(/\r\n?/g, '\n').replace(/[ \t\f\v]+/g, ' ');

export interface PdfInput {
  fileName: string;
  data: Uint8Array;
}

/** `deadline` is a Date.now() time (the same clock on every thread); `aborted` is polled per page. */
export async function extractPdf(
  f: PdfInput,
  limits: ExtractLimits,
  deadline: number,
  aborted: () => boolean,
): Promise<ExtractedDocument> {
  const base = { fileName: f.fileName, kind: 'pdf' as const, size: f.data.length };
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // A copy: PDF.js may transfer (detach) the buffer it is given.
    const loading = getDocumentProxy(new Uint8Array(f.data), {
      isEvalSupported: false,
      maxImageSize: 1,
      stopAtErrors: false,
    });
    pdf = await beforeDeadline(loading, deadline).catch((e: unknown) => {
      // Opened too late: close it once it is open.
      if (e instanceof ExtractTimeout) loading.then((d) => d.destroy()).catch(() => undefined);
      throw e;
    });
  } catch (e) {
    if (e instanceof ExtractTimeout)
      return {
        ...base,
        pages: [],
        pageCount: 0,
        assessable: false,
        note: 'The time limit for reading the files was reached before this PDF could be opened. Not assessable; upload fewer or smaller files.',
      };
    return unreadablePdf(f);
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
      if (aborted()) throw new ExtractAborted();
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
      text = normaliseText(text).trim();
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
      return {
        ...base,
        pages: pages.map(() => ''),
        pageCount,
        assessable: false,
        note: 'No extractable text: the PDF looks scanned (image-only). Not assessable; upload a text PDF (export it from the source document, or run OCR first).',
      };
    if (pages.length === 0)
      return {
        ...base,
        pages,
        pageCount,
        assessable: false,
        note: truncated ? `${truncated} Not assessable.` : 'The PDF has no pages. Not assessable.',
      };
    return { ...base, pages, pageCount, assessable: true, ...(truncated ? { note: truncated, truncated: true } : {}) };
  } finally {
    await pdf.destroy().catch(() => undefined);
  }
}

/** The answer for a PDF that could not be parsed (damaged, encrypted, or its thread ran out of memory). */
export function unreadablePdf(f: { fileName: string; data: { length: number } }): ExtractedDocument {
  return {
    fileName: f.fileName,
    kind: 'pdf',
    size: f.data.length,
    pages: [],
    pageCount: 0,
    assessable: false,
    note: 'The PDF could not be read (damaged or password-protected). Not assessable.',
  };
}
