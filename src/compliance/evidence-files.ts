// What may be uploaded as evidence, and how a file is checked while it streams: the extension
// decides the content type (browsers disagree about CSV and Office types, so the declared type is
// not trusted), and the first bytes must look like that type. A Transform does the sniffing so the
// upload still streams straight to storage.
import { cleanFileName } from '../lib/file-names.ts';
import { Transform, type TransformCallback } from 'node:stream';
import { appError } from '../lib/errors.ts';

type Sniff = 'pdf' | 'png' | 'jpeg' | 'gif' | 'webp' | 'zip' | 'ole' | 'text' | 'json';

interface FileKind {
  contentType: string;
  sniff: Sniff;
}

const OOXML = 'application/vnd.openxmlformats-officedocument';
const ODF = 'application/vnd.oasis.opendocument';

export const EVIDENCE_FILE_KINDS: Readonly<Record<string, FileKind>> = {
  pdf: { contentType: 'application/pdf', sniff: 'pdf' },
  png: { contentType: 'image/png', sniff: 'png' },
  jpg: { contentType: 'image/jpeg', sniff: 'jpeg' },
  jpeg: { contentType: 'image/jpeg', sniff: 'jpeg' },
  gif: { contentType: 'image/gif', sniff: 'gif' },
  webp: { contentType: 'image/webp', sniff: 'webp' },
  txt: { contentType: 'text/plain', sniff: 'text' },
  log: { contentType: 'text/plain', sniff: 'text' },
  md: { contentType: 'text/markdown', sniff: 'text' },
  csv: { contentType: 'text/csv', sniff: 'text' },
  json: { contentType: 'application/json', sniff: 'json' },
  docx: { contentType: `${OOXML}.wordprocessingml.document`, sniff: 'zip' },
  xlsx: { contentType: `${OOXML}.spreadsheetml.sheet`, sniff: 'zip' },
  pptx: { contentType: `${OOXML}.presentationml.presentation`, sniff: 'zip' },
  odt: { contentType: `${ODF}.text`, sniff: 'zip' },
  ods: { contentType: `${ODF}.spreadsheet`, sniff: 'zip' },
  odp: { contentType: `${ODF}.presentation`, sniff: 'zip' },
  doc: { contentType: 'application/msword', sniff: 'ole' },
  xls: { contentType: 'application/vnd.ms-excel', sniff: 'ole' },
  ppt: { contentType: 'application/vnd.ms-powerpoint', sniff: 'ole' },
};

export const EVIDENCE_EXTENSIONS = Object.keys(EVIDENCE_FILE_KINDS);

/** Bytes looked at before deciding; enough for every signature and a text check. */
const SNIFF_BYTES = 1024;

const startsWith = (buf: Buffer, sig: number[] | string, at = 0) => {
  const bytes = typeof sig === 'string' ? Buffer.from(sig, 'latin1') : Buffer.from(sig);
  return buf.length >= at + bytes.length && buf.subarray(at, at + bytes.length).equals(bytes);
};

/** Text: no NUL or other C0 controls besides tab, CR, LF, FF, and valid UTF-8 (a cut multi-byte tail is fine). */
function looksLikeText(head: Buffer, complete: boolean): boolean {
  for (const b of head) if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c) return false;
  let end = head.length;
  if (!complete) {
    // Drop an incomplete UTF-8 sequence at the cut.
    let i = end - 1;
    while (i >= 0 && i > end - 4 && (head[i]! & 0xc0) === 0x80) i--;
    if (i >= 0 && head[i]! >= 0xc0) end = i;
  }
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, end));
    return true;
  } catch {
    return false;
  }
}

export function sniffMatches(kind: Sniff, head: Buffer, complete: boolean): boolean {
  switch (kind) {
    case 'pdf':
      return startsWith(head, '%PDF-');
    case 'png':
      return startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    case 'jpeg':
      return startsWith(head, [0xff, 0xd8, 0xff]);
    case 'gif':
      return startsWith(head, 'GIF87a') || startsWith(head, 'GIF89a');
    case 'webp':
      return startsWith(head, 'RIFF') && startsWith(head, 'WEBP', 8);
    case 'zip':
      return startsWith(head, [0x50, 0x4b, 0x03, 0x04]);
    case 'ole':
      return startsWith(head, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
    case 'text':
      return looksLikeText(head, complete);
    case 'json': {
      if (!looksLikeText(head, complete)) return false;
      const first = head
        .toString('utf8')
        .replace(/^\uFEFF/, '')
        .trimStart()[0];
      return first === '{' || first === '[';
    }
  }
}

/** The stored file name of a piece of evidence (see cleanFileName). */
export const safeFileName = (name: string): string => cleanFileName(name) || 'evidence';

export function extensionOf(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return dot > 0 ? fileName.slice(dot + 1).toLowerCase() : '';
}

/** The file kind for a name, or AppError `evidence_type_not_allowed`. */
export function evidenceKindFor(fileName: string): FileKind {
  const kind = EVIDENCE_FILE_KINDS[extensionOf(fileName)];
  if (!kind)
    throw appError(
      'evidence_type_not_allowed',
      `Evidence files must be PDF, image (PNG, JPEG, GIF, WebP), text, Markdown, CSV, JSON or office documents (${EVIDENCE_EXTENSIONS.join(', ')}).`,
    );
  return kind;
}

/** Content-Disposition for a download: ASCII fallback plus the RFC 5987 UTF-8 name. */
export function attachmentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]/g, '_').replace(/["\\%;]/g, '_') || 'evidence';
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/**
 * Passes bytes through once the first SNIFF_BYTES (or the whole file, if shorter) look like `kind`;
 * otherwise fails the stream with `evidence_content_mismatch`, which aborts the storage put.
 */
export function createSniffer(kind: FileKind, extension: string): Transform {
  const held: Buffer[] = [];
  let heldBytes = 0;
  let decided = false;
  const mismatch = () =>
    appError('evidence_content_mismatch', `The file's content does not look like a .${extension} file.`);
  return new Transform({
    transform(chunk: Buffer, _enc, cb: TransformCallback) {
      if (decided) return cb(null, chunk);
      held.push(chunk);
      heldBytes += chunk.length;
      if (heldBytes < SNIFF_BYTES) return cb();
      const all = Buffer.concat(held);
      if (!sniffMatches(kind.sniff, all.subarray(0, SNIFF_BYTES), false)) return cb(mismatch());
      decided = true;
      held.length = 0;
      cb(null, all);
    },
    flush(cb: TransformCallback) {
      if (decided) return cb();
      const all = Buffer.concat(held);
      if (all.length === 0)
        return cb(
          appError('validation_failed', 'The file is empty.', {
            details: [{ path: 'file', message: 'The file is empty.' }],
          }),
        );
      if (!sniffMatches(kind.sniff, all, true)) return cb(mismatch());
      cb(null, all);
    },
  });
}
