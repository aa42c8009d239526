// COPY … FROM STDIN on PostgreSQL through the ordinary query path, so that it runs inside a Kysely
// transaction on that transaction's own connection. node-postgres has no COPY of its own; the
// pg-copy-streams library adds it as a query object. Kysely hands a statement to the client as
// `client.query(sql, parameters)` and keeps the client private, so each pool client's `query`
// is wrapped once (pool `connect`): a COPY … FROM STDIN statement sent with exactly one
// Uint8Array parameter streams that parameter as the COPY data and answers like a command.
import { finished } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import { CompiledQuery } from 'kysely';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

const COPY_FROM_STDIN = /^\s*copy\s[\s\S]*\sfrom\s+stdin\b/i;

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/** Lets `client` run `COPY … FROM STDIN` sent with its data as the one parameter (see above). */
export function enableCopyFromStdin(client: pg.PoolClient | pg.Client): void {
  const target = client as unknown as { query: Query; copyFromStdin?: true };
  if (target.copyFromStdin) return;
  const query = target.query.bind(client) as Query;
  target.copyFromStdin = true;
  target.query = (config, values, callback) => {
    if (
      typeof config === 'string' &&
      Array.isArray(values) &&
      values.length === 1 &&
      values[0] instanceof Uint8Array &&
      COPY_FROM_STDIN.test(config)
    )
      return copyIn(query, config, values[0]);
    return query(config, values, callback);
  };
}

async function copyIn(
  query: Query,
  statement: string,
  data: Uint8Array,
): Promise<{ command: string; rowCount: number; rows: [{ copied: number }] }> {
  const stream = query(copyFrom(statement)) as ReturnType<typeof copyFrom>;
  stream.end(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  await finished(stream);
  // Kysely reports a row count only for insert, update, delete and merge: the count travels as a row.
  return { command: 'COPY', rowCount: stream.rowCount, rows: [{ copied: stream.rowCount }] };
}

/**
 * Runs `statement` (COPY … FROM STDIN) with `data` in COPY's format on the connection of `q`, a
 * transaction or database of a pool whose clients enableCopyFromStdin wrapped. Returns the rows copied.
 */
export async function copyFromStdin<DB>(q: Kysely<DB>, statement: string, data: Uint8Array): Promise<number> {
  if (!COPY_FROM_STDIN.test(statement)) throw new Error('copyFromStdin: the statement must be COPY … FROM STDIN');
  const result = await q.executeQuery<{ copied: number }>(CompiledQuery.raw(statement, [data]));
  const copied = result.rows[0]?.copied;
  if (copied === undefined)
    throw new Error('copyFromStdin: this connection cannot COPY FROM STDIN (enableCopyFromStdin)');
  return copied;
}
