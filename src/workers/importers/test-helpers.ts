// Helpers for the importer tests: fixtures as streams, and collecting a parse with its meta.
import { createReadStream, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { normalizedFindingSchema } from '../../findings/index.ts';
import { parseReport, type ImportedFinding, type ReportFormat, type ReportMeta } from './index.ts';

export const fixturePath = (name: string) =>
  fileURLToPath(new URL(`../../../test/fixtures/reports/${name}`, import.meta.url));
export const fixtureHead = (name: string, bytes = 4096) => readFileSync(fixturePath(name)).subarray(0, bytes);

/** Small chunks exercise the readers' chunk boundaries. */
export const fixtureStream = (name: string) => createReadStream(fixturePath(name), { highWaterMark: 97 });
export const textStream = (text: string | Buffer, chunk = 64) => {
  const buf = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const parts: Buffer[] = [];
  for (let i = 0; i < buf.length; i += chunk) parts.push(buf.subarray(i, i + chunk));
  return Readable.from(parts);
};

export async function collect(
  format: ReportFormat,
  stream: Readable,
): Promise<{ findings: ImportedFinding[]; meta: ReportMeta }> {
  const report = parseReport(format, stream);
  const findings: ImportedFinding[] = [];
  for await (const f of report) {
    // Every output must already be what the findings schema produces (parsing it again changes
    // nothing); the tool namespace, check class and host aliases ride along outside the schema.
    const { tool: _tool, aliases: _aliases, checkClass: _checkClass, ...plain } = f;
    const again = normalizedFindingSchema.parse(plain);
    if (JSON.stringify(again) !== JSON.stringify(plain))
      throw new Error(`Finding changes when validated again: ${JSON.stringify(f).slice(0, 200)}`);
    findings.push(f);
  }
  return { findings, meta: report.meta };
}

export async function parseError(format: ReportFormat, stream: Readable): Promise<unknown> {
  try {
    await collect(format, stream);
  } catch (err) {
    return err;
  }
  throw new Error('expected the parse to fail');
}
