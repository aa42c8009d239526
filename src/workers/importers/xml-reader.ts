// Streaming reader for XML reports (nmap, ZAP, Nessus, OpenVAS, Burp), on saxes, a conformant
// SAX parser: no DTD is processed and no entity is expanded beyond the five predefined ones and
// character references, so external entities and entity bombs do nothing. Parsers see the
// structure as open/close events and the small elements they ask for as whole records (an
// element with its attributes, children and text), assembled one at a time and bounded by
// maxRecordChars. A malformed character reference or a character XML forbids (a lone surrogate,
// a control character) is counted as cleaned and the rest of the report is read; a document that
// is not well-formed (mismatched or unclosed tags, a truncated file) stops the import.
import { StringDecoder } from 'node:string_decoder';
import { SaxesParser } from 'saxes';
import { safeMessage, type CleanLog } from './clean.ts';
import { ImportError, type ReportFormat } from './common.ts';

export interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  text: string;
}

export type XmlEvent =
  | { type: 'open'; name: string; attrs: Record<string, string>; depth: number; line: number }
  | { type: 'close'; name: string; depth: number }
  | { type: 'record'; node: XmlNode; depth: number; line: number }
  | { type: 'tooLarge'; name: string; depth: number; line: number };

export interface XmlReaderOptions {
  maxRecordChars?: number;
  /** Elements nested deeper than this inside a record are left out. */
  maxRecordDepth?: number;
  /** A run of text (or a tag) longer than this without markup stops the import. */
  maxRunChars?: number;
}

const RECOVERABLE =
  /^(disallowed character\.|malformed character entity\.|undefined entity\.|disallowed character in entity name\.)/;

/** The first child named `name` (the local name, any prefix). */
export function child(n: XmlNode | undefined, name: string): XmlNode | undefined {
  return n?.children.find((c) => c.name === name);
}
/** The trimmed text of the first child named `name`, or undefined when it is absent or empty. */
export function childText(n: XmlNode | undefined, name: string): string | undefined {
  const t = child(n, name)?.text.trim();
  return t ? t : undefined;
}
export function children(n: XmlNode | undefined, name: string): XmlNode[] {
  return n ? n.children.filter((c) => c.name === name) : [];
}

export async function* readXml(
  stream: AsyncIterable<Buffer | string>,
  format: ReportFormat,
  isRecord: (name: string, depth: number) => boolean,
  log: CleanLog,
  opts: XmlReaderOptions = {},
): AsyncGenerator<XmlEvent> {
  const maxRecordChars = opts.maxRecordChars ?? 32 * 1024 * 1024;
  const maxRecordDepth = opts.maxRecordDepth ?? 32;
  const maxRunChars = opts.maxRunChars ?? 64 * 1024 * 1024;
  const parser = new SaxesParser({ position: true });
  const out: XmlEvent[] = [];
  let depth = 0;
  let sawRoot = false;
  let fatal: ImportError | null = null;
  // The record being assembled: its open elements, size so far, and how deep we ignore.
  let stack: XmlNode[] | null = null;
  let recordDepth = 0;
  let recordLine = 0;
  let size = 0;
  let tooLarge = false;
  let ignoreDepth = 0;

  parser.on('error', (err) => {
    const msg = err.message.replace(/^\d+:\d+: /, '');
    if (RECOVERABLE.test(msg)) {
      log.where = `line ${parser.line}`;
      log.note(/entity/.test(msg) ? 'surrogate' : 'control');
      return;
    }
    fatal ??= new ImportError('invalid_xml', format, `The report is not well-formed XML: ${safeMessage(msg, 200)}`, {
      line: parser.line,
    });
  });
  parser.on('opentag', (tag) => {
    depth += 1;
    sawRoot = true;
    const attrs = tag.attributes as Record<string, string>;
    if (stack) {
      if (ignoreDepth > 0 || stack.length >= maxRecordDepth) {
        if (ignoreDepth === 0) log.note('deep');
        ignoreDepth += 1;
        return;
      }
      const node: XmlNode = { name: localName(tag.name), attrs, children: [], text: '' };
      size += tag.name.length + 16;
      for (const [k, v] of Object.entries(attrs)) size += k.length + v.length;
      if (!tooLarge) stack.at(-1)!.children.push(node);
      stack.push(node);
      return;
    }
    const name = localName(tag.name);
    if (isRecord(name, depth)) {
      stack = [{ name, attrs, children: [], text: '' }];
      recordDepth = depth;
      recordLine = parser.line;
      size = 0;
      tooLarge = false;
      return;
    }
    out.push({ type: 'open', name, attrs, depth, line: parser.line });
  });
  const onText = (text: string) => {
    if (!stack || ignoreDepth > 0) return;
    size += text.length;
    if (size > maxRecordChars) tooLarge = true;
    if (!tooLarge) stack.at(-1)!.text += text;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', (tag) => {
    const d = depth;
    depth -= 1;
    if (stack) {
      if (ignoreDepth > 0) {
        ignoreDepth -= 1;
        return;
      }
      const node = stack.pop()!;
      if (d === recordDepth) {
        out.push(
          tooLarge
            ? { type: 'tooLarge', name: node.name, depth: d, line: recordLine }
            : { type: 'record', node, depth: d, line: recordLine },
        );
        stack = null;
      }
      return;
    }
    out.push({ type: 'close', name: localName(tag.name), depth: d });
  });

  const decoder = new StringDecoder('utf8');
  let first = true;
  let run = 0;
  const write = (text: string) => {
    // saxes buffers a text node or a tag until it ends: bound that run.
    const lt = Math.max(text.lastIndexOf('<'), text.lastIndexOf('>'));
    run = lt === -1 ? run + text.length : text.length - lt;
    if (run > maxRunChars)
      throw new ImportError('value_too_large', format, `A text value or tag is longer than ${maxRunChars} characters`, {
        line: parser.line,
      });
    parser.write(text);
    if (fatal) throw fatal;
  };
  for await (const raw of stream) {
    let text = typeof raw === 'string' ? raw : decoder.write(raw as Buffer);
    if (first && text.length > 0) {
      first = false;
      text = text.replace(/^\uFEFF/, '');
    }
    write(text);
    for (const e of out) yield e;
    out.length = 0;
  }
  write(decoder.end());
  parser.close();
  if (fatal) throw fatal;
  for (const e of out) yield e;
  if (!sawRoot) throw new ImportError('invalid_xml', format, 'The report is empty: it has no XML root element');
}

const localName = (qname: string) => {
  const i = qname.indexOf(':');
  return i === -1 ? qname : qname.slice(i + 1);
};
