// The browser CSV builder of the staff mesh exports (src/web/lib/csv-export.ts): BOM, RFC 4180
// quoting, CRLF, formula cells defused with the server's rule (csv-stringify escape_formulas)
// extended to leading whitespace and line breaks, numbers untouched, file names.
import { describe, expect, it } from 'vitest';
import { stringify as serverStringify } from 'csv-stringify/sync';
import { BOM, buildCsv, defuseFormula, exportFileName } from '../../src/web/lib/csv-export.ts';

/** A small RFC 4180 reader for the checks (quoted fields, doubled quotes, CRLF records). */
function parse(csv: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < csv.length; i++) {
    const c = csv[i]!;
    if (quoted) {
      if (c === '"' && csv[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && csv[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  if (field || row.length) rows.push([...row, field]);
  return rows;
}

const COLS = [
  ['a', 'A'],
  ['b', 'B'],
] as const;

describe('buildCsv', () => {
  it('starts with a UTF-8 BOM, quotes per RFC 4180 and ends records with CRLF', () => {
    const csv = buildCsv(COLS, [
      { a: 'plain', b: 'with, comma' },
      { a: 'say "hi"', b: 'two\nlines' },
      { a: 'ünïcødé ✓', b: null },
    ]);
    expect(csv.startsWith(BOM)).toBe(true);
    expect(csv.slice(1)).toBe('A,B\r\nplain,"with, comma"\r\n"say ""hi""","two\nlines"\r\nünïcødé ✓,\r\n');
    expect(new TextEncoder().encode(csv).slice(0, 3)).toEqual(new Uint8Array([0xef, 0xbb, 0xbf]));
  });

  it('defuses formula cells, also after leading spaces, NBSP or line breaks', () => {
    const cases: [string, string][] = [
      ['=1+1', "'=1+1"],
      ['+SUM(A1)', "'+SUM(A1)"],
      ['-2+3', "'-2+3"],
      ['@cmd', "'@cmd"],
      ['\tx', "'\tx"],
      ['\rx', "'\rx"],
      [' =1+1', "' =1+1"],
      ['\u00A0@x', "'\u00A0@x"],
      ['\n=cmd', "'\n'=cmd"],
      ['  \r\n +1', "'  \r\n' +1"],
      ['ok\n=cmd', "ok\n'=cmd"],
      ['a\r\n\t@x\rb\r-1', "a\r\n'\t@x\rb\r'-1"],
      ['line one\nline two', 'line one\nline two'],
      ['a=b', 'a=b'],
      ['ok', 'ok'],
      ['', ''],
    ];
    for (const [input, out] of cases) expect(defuseFormula(input), JSON.stringify(input)).toBe(out);
    const csv = buildCsv(
      COLS,
      cases.map(([a]) => ({ a, b: -5 })),
    );
    const [header, ...parsed] = parse(csv.slice(1));
    expect(header).toEqual(['A', 'B']);
    expect(parsed.map((r) => r[0])).toEqual(cases.map(([, out]) => out));
    // Numbers are left alone: -5 is a number, not a formula.
    expect(parsed.every((r) => r[1] === '-5')).toBe(true);
  });

  it('agrees with the server rule (csv-stringify escape_formulas) wherever that rule applies', () => {
    for (const v of ['=x', '+x', '-x', '@x', '\tx', '\rx', 'x', 'x=1']) {
      // The same cell value; the browser also quotes a lone CR, which the server leaves bare.
      const server = serverStringify([[v]], {
        escape_formulas: true,
        record_delimiter: 'windows',
        quoted_match: /[\r\n]/,
      });
      const browser = buildCsv([['v', 'v']], [{ v }]).slice(1);
      expect(parse(browser)[1], JSON.stringify(v)).toEqual(parse(server)[0]);
    }
  });

  it('writes booleans as true/false and missing values as empty cells', () => {
    expect(
      buildCsv(COLS, [
        { a: true, b: undefined },
        { a: false, b: Number.NaN },
      ]).slice(1),
    ).toBe('A,B\r\ntrue,\r\nfalse,\r\n');
  });
});

describe('exportFileName', () => {
  it('is <prefix>-<kind>-<YYYYMMDD>-<HHMMSS>.<ext> in UTC', () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    expect(exportFileName('rampart', 'operations-log', 'csv', at)).toBe('rampart-operations-log-20260102-030405.csv');
    expect(exportFileName('mesh-a', 'mesh-check-results', 'json', at)).toBe(
      'mesh-a-mesh-check-results-20260102-030405.json',
    );
    expect(exportFileName('bad/name:x', 'operations-log', 'json', at)).toBe(
      'bad-name-x-operations-log-20260102-030405.json',
    );
  });
});
