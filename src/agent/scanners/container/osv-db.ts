// The offline advisory database. `importOsvDump` reads OSV records (a directory of .json files, a
// JSON array or object, or JSON lines), validates them and writes a SQLite file indexed by
// ecosystem and package name, so a scan looks up only the packages it found instead of loading
// every advisory. `openOsvDb` opens that file, or, for small sets, plain OSV JSON in memory.
import {
  closeSync,
  createReadStream,
  openSync,
  readSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DatabaseSync } from 'node:sqlite';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { osvRecordSchema, packageKey, type OsvRecord } from './osv.ts';

export const OSV_DB_FORMAT = 'rampart-osv/1';

/** The largest single JSON file read whole (a JSON array dump); bigger dumps should be JSON lines. */
const MAX_JSON_FILE_BYTES = 1024 * 1024 * 1024;
const MAX_RECORD_BYTES = 16 * 1024 * 1024;

export class OsvDbError extends Error {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'OsvDbError';
  }
}

export interface OsvDatabase {
  /** Advisories naming this package (ecosystem base and name as packageKey gives them). */
  lookup(ecosystem: string, name: string): OsvRecord[];
  /** Advisories held, and where they came from. */
  readonly info: { format: string; advisories: number; builtAt?: string; source?: string };
  close(): void;
}

export interface ImportSummary {
  imported: number;
  /** Records that failed validation (by id or file), at most 20 listed. */
  invalid: number;
  invalidExamples: string[];
  withdrawn: number;
  /** Records replaced by a newer `modified` of the same id. */
  superseded: number;
  ecosystems: Record<string, number>;
}

