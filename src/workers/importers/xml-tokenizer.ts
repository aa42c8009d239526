// A small streaming XML tokenizer for the subset nmap writes: elements with quoted attributes,
// self-closing tags, comments, processing instructions, a DOCTYPE without an internal subset,
// CDATA and character references. Text content is skipped (nmap keeps its data in attributes).
// No XML library installed here streams (fast-xml-parser parses whole strings), hence this one.
// Memory is bounded by the longest single tag (maxTagChars), never by the document.
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { ImportError } from './common.ts';

export type XmlEvent =
  | { type: 'open'; name: string; attrs: Record<string, string>; selfClosing: boolean; line: number }
  | { type: 'close'; name: string; line: number };

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

export function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]+);/g, (m, e: string) => {
    if (e[0] === '#') {
      const cp = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : m;
    }
    return ENTITIES[e] ?? m;
  });
}

const NAME = /^[A-Za-z_:][-A-Za-z0-9_:.]*/;
const ATTR = /\s*([A-Za-z_:][-A-Za-z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/y;

function parseTag(body: string, line: number): XmlEvent {
  const err = (msg: string) => new ImportError('invalid_xml', 'nmap', msg, { line });
  if (body.startsWith('/')) {
    const name = NAME.exec(body.slice(1))?.[0];
    if (!name || body.slice(1 + name.length).trim() !== '') throw err(`Malformed end tag <${body.slice(0, 50)}>`);
    return { type: 'close', name, line };
  }
  const selfClosing = body.endsWith('/');
  const inner = selfClosing ? body.slice(0, -1) : body;
  const name = NAME.exec(inner)?.[0];
  if (!name) throw err(`Malformed tag <${body.slice(0, 50)}>`);
  const attrs: Record<string, string> = Object.create(null) as Record<string, string>;
  let pos = name.length;
  while (pos < inner.length) {
    if (/^\s*$/.test(inner.slice(pos))) break;
    ATTR.lastIndex = pos;
    const m = ATTR.exec(inner);
    if (!m) throw err(`Malformed attribute in <${name}>`);
    attrs[m[1]!] = decodeEntities(m[2] ?? m[3] ?? '');
    pos = ATTR.lastIndex;
  }
  return { type: 'open', name, attrs, selfClosing, line };
}

/** Yields element events in document order; checks that tags nest and the document is complete. */
export async function* tokenizeXml(
  stream: Readable,
  maxTagChars = 1024 * 1024,
  maxDepth = 64,
): AsyncGenerator<XmlEvent> {
  const decoder = new StringDecoder('utf8');
  let buf = '';
  let line = 1;
  let offset = 0;
  const stack: string[] = [];
  let sawRoot = false;
  const advance = (n: number) => {
    // A bounded scan: indexOf could run far past n on a document without line breaks.
    for (let i = 0; i < n; i++) if (buf.charCodeAt(i) === 10) line += 1;
    buf = buf.slice(n);
    offset += n;
  };
  const err = (msg: string) => new ImportError('invalid_xml', 'nmap', msg, { line, offset });

  async function* drain(final: boolean): AsyncGenerator<XmlEvent> {
    for (;;) {
      const lt = buf.indexOf('<');
      if (lt === -1) {
        if (buf.trim() !== '' && stack.length === 0) throw err('Text outside the root element');
        advance(buf.length);
        return;
      }
      if (lt > 0) {
        if (
          stack.length === 0 &&
          buf
            .slice(0, lt)
            .replace(/^\uFEFF/, '')
            .trim() !== ''
        )
          throw err('Text outside the root element');
        advance(lt);
      }
      // buf starts with '<'
      let end: number;
      let skipOnly = false;
      if (buf.startsWith('<!--')) {
        end = buf.indexOf('-->', 4);
        if (end !== -1) end += 3;
        skipOnly = true;
      } else if (buf.startsWith('<![CDATA[')) {
        end = buf.indexOf(']]>', 9);
        if (end !== -1) end += 3;
        skipOnly = true;
      } else if (buf.startsWith('<?')) {
        end = buf.indexOf('?>', 2);
        if (end !== -1) end += 2;
        skipOnly = true;
      } else if (buf.startsWith('<!')) {
        if (buf.length < 9 && !final) return;
        if (/^<!DOCTYPE\b/i.test(buf) && !/^<!DOCTYPE[^>[]*\[/i.test(buf.slice(0, 4096))) {
          end = buf.indexOf('>');
          if (end !== -1) end += 1;
          skipOnly = true;
        } else if (buf.length >= 9)
          throw err('Unsupported markup declaration (internal DTD subsets and entities are not accepted)');
        else end = -1;
      } else {
        // A tag: find '>' outside quoted attribute values.
        end = -1;
        let quote = '';
        for (let i = 1; i < buf.length; i++) {
          const c = buf[i];
          if (quote) {
            if (c === quote) quote = '';
          } else if (c === '"' || c === "'") quote = c;
          else if (c === '<') throw err('Unexpected "<" inside a tag');
          else if (c === '>') {
            end = i + 1;
            break;
          }
        }
      }
      if (end === -1) {
        if (buf.length > maxTagChars) throw err(`A tag is longer than ${maxTagChars} characters`);
        if (final) throw err('The document ends inside a tag');
        return;
      }
      if (skipOnly) {
        advance(end);
        continue;
      }
      const ev = parseTag(buf.slice(1, end - 1).trim(), line);
      if (ev.type === 'open') {
        if (stack.length === 0 && sawRoot) throw err('A second root element');
        sawRoot = true;
        if (!ev.selfClosing) {
          if (stack.length >= maxDepth) throw err(`Elements nest deeper than ${maxDepth}`);
          stack.push(ev.name);
        }
      } else {
        const top = stack.pop();
        if (top !== ev.name) throw err(top ? `</${ev.name}> closes <${top}>` : `</${ev.name}> has no opening tag`);
      }
      advance(end);
      yield ev;
    }
  }

  for await (const raw of stream) {
    buf += typeof raw === 'string' ? raw : decoder.write(raw as Buffer);
    yield* drain(false);
  }
  buf += decoder.end();
  yield* drain(true);
  if (!sawRoot) throw err('The document has no root element');
  if (stack.length > 0) throw err(`The document ends before </${stack[stack.length - 1]}> (truncated?)`);
}
