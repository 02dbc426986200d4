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
 * Invariant: every method runs on the caller's connection inside its transaction. A table's name
 * is the store's in lower case (pgTableName: one table whatever the case, as on SQLite). Column names
 * are case-sensitive here (quoted identifiers), at most 63 bytes (PostgreSQL truncates longer
 * ones, which could make two fields share a column, so those stay in `_record` only).
 */
import type { PoolClient } from 'pg';
import type { PlacedRow, TableStoreWrite } from '../log.js';
import { describe } from '../rows.js';
import { checkTableName, mergePatch, stripUndefined } from '../store-rules.js';

type StoreKind = TableStoreWrite['storeKind'];

/** What one write left: the record as stored (JSON text, 'null' for a delete); for a delete, whether a row was there. */
export interface AppliedWrite {
  json: string;
  removed?: boolean;
}

const RESERVED_COLUMNS = new Set(['_seq', '_key', '_record', '_doc']);
/**
 * Projected columns per table (PostgreSQL allows 1600); fields past this stay in `_record` only.
 * A row must fit one 8 kB page, and a toasted value still takes 18 bytes of it: 500 columns of
 * longer values made a valid record fail ("row is too big"); 400 always fit.
 */
const MAX_PROJECTED_COLUMNS = 400;
/** PostgreSQL's identifier limit (NAMEDATALEN - 1) in bytes. */
const MAX_COLUMN_BYTES = 63;

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/**
 * The table a store's table name names: its name in lower case. SQLite matches (ASCII)
 * identifiers without regard to case — `sql("Orders")` and `sql("orders")` are one table there —
 * so they are one table here too, and a log copied either way keeps its tables as they were.
 * Lower case, as PostgreSQL folds an unquoted name: `SELECT … FROM Orders` finds it.
 */
export function pgTableName(table: string): string {
  return table.toLowerCase();
}

