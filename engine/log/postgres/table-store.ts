/**
 * `sql` and `nosql` store tables on PostgreSQL: real tables in the log's database, written inside
 * the commit's transaction, so a store write and its 'store.write' event land together.
 *
 * - sql table:   `_seq BIGINT IDENTITY, _key TEXT PRIMARY KEY, _record TEXT NOT NULL` (the exact
 *                record as JSON) plus one projected `jsonb` column per top-level field, added with
 *                ALTER TABLE as fields appear: query them with plain SQL (`amount::numeric > 5`,
 *                `name->>0`, `status = '"paid"'`). `_record` is the truth; a field the record lacks
 *                is NULL; a field whose name cannot be a column (see `projectable`) stays in
 *                `_record` only.
 * - nosql table: `_seq, _key TEXT PRIMARY KEY, _doc TEXT NOT NULL` (JSON; query with `_doc::jsonb`).
 * - order: `_seq` is the insertion order (what `list` returns); a write of an existing key keeps
 *   its `_seq` (INSERT … ON CONFLICT DO UPDATE), as the SQLite log keeps the key's rowid.
 *
 * Invariant: every method runs on the caller's connection inside its transaction. Column names
 * are case-sensitive here (quoted identifiers), at most 63 bytes (PostgreSQL truncates longer
 * ones, which could make two fields share a column, so those stay in `_record` only).
 */
import type { PoolClient } from 'pg';
import type { TableStoreWrite } from '../log.js';
import { describe } from '../rows.js';
import { checkTableName, mergePatch, stripUndefined } from '../store-rules.js';

type StoreKind = TableStoreWrite['storeKind'];

