/**
 * `sql` and `nosql` store tables: real tables in the log's own database, written inside the
 * log's transaction so that a store write and its 'store.write' event land together (exactly once).
 *
 * - sql table:   `_seq INTEGER PRIMARY KEY, _key TEXT NOT NULL UNIQUE, _record TEXT NOT NULL` (the
 *                exact record as JSON) plus one projected column per top-level field, added with
 *                ALTER TABLE as fields appear,
 *                so people can query the store with plain SQL. `_record` is the truth; columns are
 *                a projection (objects/arrays as JSON text, booleans as 0/1, a field the record
 *                lacks is NULL). A field whose name cannot be a column (see `projectable`) stays in
 *                `_record` only.
 * - nosql table: `_seq INTEGER PRIMARY KEY, _key TEXT NOT NULL UNIQUE, _doc TEXT NOT NULL` (JSON; query
 *                with json_extract).
 * - order: `_seq` (the rowid) is the insertion order, the order every store kind lists in (reference
 *   §B.4). A write is an upsert on `_key` (INSERT … ON CONFLICT DO UPDATE), so a write of an
 *   existing key keeps its row and its `_seq`, as a memory store's Map keeps a key's place (a
 *   REPLACE would delete the row and insert it at the end). A table made before `_seq` existed has
 *   only the hidden rowid, which the same statements keep and list by; VACUUM may renumber that
 *   one, but not `_seq`. Measured on 200k bare writes: the upsert costs what the REPLACE did;
 *   a REPLACE naming the old rowid through a subquery cost 1.3–1.6×.
 *
 * Invariant: every method runs inside the caller's write transaction and never awaits. Table
 * names follow store-rules.ts (plain identifiers, never `reqon_*`, `sqlite_*` or `pg_*`).
 */
import type Database from 'better-sqlite3';
import type { PlacedRow, TableStoreWrite } from '../log.js';
import { describe } from '../rows.js';
import { checkTableName, mergePatch, stripUndefined } from '../store-rules.js';

type StoreKind = TableStoreWrite['storeKind'];

/** Columns we own in every store table; a record field with one of these names stays in JSON only. */
const RESERVED_COLUMNS = new Set(['_seq', '_key', '_record', '_doc']);
/** SQLite's names for the rowid: a field with one of these names never becomes a column that would hide it. */
const ROWID_NAMES = ['rowid', '_rowid_', 'oid'];
/** Projected columns per table; SQLite allows 2000, and fields past this stay in `_record` only. */
const MAX_PROJECTED_COLUMNS = 500;
const MAX_COLUMN_NAME = 128;
const MAX_CACHED_STATEMENTS = 256;

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/**
 * The value a projected column holds for a field. An integer (and a boolean's 0/1) is bound as one (a BigInt): bound
 * as a JS number it is a REAL, so `id` read 1.0, `_key = id` never held, and SQLite printed a
 * 16-digit id as 1.23456789012346e+15 (helper 87). PostgreSQL's jsonb columns hold it exactly.
 */
function projectValue(value: unknown): string | number | bigint | null {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
      // Past 2^53 an integer is still one, exactly as its JSON in `_record` writes it (1e18 →
      // 1000000000000000000), up to SQLite's 64-bit INTEGER; beyond that a REAL.
      if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63) return BigInt(value);
      return Number.isFinite(value) ? value : null; // JSON turns NaN/Infinity into null too
    case 'boolean':
      return value ? 1n : 0n;
    case 'object':
      return value === null ? null : JSON.stringify(value);
    default:
      return null;
  }
}

interface SqlTableShape {
  /** lower-case column name → the exact field name that owns it (SQLite names are case-insensitive). */
  columns: Map<string, string>;
  /** The table's real projected columns: all an update sets (to NULL where the record lacks the field). */
  projected: Set<string>;
}