function quoteTable(table: string): string {
  return quote(pgTableName(table));
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

/**
 * Records and column values (JSON texts) go to PostgreSQL as one JSON array of strings per column,
 * read back by this function, rather than as text[]: see `eventParams` in run-sql.ts for why. A
 * JSON null in a column's array is SQL NULL.
 */
const JSON_TEXTS = 'json_array_elements_text';

/**
 * Rows per INSERT. A store step writes a whole response in one commit (hundreds of thousands of
 * records); the driver writes each array parameter out as one text literal, every element escaped
 * again, so one statement for all of them held several copies of the batch in memory at once.
 */
const ROWS_PER_INSERT = 2_000;

/** Table → its projected columns (exact names), or null for a nosql table. */
type Shape = Set<string> | null;

export class PgTableStores {
  private readonly known = new Map<string, Shape>();

  /**
   * Applies `writes` in order on `client` (inside its transaction), leaving exactly what applying
   * them one by one would, in at most four statements per table: one SELECT of the records an
   * upsert merges into, one DELETE, one multi-row INSERT … ON CONFLICT (and ALTER TABLE for new
   * fields). A key written many times (100 runs of one mission writing the same keys in one
   * group) is worked out here first — later writes see earlier ones — and reaches the table
   * once, as its last state. Returns, per write, the record as stored (JSON text; 'null' for a
   * delete) and, for a delete, whether a row was there. Call `check` on each write first.
   */
  async applyWrites(client: PoolClient, writes: readonly TableStoreWrite[]): Promise<AppliedWrite[]> {
    const applied: AppliedWrite[] = new Array(writes.length);
    const byTable = new Map<string, number[]>();
    for (let i = 0; i < writes.length; i++) {
      const id = `${writes[i]!.storeKind}:${pgTableName(writes[i]!.table)}`;
      const list = byTable.get(id);
      if (list === undefined) byTable.set(id, [i]);
      else list.push(i);
    }
    for (const indexes of byTable.values()) await this.applyToTable(client, writes, indexes, applied);
    return applied;
  }

  /** The writes `indexes` (in order, one table's) as their net effect on the table (see applyWrites). */
  private async applyToTable(client: PoolClient, writes: readonly TableStoreWrite[], indexes: number[], applied: AppliedWrite[]): Promise<void> {
    const { storeKind, table } = writes[indexes[0]!]!;
    const shape = await this.ensureTable(client, storeKind, table);
    // What the table holds before the batch matters only where a key's first write reads it:
    // an upsert merges into the stored record, a delete reports whether there was one.
    const firstOp = new Map<string, TableStoreWrite['op']>();
    const deleted = new Set<string>();
    for (const i of indexes) {
      const { key, op } = writes[i]!;
      if (!firstOp.has(key)) firstOp.set(key, op);
      if (op === 'delete') deleted.add(key);
    }
    const mergedInto = [...firstOp].filter(([, op]) => op === 'upsert').map(([key]) => key);
    const stored = mergedInto.length === 0 ? new Map<string, unknown>() : await this.getMany(client, storeKind, table, mergedInto);
    let existed = new Set<string>();
    if (deleted.size > 0) {
      // `delete S[k]`: the row's `_seq` goes with it, so the key written again lands at the
      // end, as in the SQLite log and a JS Map. The table is made if absent, as a write would.
      const { rows } = await client.query<{ k: string }>(`DELETE FROM ${quoteTable(table)} WHERE _key = ANY($1::text[]) RETURNING _key AS k`, [[...deleted]]);
      existed = new Set(rows.map((row) => row.k));
    }
    /** Each key's state after the writes so far: its record, or null when removed; absent while untouched. */
    const state = new Map<string, Record<string, unknown> | null>();
    /** Each key whose last state is a record, by the write that (re)inserted it: new rows take `_seq` in that order. */
    const insertedAt = new Map<string, number>();
    const puts: Record<string, unknown>[] = [];
    const lastJson = new Map<string, string>();
    for (const i of indexes) {
      const { key, op, record } = writes[i]!;
      const before = state.has(key) ? state.get(key)! : undefined;
      if (op === 'delete') {
        applied[i] = { json: 'null', removed: state.has(key) ? before !== null : existed.has(key) };
        state.set(key, null);
        insertedAt.delete(key);
        continue;
      }
      const incoming = stripUndefined(record);
      const base = state.has(key) ? (before ?? undefined) : stored.get(key);
      const next = (op === 'upsert' ? mergePatch(base, incoming) : incoming) as Record<string, unknown>;
      state.set(key, next);
      if (!insertedAt.has(key)) insertedAt.set(key, i);
      puts.push(next);
      const json = JSON.stringify(next);
      lastJson.set(key, json);
      applied[i] = { json };
    }
    const keys = [...insertedAt.keys()].sort((a, b) => insertedAt.get(a)! - insertedAt.get(b)!);
    if (keys.length === 0) return;
    // Columns for every field any of the writes had, in their order, as one by one would add them.
    if (shape !== null) {
      for (const record of puts) for (const field of Object.keys(record)) if (!shape.has(field)) await this.ensureColumn(client, table, shape, field);
    }
    await this.putMany(client, table, shape, keys, keys.map((key) => state.get(key)!), keys.map((key) => lastJson.get(key)!));
  }

  /** Throws, naming the store, if `write` cannot be applied (checked before any statement runs). */
  check(write: TableStoreWrite): void {
    this.checkKey(write);
    if (write.op === 'delete') return;
    if (write.op !== 'set' && write.op !== 'upsert') {
      throw new Error(`store '${write.store}': unknown op ${JSON.stringify(write.op)}; expected 'set', 'upsert' or 'delete'`);
    }
    if (typeof write.record !== 'object' || write.record === null || Array.isArray(write.record)) {
      throw new Error(`store '${write.store}': expected an object but got: ${describe(write.record)}`);
    }
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

  /**
   * One multi-row INSERT … ON CONFLICT (keys distinct): new keys take `_seq` in the order given
   * (ORDER BY ord), a key already there keeps its `_seq`. `jsons`: the records as JSON text.
   */
  private async putMany(client: PoolClient, table: string, shape: Shape, keys: string[], records: Record<string, unknown>[], jsons: string[]): Promise<void> {
    // In slices, in order (so `_seq` follows it): see ROWS_PER_INSERT.
    for (let from = 0; from < keys.length; from += ROWS_PER_INSERT) {
      const to = from + ROWS_PER_INSERT;
      if (from === 0 && to >= keys.length) await this.putSlice(client, table, shape, keys, records, jsons);
      else await this.putSlice(client, table, shape, keys.slice(from, to), records.slice(from, to), jsons.slice(from, to));
    }
  }

  private async putSlice(client: PoolClient, table: string, shape: Shape, keys: string[], records: Record<string, unknown>[], jsons: string[]): Promise<void> {
    const name = quoteTable(table);
    if (shape === null) {
      await client.query(
        `INSERT INTO ${name} (_key, _doc) SELECT u.k, u.d FROM ROWS FROM (unnest($1::text[]), ${JSON_TEXTS}($2::json)) WITH ORDINALITY AS u(k, d, ord) ORDER BY u.ord
         ON CONFLICT (_key) DO UPDATE SET _doc = EXCLUDED._doc`,
        [keys, JSON.stringify(jsons)],
      );
      return;
    }
    const columns: string[] = [];
    const values = new Map<string, (string | null)[]>();
    for (let n = 0; n < records.length; n++) {
      for (const [field, value] of Object.entries(records[n]!)) {
        // Columns were added before the slices (applyToTable); one still missing has none (a field
        // that cannot be a column, or past the cap).
        if (!shape.has(field)) continue;
        let column = values.get(field);
        if (column === undefined) {
          column = new Array<string | null>(records.length).fill(null);
          values.set(field, column);
          columns.push(field);
        }
        column[n] = projectValue(value);
      }
    }
    // Every projected column is set: those of fields the record no longer has become NULL.
    const sets = ['_record = EXCLUDED._record', ...[...shape].map((column) => `${quote(column)} = EXCLUDED.${quote(column)}`)];
    const aliases = columns.map((_, c) => `c${c}`);
    await client.query(
      `INSERT INTO ${name} (_key, _record${columns.map((f) => `, ${quote(f)}`).join('')})
       SELECT u.k, u.r${aliases.map((a) => `, u.${a}::jsonb`).join('')}
         FROM ROWS FROM (unnest($1::text[]), ${JSON_TEXTS}($2::json)${aliases.map((_, c) => `, ${JSON_TEXTS}($${c + 3}::json)`).join('')}) WITH ORDINALITY AS u(k, r${aliases.map((a) => `, ${a}`).join('')}, ord)
        ORDER BY u.ord
       ON CONFLICT (_key) DO UPDATE SET ${sets.join(', ')}`,
      [keys, JSON.stringify(jsons), ...columns.map((field) => JSON.stringify(values.get(field)!))],
    );
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
    const { rows } = await client.query<{ k: string; v: string }>(`SELECT _key AS k, ${body} AS v FROM ${quoteTable(table)} ORDER BY _seq`);
    return rows.map((row) => ({ key: row.k, record: JSON.parse(row.v) as Record<string, unknown> }));
  }

  /** The SELECT of a table's rows with their places (columns p, k, v; no ORDER BY), or null for a table never written. */
  async placedSelect(client: PoolClient, storeKind: StoreKind, table: string): Promise<string | null> {
    checkTableName(table, storeKind);
    const columns = await this.columnsOf(client, table);
    if (columns.size === 0) return null;
    this.checkShape(storeKind, table, columns);
    return `SELECT _seq AS p, _key AS k, ${storeKind === 'sql' ? '_record' : '_doc'} AS v FROM ${quoteTable(table)}`;
  }

  /** The records under `keys` that the table holds, with their places (in no particular order). */
  async rowsOf(client: PoolClient, storeKind: StoreKind, table: string, keys: readonly string[]): Promise<PlacedRow[]> {
    const select = keys.length === 0 ? null : await this.placedSelect(client, storeKind, table);
    if (select === null) return [];
    const { rows } = await client.query<{ p: number; k: string; v: string }>(`${select} WHERE _key = ANY($1::text[])`, [keys]);
    return rows.map((row) => ({ key: row.k, record: JSON.parse(row.v) as Record<string, unknown>, place: row.p }));
  }

  private async getMany(client: PoolClient, storeKind: StoreKind, table: string, keys: string[]): Promise<Map<string, unknown>> {
    const body = storeKind === 'sql' ? '_record' : '_doc';
    const { rows } = await client.query<{ k: string; v: string }>(`SELECT _key AS k, ${body} AS v FROM ${quoteTable(table)} WHERE _key = ANY($1::text[])`, [keys]);
    return new Map(rows.map((row) => [row.k, JSON.parse(row.v) as unknown]));
  }

  private async ensureTable(client: PoolClient, storeKind: StoreKind, table: string): Promise<Shape> {
    const id = `${storeKind}:${pgTableName(table)}`;
    const cached = this.known.get(id);
    if (cached !== undefined) return cached;
    checkTableName(table, storeKind);
    const body = storeKind === 'sql' ? '_record' : '_doc';
    // Two processes creating the same table at once: the loser's CREATE waits, then finds it.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`reqon-table:${pgTableName(table)}`]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${quoteTable(table)} (_seq BIGINT GENERATED ALWAYS AS IDENTITY, _key TEXT PRIMARY KEY, ${body} TEXT NOT NULL)`,
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
    await client.query(`ALTER TABLE ${quoteTable(table)} ADD COLUMN IF NOT EXISTS ${quote(field)} jsonb`);
    shape.add(field);
    return true;
  }

  private async columnsOf(client: PoolClient, table: string): Promise<Set<string>> {
    const { rows } = await client.query<{ name: string }>(
      `SELECT attname AS name FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`,
      [quoteTable(table)],
    );
    return new Set(rows.map((r) => r.name));
  }
}