const RESERVED_COLUMNS = new Set(['_seq', '_key', '_record', '_doc']);
/** Projected columns per table (PostgreSQL allows 1600); fields past this stay in `_record` only. */
const MAX_PROJECTED_COLUMNS = 500;
/** PostgreSQL's identifier limit (NAMEDATALEN - 1) in bytes. */
const MAX_COLUMN_BYTES = 63;

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/** True if `field` can name a projected column as it is (no NUL, well-formed UTF-16, ≤ 63 bytes). */
export function projectable(field: string): boolean {
  return field !== '' && !field.includes('\u0000') && !LONE_SURROGATE.test(field) && Buffer.byteLength(field, 'utf8') <= MAX_COLUMN_BYTES;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The JSON a projected column holds for a field (JSON.stringify's own rule for odd values: null).
 * jsonb refuses a NUL (`\u0000`) and a lone surrogate (`\ud800`, the only surrogates
 * JSON.stringify escapes) in a string, so such a value is NULL in its column and kept in `_record`
 * only: the write never fails because of a value.
 */
function projectValue(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  const json = JSON.stringify(value);
  return json === undefined || UNSTORABLE_IN_JSONB.test(json) ? null : json;
}

const UNSTORABLE_IN_JSONB = /\\u0000|\\ud[89a-f]/i;

/** Table → its projected columns (exact names), or null for a nosql table. */
type Shape = Set<string> | null;

export class PgTableStores {
  private readonly known = new Map<string, Shape>();

  /** Applies one write on `client` (inside its transaction); returns the record as stored, as JSON text. */
  async apply(client: PoolClient, write: TableStoreWrite): Promise<string> {
    this.checkKey(write);
    if (typeof write.record !== 'object' || write.record === null || Array.isArray(write.record)) {
      throw new Error(`store '${write.store}': expected an object but got: ${describe(write.record)}`);
    }
    const shape = await this.ensureTable(client, write.storeKind, write.table);
    const incoming = stripUndefined(write.record);
    let stored: Record<string, unknown>;
    switch (write.op) {
      case 'set':
        stored = incoming;
        break;
      case 'upsert':
        stored = mergePatch(await this.get(client, write.storeKind, write.table, write.key), incoming) as Record<string, unknown>;
        break;
      case 'delete':
        throw new Error(`store '${write.store}': a delete is applied with remove(), not apply()`);
      default: {
        const never: never = write.op;
        throw new Error(`store '${write.store}': unknown op ${JSON.stringify(never)}; expected 'set', 'upsert' or 'delete'`);
      }
    }
    return this.put(client, write, shape, stored);
  }

  /**
   * `delete S[k]`: removes the row under the key on `client` (inside its transaction); true if
   * there was one. Its `_seq` goes with it, so the key written again lands at the end, as in the
   * SQLite log and a JS Map. The table is made if absent, as a write would make it.
   */
  async remove(client: PoolClient, write: TableStoreWrite): Promise<boolean> {
    this.checkKey(write);
    await this.ensureTable(client, write.storeKind, write.table);
    const { rowCount } = await client.query(`DELETE FROM ${quote(write.table)} WHERE _key = $1`, [write.key]);
    return (rowCount ?? 0) > 0;
  }

  private checkKey(write: TableStoreWrite): void {
    if (typeof write.key !== 'string' || write.key === '') {
      throw new Error(`store '${write.store}': key must be a non-empty string but got: ${describe(write.key)}`);
    }
    // PostgreSQL text holds neither NUL nor a lone surrogate (which would become U+FFFD, so two
    // keys could become one): refused, naming the key, rather than changed.
    if (write.key.includes('\u0000') || LONE_SURROGATE.test(write.key)) {
      throw new Error(
        `store '${write.store}': key ${JSON.stringify(write.key)} holds a NUL character or a lone UTF-16 surrogate, which a PostgreSQL log cannot store as text; derive the key from other fields`,
      );
    }
  }

  private async put(client: PoolClient, write: TableStoreWrite, shape: Shape, stored: Record<string, unknown>): Promise<string> {
    const json = JSON.stringify(stored);
    const table = quote(write.table);
    if (shape === null) {
      await client.query(`INSERT INTO ${table} (_key, _doc) VALUES ($1, $2) ON CONFLICT (_key) DO UPDATE SET _doc = EXCLUDED._doc`, [write.key, json]);
      return json;
    }
    const fields: string[] = [];
    const values: (string | null)[] = [];
    for (const [field, value] of Object.entries(stored)) {
      if (!(await this.ensureColumn(client, write.table, shape, field))) continue;
      fields.push(field);
      values.push(projectValue(value));
    }
    // Every projected column is set: those of fields the record no longer has become NULL.
    const sets = ['_record = EXCLUDED._record', ...[...shape].map((column) => `${quote(column)} = EXCLUDED.${quote(column)}`)];
    await client.query(
      `INSERT INTO ${table} (_key, _record${fields.map((f) => `, ${quote(f)}`).join('')})
       VALUES ($1, $2${fields.map((_, i) => `, $${i + 3}::jsonb`).join('')})
       ON CONFLICT (_key) DO UPDATE SET ${sets.join(', ')}`,
      [write.key, json, ...values],
    );
    return json;
  }

  /** Forgets known tables and columns: a rollback may have undone a CREATE or ALTER TABLE. */
  invalidate(): void {
    this.known.clear();
  }

  /** All records of a table in insertion order; [] if it was never written. */
  async list(client: PoolClient, storeKind: StoreKind, table: string): Promise<{ key: string; record: Record<string, unknown> }[]> {
    checkTableName(table, storeKind);
    const columns = await this.columnsOf(client, table);
    if (columns.size === 0) return [];
    this.checkShape(storeKind, table, columns);
    const body = storeKind === 'sql' ? '_record' : '_doc';
    const { rows } = await client.query<{ k: string; v: string }>(`SELECT _key AS k, ${body} AS v FROM ${quote(table)} ORDER BY _seq`);
    return rows.map((row) => ({ key: row.k, record: JSON.parse(row.v) as Record<string, unknown> }));
  }

  private async get(client: PoolClient, storeKind: StoreKind, table: string, key: string): Promise<Record<string, unknown> | undefined> {
    const body = storeKind === 'sql' ? '_record' : '_doc';
    const { rows } = await client.query<{ v: string }>(`SELECT ${body} AS v FROM ${quote(table)} WHERE _key = $1`, [key]);
    return rows[0] === undefined ? undefined : (JSON.parse(rows[0].v) as Record<string, unknown>);
  }

  private async ensureTable(client: PoolClient, storeKind: StoreKind, table: string): Promise<Shape> {
    const id = `${storeKind}:${table}`;
    const cached = this.known.get(id);
    if (cached !== undefined) return cached;
    checkTableName(table, storeKind);
    const body = storeKind === 'sql' ? '_record' : '_doc';
    // Two processes creating the same table at once: the loser's CREATE waits, then finds it.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`reqon-table:${table}`]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${quote(table)} (_seq BIGINT GENERATED ALWAYS AS IDENTITY, _key TEXT PRIMARY KEY, ${body} TEXT NOT NULL)`,
    );
    const columns = await this.columnsOf(client, table);
    this.checkShape(storeKind, table, columns);
    const shape: Shape = storeKind === 'sql' ? new Set([...columns].filter((c) => !RESERVED_COLUMNS.has(c))) : null;
    this.known.set(id, shape);
    return shape;
  }

  private checkShape(storeKind: StoreKind, table: string, columns: Set<string>): void {
    const body = storeKind === 'sql' ? '_record' : '_doc';
    if (!columns.has('_key') || !columns.has(body) || !columns.has('_seq')) {
      const other = columns.has('_doc') ? 'a nosql store table' : columns.has('_record') ? 'a sql store table' : 'not a store table';
      throw new Error(
        `table '${table}' already exists in the log database and is ${other}, so it cannot hold a ${storeKind} store; give the store another table name`,
      );
    }
  }

  /** True if `field` has (or now got) its own projected column. */
  private async ensureColumn(client: PoolClient, table: string, shape: Set<string>, field: string): Promise<boolean> {
    if (!projectable(field) || RESERVED_COLUMNS.has(field)) return false;
    if (shape.has(field)) return true;
    if (shape.size >= MAX_PROJECTED_COLUMNS) return false;
    await client.query(`ALTER TABLE ${quote(table)} ADD COLUMN IF NOT EXISTS ${quote(field)} jsonb`);
    shape.add(field);
    return true;
  }

  private async columnsOf(client: PoolClient, table: string): Promise<Set<string>> {
    const { rows } = await client.query<{ name: string }>(
      `SELECT attname AS name FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`,
      [quote(table)],
    );
    return new Set(rows.map((r) => r.name));
  }
}
