// Multipart uploads, read one way: text fields first, then the file(s). Every part passes the
// input rule (cleanParts) first; a file is handed on as a stream (never buffered here) and is
// drained whenever the request is refused, so the client gets its answer instead of a stall.
import type { Readable } from 'node:stream';
import type { Multipart } from '@fastify/multipart';
import type { z } from 'zod';
import { appError, type AppError } from '../lib/errors.ts';
import { cleanParts } from './plugins/input-hygiene.ts';

/** A file part as the services take it. */
export interface StreamedFile {
  fileName: string;
  stream: Readable;
  /** True when the multipart parser cut the file at its own size limit. */
  truncated: () => boolean;
}

export interface UploadReader {
  /** The file field's name ("file" unless told). */
  fileField?: string;
  /** How many files are accepted (1 unless told); more is `tooMany`, else validation_failed. */
  maxFiles?: number;
  tooMany?: () => AppError;
  /** Text fields kept for onFile (others are ignored). */
  fields?: ReadonlySet<string>;
  /** Called for each kept text field as it arrives; may throw to refuse the request. */
  onField?: (name: string, value: string) => void;
  /** Called once per file, with the text fields read before it. */
  onFile: (file: StreamedFile, fields: Record<string, string>, index: number) => Promise<void>;
}

const oneFileOnly = (field: string) =>
  appError('validation_failed', `Send exactly one file, in the form field "${field}".`, {
    details: [{ path: field, message: 'Send exactly one file.' }],
  });

/** Reads a multipart body; returns how many files it held. */
export async function readUpload(parts: AsyncIterableIterator<Multipart>, o: UploadReader): Promise<number> {
  const fileField = o.fileField ?? 'file';
  const maxFiles = o.maxFiles ?? 1;
  const fields: Record<string, string> = {};
  let files = 0;
  for await (const part of cleanParts(parts)) {
    if (part.type === 'field') {
      if (typeof part.value === 'string' && (!o.fields || o.fields.has(part.fieldname))) {
        o.onField?.(part.fieldname, part.value);
        fields[part.fieldname] = part.value;
      }
      continue;
    }
    if (part.fieldname !== fileField || files >= maxFiles) {
      part.file.resume();
      if (part.fieldname === fileField && o.tooMany) throw o.tooMany();
      throw maxFiles === 1
        ? oneFileOnly(fileField)
        : appError('validation_failed', `Send the files in the form field "${fileField}".`, {
            details: [{ path: part.fieldname, message: 'Unexpected file field.' }],
          });
    }
    const index = files;
    files += 1;
    try {
      await o.onFile(
        { fileName: part.filename, stream: part.file, truncated: () => part.file.truncated },
        { ...fields },
        index,
      );
    } catch (e) {
      part.file.resume();
      throw e;
    }
  }
  return files;
}

/**
 * The one file of a body (form field "file"), given to `handle` with the text fields before it;
 * `missing` when there is none.
 */
export async function readOneFile<T>(
  parts: AsyncIterableIterator<Multipart>,
  o: { fields?: ReadonlySet<string>; missing: () => AppError },
  handle: (file: StreamedFile, fields: Record<string, string>) => Promise<T>,
): Promise<T> {
  let result: { value: T } | null = null;
  await readUpload(parts, {
    ...(o.fields ? { fields: o.fields } : {}),
    onFile: async (file, fields) => {
      result = { value: await handle(file, fields) };
    },
  });
  if (!result) throw o.missing();
  return (result as { value: T }).value;
}

/** Reads a stream whole, refusing it with `tooLarge` past `max` bytes (draining the rest). */
export async function readAll(stream: Readable, max: number, tooLarge: () => Error): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    n += chunk.length;
    if (n > max) {
      stream.resume();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Form fields checked by a zod schema: validation_failed with each problem, like JSON bodies. */
export function parseFields<S extends z.ZodType>(schema: S, fields: Record<string, string>): z.output<S> {
  const parsed = schema.safeParse(fields);
  if (!parsed.success)
    throw appError('validation_failed', 'The request is not valid.', {
      details: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  return parsed.data;
}
