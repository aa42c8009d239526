// Streaming reader for single-document JSON reports (SARIF, Trivy, ZAP, Grype, testssl.sh,
// nuclei's -je array): the document is tokenized as it arrives (@streamparser/json's Tokenizer)
// and only the values a parser asks for are assembled, one record at a time. Memory is bounded by
// the largest record (maxRecordBytes; a bigger record is skipped, never held) and the longest
// string (maxStringChars), never by the document. Nesting inside a record deeper than maxDepth is
// dropped (and counted), so a hostile 6,000-level structure costs nothing.
import { Tokenizer, TokenType } from '@streamparser/json';
import type { ParsedTokenInfo } from '@streamparser/json';
import { DROPPED_DEEP, safeMessage, type CleanLog } from './clean.ts';
import { ImportError, type ReportFormat } from './common.ts';

export type JsonPath = readonly (string | number)[];
/** What to do with the value at a path: assemble it as a record, walk into it, or ignore it. */
export type JsonPick = 'value' | 'descend' | 'skip';

export type JsonRecord =
  { path: JsonPath; value: unknown; offset: number } | { path: JsonPath; tooLarge: true; offset: number };

export interface JsonRecordOptions {
  /** A record larger than this (bytes of JSON) is skipped and reported as tooLarge. */
  maxRecordBytes?: number;
  /** A single string longer than this stops the import (it could not be held). */
  maxStringChars?: number;
  /** Containers nested deeper than this inside a record are replaced by a marker. */
  maxDepth?: number;
  /** Accept several documents separated by newlines (JSON Lines read with the same rules). */
  lines?: boolean;
}

export const MAX_RECORD_BYTES = 32 * 1024 * 1024;
export const MAX_STRING_CHARS = 32 * 1024 * 1024;
const MAX_RECORD_DEPTH = 64;

type Container = { obj: Record<string, unknown> | unknown[]; key: string | null; expectKey: boolean };
type Nav = {
  kind: 'object' | 'array';
  path: (string | number)[];
  key: string | number | null;
  expectKey: boolean;
  index: number;
};

/**
 * Yields the values `pick` selects, in document order. `pick` is asked once per value position
 * (the root is []); 'descend' into a primitive is a no-op.
 */
