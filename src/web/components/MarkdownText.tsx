// The Markdown of language-model answers and offline analyses, rendered as React elements (never
// as HTML, so a model or an uploaded file cannot inject markup): headings, paragraphs, bulleted
// and numbered lists (with indented continuation lines), tables, **bold**, `code` and backslash
// escapes. Links stay plain text. Partial Markdown (an answer still streaming) renders as far as
// it goes.
//
// <MarkdownText text testId? />
import { Box, Code, List, Table, Text } from '@mantine/core';
import type { ReactNode } from 'react';

type Block =
  | { kind: 'heading'; text: string }
  | { kind: 'paragraph'; lines: string[] }
  | { kind: 'list'; ordered: boolean; items: string[][] }
  | { kind: 'table'; rows: string[][] };

const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^\s{0,3}\d{1,3}[.)]\s+(.*)$/;
const HEADING = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/;
const TABLE_ROW = /^\s*\|.*\|\s*$/;
const TABLE_RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

function cells(row: string): string[] {
  const inner = row.trim().replace(/^\|/, '').replace(/\|$/, '');
  return inner.split(/(?<!\\)\|/).map((c) => c.trim());
}

export function parseMarkdown(text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.trim()) continue;
    const h = HEADING.exec(line);
    if (h) {
      blocks.push({ kind: 'heading', text: h[1]! });
      continue;
    }
    if (TABLE_ROW.test(line)) {
      const rows: string[][] = [];
      for (; i < lines.length && TABLE_ROW.test(lines[i]!); i++)
        if (!TABLE_RULE.test(lines[i]!)) rows.push(cells(lines[i]!));
      i--;
      blocks.push({ kind: 'table', rows });
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = NUMBERED.exec(line);
    if (bullet || numbered) {
      const ordered = !bullet;
      const pattern = ordered ? NUMBERED : BULLET;
      const items: string[][] = [];
      for (; i < lines.length; i++) {
        const l = lines[i]!;
        const m = pattern.exec(l);
        if (m) items.push([m[1]!]);
        else if (/^\s{2,}\S/.test(l) && items.length) items.at(-1)!.push(l.trim());
        else break;
      }
      i--;
      blocks.push({ kind: 'list', ordered, items });
      continue;
    }
    const para: string[] = [];
    for (
      ;
      i < lines.length &&
      lines[i]!.trim() &&
      !HEADING.test(lines[i]!) &&
      !TABLE_ROW.test(lines[i]!) &&
      !BULLET.test(lines[i]!) &&
      !NUMBERED.test(lines[i]!);
      i++
    )
      para.push(lines[i]!.trim());
    i--;
    blocks.push({ kind: 'paragraph', lines: para });
  }
  return blocks;
}

/** **bold**, `code` and backslash escapes; everything else is text. */
export function inline(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  let buf = '';
  const flush = () => {
    if (buf) out.push(buf);
    buf = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length && /[\\`*_[\]<>|#()!-]/.test(text[i + 1]!)) {
      buf += text[++i];
    } else if (c === '`') {
      const end = text.indexOf('`', i + 1);
      if (end < 0) {
        buf += c;
        continue;
      }
      flush();
      out.push(<Code key={out.length}>{text.slice(i + 1, end)}</Code>);
      i = end;
    } else if (c === '*' && text[i + 1] === '*') {
      const end = text.indexOf('**', i + 2);
      if (end < 0) {
        buf += '**';
        i++;
        continue;
      }
      flush();
      out.push(<strong key={out.length}>{inline(text.slice(i + 2, end))}</strong>);
      i = end + 1;
    } else buf += c;
  }
  flush();
  return out;
}

export function MarkdownText({ text, testId }: { text: string; testId?: string }) {
  return (
    <Box
      data-testid={testId}
      style={{ overflowWrap: 'anywhere', fontSize: 'var(--mantine-font-size-sm)', lineHeight: 1.55 }}
    >
      {parseMarkdown(text).map((b, i) => {
        if (b.kind === 'heading')
          return (
            <Text key={i} fw={700} mt={i ? 'sm' : 0} mb={4}>
              {inline(b.text)}
            </Text>
          );
        if (b.kind === 'paragraph')
          return (
            <Text key={i} size="sm" mb="xs">
              {b.lines.map((l, k) => (
                <span key={k}>
                  {k > 0 && <br />}
                  {inline(l)}
                </span>
              ))}
            </Text>
          );
        if (b.kind === 'list')
          return (
            <List key={i} type={b.ordered ? 'ordered' : 'unordered'} size="sm" spacing={6} mb="xs" withPadding>
              {b.items.map((item, k) => (
                <List.Item key={k}>
                  {item.map((l, n) => (
                    <span key={n}>
                      {n > 0 && <br />}
                      {inline(l)}
                    </span>
                  ))}
                </List.Item>
              ))}
            </List>
          );
        const [head, ...rows] = b.rows;
        return (
          <Table key={i} withTableBorder withColumnBorders mb="xs" fz="sm" w="auto">
            {head && (
              <Table.Thead>
                <Table.Tr>
                  {head.map((c, k) => (
                    <Table.Th key={k} scope="col">
                      {inline(c)}
                    </Table.Th>
                  ))}
                </Table.Tr>
              </Table.Thead>
            )}
            <Table.Tbody>
              {rows.map((r, k) => (
                <Table.Tr key={k}>
                  {r.map((c, n) => (
                    <Table.Td key={n}>{inline(c)}</Table.Td>
                  ))}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        );
      })}
    </Box>
  );
}