// Only what evaluation and findings use is stored; details are cut (the finding's description cap).
function compact(r: OsvRecord): OsvRecord {
  const refs = (r.references ?? []).filter((x) => /^https?:\/\//i.test(x.url) && x.url.length <= 2_000).slice(0, 20);
  return {
    id: r.id,
    ...(r.modified ? { modified: r.modified } : {}),
    ...(r.aliases?.length ? { aliases: r.aliases } : {}),
    ...(r.upstream?.length ? { upstream: r.upstream } : {}),
    ...(r.summary ? { summary: r.summary.slice(0, 500) } : {}),
    ...(r.details ? { details: r.details.slice(0, 4_000) } : {}),
    ...(r.severity?.length ? { severity: r.severity } : {}),
    affected: (r.affected ?? [])
      .filter((a) => a.package)
      .map((a) => ({
        package: { ecosystem: a.package!.ecosystem, name: a.package!.name },
        ...(a.ranges
          ? { ranges: a.ranges.filter((x) => x.type !== 'GIT').map((x) => ({ type: x.type, events: x.events })) }
          : {}),
        ...(a.versions?.length ? { versions: a.versions } : {}),
        ...(a.ecosystem_specific?.severity !== undefined || a.ecosystem_specific?.urgency !== undefined
          ? { ecosystem_specific: { severity: a.ecosystem_specific.severity, urgency: a.ecosystem_specific.urgency } }
          : {}),
        ...(a.database_specific?.severity !== undefined
          ? { database_specific: { severity: a.database_specific.severity } }
          : {}),
      })),
    ...(refs.length ? { references: refs.map((x) => ({ url: x.url })) } : {}),
    ...(r.database_specific?.severity !== undefined || r.database_specific?.cwe_ids !== undefined
      ? { database_specific: { severity: r.database_specific.severity, cwe_ids: r.database_specific.cwe_ids } }
      : {}),
  };
}

interface RawRecord {
  value: unknown;
  origin: string;
}

/** Records from a file: a JSON array or object, or JSON lines (one record per line). */
async function* recordsOfFile(path: string): AsyncGenerator<RawRecord> {
  const size = statSync(path).size;
  const head = Buffer.alloc(Math.min(size, 4_096));
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  const text = head.toString('utf8').trimStart();
  const lines = /\.jsonl$/i.test(path) || (text.startsWith('{') && /\}\s*\r?\n\s*\{/.test(text));
  if (lines) {
    let n = 0;
    const rl = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
    for await (const line of rl) {
      n++;
      if (!line.trim()) continue;
      if (line.length > MAX_RECORD_BYTES)
        throw new OsvDbError(`${path}:${n}: a record is larger than ${MAX_RECORD_BYTES} bytes`);
      try {
        yield { value: JSON.parse(line), origin: `${path}:${n}` };
      } catch (e) {
        if (e instanceof SyntaxError) yield { value: undefined, origin: `${path}:${n}` };
        else throw e;
      }
    }
    return;
  }
  if (size > MAX_JSON_FILE_BYTES)
    throw new OsvDbError(
      `${path} is larger than ${MAX_JSON_FILE_BYTES} bytes; give a directory of records or JSON lines instead`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    yield { value: undefined, origin: path };
    return;
  }
  if (Array.isArray(parsed)) for (const [i, v] of parsed.entries()) yield { value: v, origin: `${path}[${i}]` };
  else yield { value: parsed, origin: path };
}

/** Every record under a path: a file, or a directory searched recursively for .json/.jsonl files. */
async function* rawRecords(source: string): AsyncGenerator<RawRecord> {
  let st;
  try {
    st = statSync(source);
  } catch (e) {
    throw new OsvDbError(`Cannot read the OSV source ${source}: ${(e as Error).message}`, { cause: e });
  }
  if (st.isFile()) {
    yield* recordsOfFile(source);
    return;
  }
  if (!st.isDirectory()) throw new OsvDbError(`The OSV source ${source} is neither a file nor a directory`);
  const entries = readdirSync(source, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.jsonl?$/i.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
  for (const path of entries) yield* recordsOfFile(path);
}

/** Valid, not withdrawn records from a source, with counts of what was left out. */
async function* validRecords(source: string, summary: ImportSummary): AsyncGenerator<OsvRecord> {
  for await (const raw of rawRecords(source)) {
    const parsed = osvRecordSchema.safeParse(raw.value);
    if (!parsed.success) {
      summary.invalid++;
      if (summary.invalidExamples.length < 20) summary.invalidExamples.push(raw.origin);
      continue;
    }
    if (parsed.data.withdrawn) {
      summary.withdrawn++;
      continue;
    }
    yield compact(parsed.data);
  }
}

const emptySummary = (): ImportSummary => ({
  imported: 0,
  invalid: 0,
  invalidExamples: [],
  withdrawn: 0,
  superseded: 0,
  ecosystems: {},
});

/** The distinct (ecosystem base, name) keys a record is indexed under. */
function keysOf(r: OsvRecord): { ecosystem: string; name: string }[] {
  const seen = new Map<string, { ecosystem: string; name: string }>();
  for (const a of r.affected ?? []) {
    if (!a.package) continue;
    const k = packageKey(a.package.ecosystem, a.package.name);
    seen.set(`${k.ecosystem}\0${k.name}`, k);
  }
  return [...seen.values()];
}

/**
 * Builds the scanner's database at dbPath from OSV records at sourcePath (a directory, a JSON array
 * or object file, or JSON lines). The file is written beside dbPath and renamed into place, so a
 * running scanner never sees half a database.
 */
export async function importOsvDump(sourcePath: string, dbPath: string): Promise<ImportSummary> {
  const summary = emptySummary();
  const tmp = `${dbPath}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  const db = new DatabaseSync(tmp);
  try {
    db.exec(`
      pragma journal_mode = off;
      pragma synchronous = off;
      create table meta (key text primary key, value text not null);
      create table advisories (id text primary key, modified text not null, record blob not null);
      create table affected (ecosystem text not null, name text not null, id text not null);
    `);
    const getModified = db.prepare('select modified from advisories where id = ?');
    const upsert = db.prepare('insert or replace into advisories (id, modified, record) values (?, ?, ?)');
    const dropKeys = db.prepare('delete from affected where id = ?');
    const addKey = db.prepare('insert into affected (ecosystem, name, id) values (?, ?, ?)');
    db.exec('begin');
    for await (const r of validRecords(sourcePath, summary)) {
      const modified = r.modified ?? '';
      const prev = getModified.get(r.id) as { modified: string } | undefined;
      if (prev) {
        summary.superseded++;
        if (prev.modified >= modified) continue;
        dropKeys.run(r.id);
        summary.imported--;
      }
      // Deflated: advisory text compresses several times over, and the full OSV set is large.
      upsert.run(r.id, modified, deflateRawSync(JSON.stringify(r)));
      for (const k of keysOf(r)) addKey.run(k.ecosystem, k.name, r.id);
      summary.imported++;
    }
    db.exec('create index affected_package on affected (ecosystem, name)');
    for (const row of db
      .prepare('select ecosystem, count(distinct id) as n from affected group by ecosystem order by ecosystem')
      .all() as { ecosystem: string; n: number }[])
      summary.ecosystems[row.ecosystem] = row.n;
    const meta = db.prepare('insert into meta (key, value) values (?, ?)');
    meta.run('format', OSV_DB_FORMAT);
    meta.run('builtAt', new Date().toISOString());
    meta.run('source', sourcePath);
    db.exec('commit');
  } catch (e) {
    db.close();
    rmSync(tmp, { force: true });
    throw e;
  }
  db.close();
  renameSync(tmp, dbPath);
  return summary;
}

const SQLITE_MAGIC = 'SQLite format 3\0';

function isSqliteFile(path: string): boolean {
  const head = Buffer.alloc(16);
  const fd = openSync(path, 'r');
  try {
    return readSync(fd, head, 0, 16, 0) === 16 && head.toString('latin1') === SQLITE_MAGIC;
  } finally {
    closeSync(fd);
  }
}

function openSqlite(path: string): OsvDatabase {
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path, { readOnly: true });
    const format = (db.prepare("select value from meta where key = 'format'").get() as { value: string } | undefined)
      ?.value;
    if (format !== OSV_DB_FORMAT)
      throw new OsvDbError(`${path} is a SQLite file but not a Rampart OSV database (format ${format ?? 'unknown'})`);
  } catch (e) {
    if (e instanceof OsvDbError) throw e;
    throw new OsvDbError(`Cannot open the OSV database ${path}: ${(e as Error).message}`, { cause: e });
  }
  const meta = Object.fromEntries(
    (db.prepare('select key, value from meta').all() as { key: string; value: string }[]).map((r) => [r.key, r.value]),
  );
  const count = (db.prepare('select count(*) as n from advisories').get() as { n: number }).n;
  const query = db.prepare(
    'select a.record from affected f join advisories a on a.id = f.id where f.ecosystem = ? and f.name = ? group by a.id',
  );
  return {
    info: {
      format: OSV_DB_FORMAT,
      advisories: count,
      ...(meta.builtAt ? { builtAt: meta.builtAt } : {}),
      ...(meta.source ? { source: meta.source } : {}),
    },
    lookup(ecosystem, name) {
      const out: OsvRecord[] = [];
      for (const row of query.all(ecosystem, name) as { record: Uint8Array }[]) {
        // The file is the operator's, not ours alone: a record that no longer reads or validates is skipped.
        let value: unknown;
        try {
          value = JSON.parse(inflateRawSync(row.record, { maxOutputLength: MAX_RECORD_BYTES }).toString('utf8'));
        } catch {
          continue;
        }
        const parsed = osvRecordSchema.safeParse(value);
        if (parsed.success) out.push(parsed.data);
      }
      return out;
    },
    close: () => db.close(),
  };
}

/** OSV JSON held in memory, for small sets such as the bundled sample. */
async function openJson(path: string): Promise<OsvDatabase> {
  const summary = emptySummary();
  const index = new Map<string, OsvRecord[]>();
  const byId = new Map<string, OsvRecord>();
  for await (const r of validRecords(path, summary)) {
    const prev = byId.get(r.id);
    if (prev && (prev.modified ?? '') >= (r.modified ?? '')) continue;
    byId.set(r.id, r);
  }
  if (summary.invalid)
    throw new OsvDbError(
      `${summary.invalid} OSV record${summary.invalid === 1 ? '' : 's'} in ${path} did not validate (${summary.invalidExamples.slice(0, 3).join(', ')})`,
    );
  for (const r of byId.values()) {
    for (const k of keysOf(r)) {
      const key = `${k.ecosystem}\0${k.name}`;
      index.set(key, [...(index.get(key) ?? []), r]);
    }
  }
  return {
    info: { format: 'osv-json', advisories: byId.size, source: path },
    lookup: (ecosystem, name) => index.get(`${ecosystem}\0${name}`) ?? [],
    close: () => undefined,
  };
}

/** Opens a database built by importOsvDump, or reads OSV JSON (a file or directory) into memory. */
export async function openOsvDb(path: string): Promise<OsvDatabase> {
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    throw new OsvDbError(`Cannot read the OSV database ${path}: ${(e as Error).message}`, { cause: e });
  }
  if (st.isFile() && isSqliteFile(path)) return openSqlite(path);
  return openJson(path);
}
