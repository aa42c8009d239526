// Plain-text pieces of a local scan's output that need no findings schema (its construction is
// most of a start's evaluation): the format names, tables, clipping and the progress line.

export type OutputFormat = 'table' | 'json' | 'sarif';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['table', 'json', 'sarif'];

export function renderTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmt = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [fmt(headers), fmt(widths.map((w) => '-'.repeat(w))), ...rows.map(fmt)].join('\n');
}

export const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** A single updating progress line on a terminal (stderr); silent elsewhere. */
export function progressLine(stream: NodeJS.WriteStream) {
  const enabled = Boolean(stream.isTTY);
  let last = 0;
  let shown = false;
  return {
    update(percent: number, message: string) {
      if (!enabled) return;
      const now = Date.now();
      if (now - last < 100 && percent < 100) return;
      last = now;
      const width = Math.max(20, (stream.columns || 80) - 1);
      stream.write(`\r\x1b[2K${clip(`${percent.toFixed(0).padStart(3)}% ${message}`, width)}`);
      shown = true;
    },
    clear() {
      if (enabled && shown) stream.write('\r\x1b[2K');
      shown = false;
    },
  };
}
