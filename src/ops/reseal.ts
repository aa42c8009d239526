// Encryption-key rotation, second step: re-seal every stored secret under the current
// APP_ENCRYPTION_KEY. Values still sealed under a key in APP_ENCRYPTION_KEY_PREVIOUS are opened
// with it and sealed again; once this has run on every row, the previous key can be dropped.
// Each row is rewritten in its own short transaction, only if it has not changed since it was
// read, so it is safe while the platform serves (a concurrent edit wins and is already current).
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { withService } from '../db/tenant.ts';
import type { SecretBox } from '../lib/crypto.ts';

/** Every sealed column of the schema. A module that stores a new sealed column adds it here. */
export const SEALED_COLUMNS = [
  { table: 'tenant_storage_settings', key: 'tenant_id', columns: ['access_key_id_sealed', 'secret_access_key_sealed'] },
  { table: 'tenant_webhook_secrets', key: 'tenant_id', columns: ['current_sealed', 'previous_sealed'] },
  { table: 'hosted_worker_credentials', key: 'worker_id', columns: ['token_sealed'] },
] as const;

export interface ResealResult {
  table: string;
  rows: number;
  resealed: number;
  /** Rows whose values no configured key opens (sealed under a key that is gone). */
  unreadable: number;
}

export async function resealSecrets(db: Kysely<DB>, box: SecretBox): Promise<ResealResult[]> {
  const results: ResealResult[] = [];
  for (const spec of SEALED_COLUMNS) {
    const cols = spec.columns as readonly string[];
    const rows = await withService(db, (tx) =>
      sql<
        Record<string, string | null>
      >`select ${sql.ref(spec.key)} as id, ${sql.join(cols.map((c) => sql.ref(c)))} from ${sql.table(spec.table)}`.execute(
        tx,
      ),
    );
    const result: ResealResult = { table: spec.table, rows: rows.rows.length, resealed: 0, unreadable: 0 };
    for (const row of rows.rows) {
      let fresh: Record<string, string>;
      try {
        fresh = Object.fromEntries(
          cols.filter((c) => row[c] !== null && row[c] !== undefined).map((c) => [c, box.seal(box.open(row[c]!))]),
        );
      } catch {
        result.unreadable += 1;
        continue;
      }
      // Compare-and-set on the values read: a row changed meanwhile was sealed with the current key.
      const same = cols.map((c) =>
        row[c] === null || row[c] === undefined ? sql`${sql.ref(c)} is null` : sql`${sql.ref(c)} = ${row[c]}`,
      );
      const updated = await withService(db, (tx) =>
        sql`update ${sql.table(spec.table)} set ${sql.join(Object.entries(fresh).map(([c, v]) => sql`${sql.ref(c)} = ${v}`))}
            where ${sql.ref(spec.key)} = ${row.id} and ${sql.join(same, sql` and `)}`.execute(tx),
      );
      if (Number(updated.numAffectedRows ?? 0) > 0) result.resealed += 1;
    }
    results.push(result);
  }
  return results;
}
