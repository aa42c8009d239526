// `rampart-worker osv import <dump>`: builds the offline advisory database the container scanner
// matches packages against, from OSV records (a directory of .json/.jsonl files, a JSON array, or
// JSON lines: e.g. an unzipped https://osv-vulnerabilities.storage.googleapis.com/<ecosystem>/all.zip).
// The new file replaces the old one atomically, so running workers pick it up between scans.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultOsvDbPath } from '../config.ts';
import { importOsvDump, OsvDbError } from '../scanners/container/index.ts';
import { EXIT, UsageError, type CliIo } from './common.ts';

export const OSV_HELP = `Usage: rampart-worker osv import <path> [--db PATH]

Imports OSV advisories into the database the container scanner reads. <path> is a directory of
OSV .json / .jsonl files (an unzipped OSV ecosystem dump), one JSON file (a record or an array),
or a JSON-lines file. Zip files must be unzipped first. Importing again replaces the database.

Options:
  --db PATH   where to write the database (default: $RAMPART_OSV_DB, else osv.sqlite next to
              the config file)
  --json      print the summary as JSON
`;

export async function osvCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { db: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    io.stdout.write(OSV_HELP);
    return EXIT.ok;
  }
  const [sub, source, extra] = positionals;
  if (sub !== 'import')
    throw new UsageError(
      `osv needs a subcommand: rampart-worker osv import <path>${sub ? ` (not ${JSON.stringify(sub)})` : ''}`,
    );
  if (!source) throw new UsageError('osv import needs the path of an OSV dump');
  if (extra) throw new UsageError(`Unexpected argument ${JSON.stringify(extra)}`);
  const from = resolve(source);
  if (!existsSync(from)) throw new UsageError(`${from} does not exist`);
  const db = resolve(values.db ?? defaultOsvDbPath(io.env));
  mkdirSync(dirname(db), { recursive: true });
  let summary;
  try {
    summary = await importOsvDump(from, db);
  } catch (e) {
    if (e instanceof OsvDbError) {
      io.stderr.write(`Import failed: ${e.message}\n`);
      return EXIT.failed;
    }
    throw e;
  }
  if (values.json) {
    io.stdout.write(`${JSON.stringify({ db, ...summary }, null, 2)}\n`);
    return EXIT.ok;
  }
  const eco = Object.entries(summary.ecosystems).sort((a, b) => b[1] - a[1]);
  io.stdout.write(`Imported ${summary.imported} advisories into ${db}\n`);
  if (eco.length) io.stdout.write(`  by ecosystem: ${eco.map(([k, n]) => `${k} ${n}`).join(', ')}\n`);
  if (summary.withdrawn) io.stdout.write(`  withdrawn, left out: ${summary.withdrawn}\n`);
  if (summary.superseded) io.stdout.write(`  older copies replaced by a newer one: ${summary.superseded}\n`);
  if (summary.invalid)
    io.stdout.write(`  invalid, left out: ${summary.invalid} (${summary.invalidExamples.slice(0, 5).join('; ')})\n`);
  return EXIT.ok;
}
