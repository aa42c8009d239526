import { Readable, Writable } from 'node:stream';
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { drained, finalizeFinding, ImportError, readLines } from './common.ts';
import { parseReport } from './index.ts';
import { textStream } from './test-helpers.ts';

async function lines(stream: Readable, max?: number) {
  const out: [number, string][] = [];
  for await (const l of readLines(stream, 'nuclei', max)) out.push([l.lineNo, l.text]);
  return out;
}

describe('readLines', () => {
  it('splits on LF and CRLF across chunk boundaries, numbering blank lines too', async () => {
    const text = 'aé€\r\n\r\nsecond line 😀\nthird';
    for (const chunk of [1, 2, 3, 5, 64]) {
      expect(await lines(textStream(text, chunk))).toEqual([
        [1, 'aé€'],
        [3, 'second line 😀'],
        [4, 'third'],
      ]);
    }
  });

  it('drops a byte-order mark before the first line', async () => {
    expect(
      await lines(textStream(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}\n')]), 2)),
    ).toEqual([[1, '{"a":1}']]);
  });

  it('fails on a line over the limit, also when the line is the unterminated last one', async () => {
    await expect(lines(textStream('short\n0123456789abc\n', 4), 10)).rejects.toMatchObject({
      code: 'line_too_long',
      line: 2,
    });
    await expect(lines(textStream('short\n0123456789abc', 4), 10)).rejects.toBeInstanceOf(ImportError);
    expect(await lines(textStream('0123456789\n', 4), 10)).toEqual([[1, '0123456789']]);
  });
});

describe('bounded memory', () => {
  it('streams a 20,000-line nuclei report without holding it', async () => {
    const LINES = 20_000;
    const response = 'HTTP/1.1 200 OK\r\nServer: nginx\r\n\r\n' + '<html>'.padEnd(4_000, 'x');
    let produced = 0;
    function* gen() {
      for (let i = 0; i < LINES; i++) {
        produced += 1;
        yield `${JSON.stringify({ 'template-id': `tpl-${i % 50}`, info: { name: `Template ${i % 50}`, severity: ['info', 'low', 'medium', 'high', 'critical'][i % 5], tags: ['a', 'b'] }, 'matcher-name': `m${i}`, 'matched-at': `https://host${i % 100}.example.com/p/${i}`, response, 'curl-command': `curl https://host${i % 100}.example.com/p/${i}` })}\n`;
      }
    }
    const report = parseReport('nuclei', Readable.from(gen(), { objectMode: false, highWaterMark: 16 }));
    // A real collection before each sample, so the figure is what the parser retains, not garbage.
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    let count = 0;
    let maxAhead = 0;
    for await (const f of report) {
      count += 1;
      // The generator may only run a little ahead of the consumer: nothing is read whole.
      maxAhead = Math.max(maxAhead, produced - count);
      if (count % 2_000 === 0) {
        gc();
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      }
      if (count === 1) expect(f.severity).toBe('info');
    }
    expect(count).toBe(LINES);
    expect(report.meta).toMatchObject({ findings: LINES, skipped: 0 });
    // The whole input is ~85 MB of text; the parser holds a few lines at a time.
    expect(maxAhead).toBeLessThan(100);
    expect(peak - before).toBeLessThan(16 * 1024 * 1024);
  });
});

describe('finalizeFinding', () => {
  it('drops malformed ids, references and CVSS instead of refusing the finding', () => {
    const f = finalizeFinding({
      ruleId: '  r1  ',
      title: 'T',
      severity: 'low',
      location: { host: 'h'.repeat(300), port: 70_000, line: -1, file: 'a.js' },
      cwe: ['CWE-79', 'cwe-x', 0, 89],
      cve: ['cve-2024-3094', 'GHSA-xxxx', 'CVE-1-2'],
      references: ['https://ok.example/a', 'javascript:alert(1)', 'not a url', 'https://ok.example/a'],
      cvss: { score: 7.5, vector: 'not a vector' },
      evidence: { summary: '', data: { big: 'x'.repeat(20_000), small: 1 } },
    });
    expect(f).toMatchObject({
      ruleId: 'r1',
      cwe: [79, 89],
      cve: ['CVE-2024-3094'],
      references: ['https://ok.example/a'],
      cvss: { score: 7.5 },
      evidence: { data: { small: 1 } },
    });
    expect(f.cvss?.vector).toBeUndefined();
    expect(f.location).toEqual({ host: `${'h'.repeat(252)}…`, file: 'a.js' });
    expect(f.evidence?.summary).toBeUndefined();
  });

  it('throws (the caller counts a skip) when no rule id or title is left', () => {
    expect(() => finalizeFinding({ ruleId: '  ', title: 'T', severity: 'info', location: {} })).toThrow(/ruleId/);
  });
});

describe('drained', () => {
  it('leaves no listener behind after each drain, however often a spool fills up', async () => {
    const sink = new Writable({ highWaterMark: 16, write: (_c, _e, cb) => setImmediate(cb) });
    const closeListeners = sink.listenerCount('close');
    for (let i = 0; i < 50; i++) {
      if (!sink.write(Buffer.alloc(64))) await drained(sink);
    }
    expect(sink.listenerCount('close')).toBe(closeListeners);
    expect(sink.listenerCount('drain')).toBe(0);
    // A stream that closes instead of draining still releases the writer.
    const stuck = new Writable({ highWaterMark: 1, write: () => undefined });
    stuck.write('x');
    const waiting = drained(stuck);
    stuck.destroy();
    await waiting;
  });
});