export class TableStores {
  /** Tables known to exist with the right shape, by `kind:table`. */
  private readonly known = new Map<string, SqlTableShape | null>();
  private readonly statements = new Map<string, Database.Statement>();
  /** The column that holds each table's insertion order (see rowidOf), by table. */
  private readonly rowids = new Map<string, string>();
  /** PRAGMA schema_version when the caches were last known good: another process's ALTER bumps it. */
  private schemaSeen: number | undefined;
  private readonly schemaVersion: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.schemaVersion = db.prepare('PRAGMA schema_version').pluck();
  }

  /** Applies one write inside the current transaction; returns the record as stored, as JSON text. */
  apply(write: TableStoreWrite): string {
    this.checkWrite(write);
    if (typeof write.record !== 'object' || write.record === null || Array.isArray(write.record)) {
      throw new Error(`store '${write.store}': expected an object but got: ${describe(write.record)}`);
    }
    if (write.storeKind === 'sql') {
      // An update sets every projected column, so it must know those another process added since.
      const version = this.schemaVersion.get() as number;
      if (version !== this.schemaSeen) {
        this.invalidate();
        this.schemaSeen = version;
      }
    }
    const shape = this.ensureTable(write.storeKind, write.table);
    const incoming = stripUndefined(write.record);
    let stored: Record<string, unknown>;
    switch (write.op) {
      case 'set':
        stored = incoming;
        break;
      case 'upsert': {
        const existing = this.get(write.storeKind, write.table, write.key);
        stored = mergePatch(existing, incoming) as Record<string, unknown>;
        break;
      }
      case 'delete':
        throw new Error(`store '${write.store}': a delete is applied with remove(), not apply()`);
      default: {
        const never: never = write.op;
        throw new Error(`store '${write.store}': unknown op ${JSON.stringify(never)}; expected 'set', 'upsert' or 'delete'`);
      }
    }
    // The event and the table both get this exact text, so they and a later read hold the same value.
    const json = JSON.stringify(stored);
    if (shape === null) {
      this.statement(
        `nosql-put:${write.table}`,
        `INSERT INTO ${quote(write.table)} (_key, _doc) VALUES (?, ?) ON CONFLICT (_key) DO UPDATE SET _doc = excluded._doc`,
      ).run(write.key, json);
    } else {
      this.putSql(write.table, shape, write.key, json, stored);
    }
    return json;
  }

  /**
   * `delete S[k]`: removes the row under the key inside the current transaction; true if there was
   * one. The row goes with its `_seq`, so the key written again later lands at the end, as a key
   * deleted from a JS Map and set again does. The table is made if absent, so a delete from a
   * table of the other store kind fails as a write would.
   */
  remove(write: TableStoreWrite): boolean {
    this.checkWrite(write);
    this.ensureTable(write.storeKind, write.table);
    return this.statement(`delete:${write.table}`, `DELETE FROM ${quote(write.table)} WHERE _key = ?`).run(write.key).changes > 0;
  }

  private checkWrite(write: TableStoreWrite): void {
    if (!this.known.has(`${write.storeKind}:${write.table}`)) checkTableName(write.table, write.storeKind);
    if (typeof write.key !== 'string' || write.key === '') {
      throw new Error(`store '${write.store}': key must be a non-empty string but got: ${describe(write.key)}`);
    }
  }

  /**
   * Forgets what we know about tables and columns: called after a rollback, which may have undone
   * a CREATE TABLE or an ALTER TABLE that the caches already remember.
   */
  invalidate(): void {
    this.known.clear();
    this.rowids.clear();
    this.statements.clear();
    this.schemaSeen = undefined;
  }

  /** All records of a table in insertion order (rowid), like the other store kinds; [] if it was never written. */
  list(storeKind: StoreKind, table: string): { key: string; record: Record<string, unknown> }[] {
    checkTableName(table, storeKind);
    if (!this.tableExists(table)) return [];
    this.checkShape(storeKind, table);
    const body = storeKind === 'sql' ? '_record' : '_doc';
    const sql = `SELECT _key AS k, ${body} AS v FROM ${quote(table)} ORDER BY ${this.rowidOf(table)}`;
    const rows = this.statement(`list:${storeKind}:${table}`, sql).all() as { k: string; v: string }[];
    return rows.map((row) => ({ key: row.k, record: JSON.parse(row.v) as Record<string, unknown> }));
  }

  /** Throws, as a read would, if the table exists but is not a store table of this kind. */
  checkReadable(storeKind: StoreKind, table: string): void {
    if (this.tableExists(table)) this.checkShape(storeKind, table);
  }

  /** Up to `limit` records after the one at `after` in insertion order, with their places: a seek on the rowid. */
  page(storeKind: StoreKind, table: string, after: number, limit: number): PlacedRow[] {
    if (!this.tableExists(table)) return [];
    this.checkShape(storeKind, table);
    const body = storeKind === 'sql' ? '_record' : '_doc';
    const order = this.rowidOf(table);
    const sql = `SELECT ${order} AS p, _key AS k, ${body} AS v FROM ${quote(table)} WHERE ${order} > ? ORDER BY ${order} LIMIT ?`;
    return placed(this.statement(`page:${storeKind}:${table}`, sql).all(after, limit) as PlacedJson[]);
  }

  /** The records under `keys` that the table holds, with their places (in no particular order). */
  rowsOf(storeKind: StoreKind, table: string, keys: readonly string[]): PlacedRow[] {
    if (keys.length === 0 || !this.tableExists(table)) return [];
    this.checkShape(storeKind, table);
    const body = storeKind === 'sql' ? '_record' : '_doc';
    // One JSON array bound, not a placeholder per key: any number of keys, one cached statement.
    const sql = `SELECT ${this.rowidOf(table)} AS p, _key AS k, ${body} AS v FROM ${quote(table)} WHERE _key IN (SELECT value FROM json_each(?))`;
    return placed(this.statement(`rows-of:${storeKind}:${table}`, sql).all(JSON.stringify(keys)) as PlacedJson[]);
  }

  private get(storeKind: StoreKind, table: string, key: string): Record<string, unknown> | undefined {
    const body = storeKind === 'sql' ? '_record' : '_doc';
    const row = this.statement(`get:${storeKind}:${table}`, `SELECT ${body} AS v FROM ${quote(table)} WHERE _key = ?`).get(key) as
      | { v: string }
      | undefined;
    return row === undefined ? undefined : (JSON.parse(row.v) as Record<string, unknown>);
  }

  private putSql(table: string, shape: SqlTableShape, key: string, json: string, record: Record<string, unknown>): void {
    const fields: string[] = [];
    const values: (string | number | bigint | null)[] = [];
    for (const [field, value] of Object.entries(record)) {
      if (!this.ensureColumn(table, shape, field)) continue;
      fields.push(field);
      values.push(projectValue(value));
    }
    // The update sets every projected column from `excluded`, which holds NULL for a column the
    // insert does not name: columns of fields the record no longer has become NULL, as a replace.
    // The SQL text is built only when the statement for this set of fields is not cached yet:
    // quoting every column on every write was a hot spot of large store batches. Columns are only
    // ever added, so their count tells the statements of one shape apart.
    const id = `sql-put:${table}:${shape.projected.size}:${fields.join('\u0000')}`;
    const cached = this.statements.get(id);
    const put =
      cached ??
      this.statement(
        id,
        `INSERT INTO ${quote(table)} (${['_key', '_record', ...fields].map(quote).join(', ')}) VALUES (?, ?${fields.map(() => ', ?').join('')}) ` +
          `ON CONFLICT (_key) DO UPDATE SET ${['_record', ...shape.projected].map((column) => `${quote(column)} = excluded.${quote(column)}`).join(', ')}`,
      );
    put.run(key, json, ...values);
  }

  /** True if `field` has (or now got) its own projected column. */
  private ensureColumn(table: string, shape: SqlTableShape, field: string): boolean {
    const lower = field.toLowerCase();
    if (!projectable(field) || RESERVED_COLUMNS.has(lower) || ROWID_NAMES.includes(lower)) return false;
    const owner = shape.columns.get(lower);
    if (owner !== undefined) return owner === field;
    // Another process may have added it since we looked; inside our write transaction this read is authoritative.
    this.loadColumns(table, shape);
    const reloaded = shape.columns.get(lower);
    if (reloaded !== undefined) return reloaded === field;
    if (shape.columns.size - RESERVED_COLUMNS.size >= MAX_PROJECTED_COLUMNS) return false;
    this.db.exec(`ALTER TABLE ${quote(table)} ADD COLUMN ${quote(field)}`);
    shape.columns.set(lower, field);
    shape.projected.add(field);
    return true;
  }

  private ensureTable(storeKind: StoreKind, table: string): SqlTableShape | null {
    const id = `${storeKind}:${table}`;
    const cached = this.known.get(id);
    if (cached !== undefined) return cached;
    const body = storeKind === 'sql' ? '_record' : '_doc';
    // A rowid table: WITHOUT ROWID saves the key's second b-tree but measured no faster on the
    // bench's 1M-record sync (keys arrive in numeric order, which is scattered in text order).
    this.db.exec(`CREATE TABLE IF NOT EXISTS ${quote(table)} (_seq INTEGER PRIMARY KEY, _key TEXT NOT NULL UNIQUE, ${body} TEXT NOT NULL)`);
    const shape = this.checkShape(storeKind, table);
    this.known.set(id, shape);
    return shape;
  }

  private checkShape(storeKind: StoreKind, table: string): SqlTableShape | null {
    const shape: SqlTableShape = { columns: new Map(), projected: new Set() };
    this.loadColumns(table, shape);
    const body = storeKind === 'sql' ? '_record' : '_doc';
    if (!shape.columns.has('_key') || !shape.columns.has(body)) {
      const other = shape.columns.has('_doc') ? 'a nosql store table' : shape.columns.has('_record') ? 'a sql store table' : 'not a store table';
      throw new Error(
        `table '${table}' already exists in the log database and is ${other}, so it cannot hold a ${storeKind} store; give the store another table name`,
      );
    }
    // Pretend the reserved columns are all there, so they never count against a field's name.
    for (const reserved of RESERVED_COLUMNS) shape.columns.set(reserved, reserved);
    return storeKind === 'sql' ? shape : null;
  }

  /**
   * The name that reaches a table's rowid: `_seq` where it is the INTEGER PRIMARY KEY (tables made
   * since insertion order), else the first of SQLite's rowid names that no column of an older
   * table hides.
   */
  private rowidOf(table: string): string {
    const cached = this.rowids.get(table);
    if (cached !== undefined) return cached;
    const columns = this.db
      .prepare<[], { name: string; type: string; pk: number }>(`SELECT name, type, pk FROM pragma_table_info(${quoteLiteral(table)})`)
      .all();
    const seq = columns.find((column) => column.name.toLowerCase() === '_seq');
    const taken = new Set(columns.map((column) => column.name.toLowerCase()));
    const name =
      seq !== undefined && seq.pk === 1 && seq.type.toUpperCase() === 'INTEGER'
        ? '_seq'
        : ROWID_NAMES.find((candidate) => !taken.has(candidate));
    if (name === undefined) {
      throw new Error(`table '${table}' has columns named rowid, _rowid_ and oid, so its insertion order cannot be read; give the store another table name`);
    }
    this.rowids.set(table, name);
    return name;
  }

  private loadColumns(table: string, shape: SqlTableShape): void {
    const rows = this.db.prepare<[], { name: string; pk: number }>(`SELECT name, pk FROM pragma_table_info(${quoteLiteral(table)})`).all();
    for (const { name, pk } of rows) {
      const lower = name.toLowerCase();
      if (!shape.columns.has(lower)) shape.columns.set(lower, name);
      // Every column but the key, the record and the order is a projection an update rewrites.
      if (pk === 0 && lower !== '_key' && lower !== '_record' && lower !== '_doc') shape.projected.add(name);
    }
  }

  private tableExists(table: string): boolean {
    return (
      this.db.prepare<[string], { one: number }>("SELECT 1 AS one FROM sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE").get(table) !==
      undefined
    );
  }

  private statement(id: string, sql: string): Database.Statement {
    let statement = this.statements.get(id);
    if (statement === undefined) {
      if (this.statements.size >= MAX_CACHED_STATEMENTS) this.statements.clear();
      statement = this.db.prepare(sql);
      this.statements.set(id, statement);
    }
    return statement;
  }
}

/**
 * True if `field` can name a projected column. A name SQLite cannot take as it is — one holding a
 * NUL (SQL text ends there), or ill-formed UTF-16 (a lone surrogate, which becomes U+FFFD in
 * UTF-8, so two fields would collide on one column) — stays in `_record` only: the record is
 * stored as it is, and the write never fails because of a field's name. A write that could fail
 * here would sink the commit it rides on, with other steps' writes in it (GUARANTEES 5).
 */
export function projectable(field: string): boolean {
  return field !== '' && field.length <= MAX_COLUMN_NAME && !field.includes('\u0000') && !LONE_SURROGATE.test(field);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

interface PlacedJson {
  p: number;
  k: string;
  v: string;
}

function placed(rows: PlacedJson[]): PlacedRow[] {
  return rows.map((row) => ({ key: row.k, record: JSON.parse(row.v) as Record<string, unknown>, place: row.p }));
}

function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