export async function* readJsonRecords(
  stream: AsyncIterable<Buffer | string>,
  format: ReportFormat,
  pick: (path: JsonPath) => JsonPick,
  log: CleanLog,
  opts: JsonRecordOptions = {},
): AsyncGenerator<JsonRecord> {
  const maxRecordBytes = opts.maxRecordBytes ?? MAX_RECORD_BYTES;
  const maxStringChars = opts.maxStringChars ?? MAX_STRING_CHARS;
  const maxDepth = opts.maxDepth ?? MAX_RECORD_DEPTH;
  const tokenizer = new Tokenizer({ emitPartialTokens: true, ...(opts.lines ? { separator: '\n' } : {}) });
  const out: JsonRecord[] = [];
  const nav: Nav[] = [];
  let sawRoot = false;
  // Building a record: its containers, its start, and whether it was given up.
  let build: Container[] | null = null;
  let buildPath: JsonPath = [];
  let buildStart = 0;
  let abandoned = false;
  // Skipping (a value nobody wants, a record too large, a part too deep): the depth still open.
  let skipDepth = 0;
  let deepMarkerPending = false;

  const childPath = (): JsonPath | null => {
    const top = nav.at(-1);
    if (!top) return sawRoot && !opts.lines ? null : [];
    return [...top.path, top.kind === 'array' ? top.index : (top.key as string)];
  };

  const placeInBuild = (v: unknown) => {
    const top = build!.at(-1)!;
    if (Array.isArray(top.obj)) top.obj.push(v);
    else {
      top.obj[top.key!] = v;
      top.key = null;
      top.expectKey = true;
    }
  };

  const finishRecord = (value: unknown, offset: number) => {
    out.push(
      abandoned
        ? { path: buildPath, tooLarge: true, offset: buildStart }
        : { path: buildPath, value, offset: buildStart },
    );
    build = null;
    abandoned = false;
    void offset;
  };

  /** A value starts at a navigation position. */
  const startValue = (t: ParsedTokenInfo) => {
    const path = childPath();
    if (path === null) throw new ImportError('invalid_json', format, 'The report holds more than one JSON document');
    if (nav.length === 0) sawRoot = true;
    const open = t.token === TokenType.LEFT_BRACE || t.token === TokenType.LEFT_BRACKET;
    const choice = pick(path);
    if (choice === 'descend' && open) {
      nav.push({
        kind: t.token === TokenType.LEFT_BRACE ? 'object' : 'array',
        path: [...path],
        key: null,
        expectKey: t.token === TokenType.LEFT_BRACE,
        index: 0,
      });
      return;
    }
    if (choice === 'value') {
      buildPath = path;
      buildStart = t.offset;
      abandoned = false;
      if (!open) {
        build = [];
        finishRecord(t.value, t.offset);
        return;
      }
      build = [
        { obj: t.token === TokenType.LEFT_BRACE ? {} : [], key: null, expectKey: t.token === TokenType.LEFT_BRACE },
      ];
      return;
    }
    if (open) skipDepth = 1;
  };

  tokenizer.onToken = (t) => {
    if (t.partial) {
      if (t.token === TokenType.STRING && typeof t.value === 'string' && t.value.length > maxStringChars) {
        throw new ImportError('value_too_large', format, `A text value is longer than ${maxStringChars} characters`, {
          offset: t.offset,
        });
      }
      return;
    }
    if (t.token === TokenType.SEPARATOR) return;
    // Ignoring a value (or a part of a record): only nesting matters.
    if (skipDepth > 0) {
      if (t.token === TokenType.LEFT_BRACE || t.token === TokenType.LEFT_BRACKET) skipDepth += 1;
      else if (t.token === TokenType.RIGHT_BRACE || t.token === TokenType.RIGHT_BRACKET) skipDepth -= 1;
      if (skipDepth === 0 && build) {
        // The skipped part was inside a record: a too-deep part leaves a marker; an abandoned
        // record is done when its own container closes.
        if (deepMarkerPending) {
          deepMarkerPending = false;
          placeInBuild(DROPPED_DEEP);
        } else if (abandoned) finishRecord(null, t.offset);
      }
      return;
    }
    if (build) {
      if (t.offset - buildStart > maxRecordBytes && !abandoned) {
        // Too large to hold: drop what was built and skip to the record's end.
        abandoned = true;
        const open = build.length;
        build = [];
        if (t.token === TokenType.LEFT_BRACE || t.token === TokenType.LEFT_BRACKET) skipDepth = open + 1;
        else if (t.token === TokenType.RIGHT_BRACE || t.token === TokenType.RIGHT_BRACKET) skipDepth = open - 1;
        else skipDepth = open;
        if (skipDepth === 0) finishRecord(null, t.offset);
        return;
      }
      const top = build.at(-1)!;
      switch (t.token) {
        case TokenType.LEFT_BRACE:
        case TokenType.LEFT_BRACKET: {
          if (build.length >= maxDepth) {
            log.note('deep');
            deepMarkerPending = true;
            skipDepth = 1;
            return;
          }
          const child: Container = {
            obj: t.token === TokenType.LEFT_BRACE ? {} : [],
            key: null,
            expectKey: t.token === TokenType.LEFT_BRACE,
          };
          placeInBuild(child.obj);
          build.push(child);
          return;
        }
        case TokenType.RIGHT_BRACE:
        case TokenType.RIGHT_BRACKET: {
          const done = build.pop()!;
          if (build.length === 0) finishRecord(done.obj, t.offset);
          return;
        }
        case TokenType.COLON:
        case TokenType.COMMA:
          return;
        case TokenType.STRING:
          if (!Array.isArray(top.obj) && top.expectKey) {
            top.key = t.value as string;
            top.expectKey = false;
            return;
          }
          placeInBuild(t.value);
          return;
        default:
          placeInBuild(t.value);
          return;
      }
    }
    // Navigating.
    const top = nav.at(-1);
    switch (t.token) {
      case TokenType.RIGHT_BRACE:
      case TokenType.RIGHT_BRACKET:
        nav.pop();
        return;
      case TokenType.COLON:
        return;
      case TokenType.COMMA:
        if (top?.kind === 'array') top.index += 1;
        else if (top) top.expectKey = true;
        return;
      case TokenType.STRING:
        if (top?.kind === 'object' && top.expectKey) {
          top.key = t.value as string;
          top.expectKey = false;
          return;
        }
        startValue(t);
        return;
      default:
        startValue(t);
    }
  };

  const fail = (err: unknown): never => {
    if (err instanceof ImportError) throw err;
    const msg = err instanceof Error ? err.message : String(err);
    const at = /absolute position "(\d+)"/.exec(msg);
    const what = /^Unexpected "(.)"/.exec(msg);
    const ch = what ? what[1]! : '';
    const shown =
      ch && /[\x20-\x7e]/.test(ch) ? `"${ch}"` : ch ? `byte 0x${ch.charCodeAt(0).toString(16).padStart(2, '0')}` : '';
    const detail = shown
      ? `unexpected ${shown}`
      : /ended|end/i.test(msg)
        ? 'the document ends too early (truncated?)'
        : safeMessage(msg, 200);
    throw new ImportError(
      'invalid_json',
      format,
      `The report is not valid JSON: ${detail}`,
      at ? { offset: Number(at[1]) } : {},
    );
  };

  let first = true;
  for await (const raw of stream) {
    let chunk: Uint8Array = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : (raw as Buffer);
    if (first) {
      first = false;
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3);
    }
    try {
      tokenizer.write(chunk);
    } catch (err) {
      fail(err);
    }
    for (const r of out) yield r;
    out.length = 0;
  }
  try {
    tokenizer.end();
  } catch (err) {
    fail(err);
  }
  for (const r of out) yield r;
  if (!sawRoot && !opts.lines)
    throw new ImportError('invalid_json', format, 'The report is empty: it holds no JSON document');
  if (nav.length > 0 || build)
    throw new ImportError('invalid_json', format, 'The document ends too early (truncated?)');
}
