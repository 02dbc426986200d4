/**
 * The rules of sql/nosql store tables that do not depend on the database: which table names a
 * store may use, and how an upsert merges: one set of rules for both backends' table stores.
 */

const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * A store table name: a plain identifier, never `reqon_*` (the run log's), `sqlite_*` (SQLite's)
 * or `pg_*` (PostgreSQL's) — the same on every backend, so a log can move between them.
 */
export function checkTableName(table: unknown, storeKind: string): asserts table is string {
  if (typeof table !== 'string' || !TABLE_NAME.test(table)) {
    throw new Error(
      `${storeKind} store table name ${JSON.stringify(table)} is not a plain identifier (letters, digits and _, not starting with a digit, at most 63 characters); rename the store's table`,
    );
  }
  if (/^(reqon_|sqlite_|pg_)/i.test(table)) {
    throw new Error(
      `${storeKind} store table name '${table}' is reserved: names starting with 'reqon_' belong to the run log, 'sqlite_' to SQLite and 'pg_' to PostgreSQL; rename the store's table`,
    );
  }
}

/** PostgreSQL text holds neither a NUL nor a lone UTF-16 surrogate. */
const NOT_POSTGRES_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** Key bytes past which PostgreSQL's primary-key btree (at most 2704 bytes an entry) may refuse it, depending on how it compresses. */
const KEY_BYTES_ALWAYS_INDEXED = 2048;
/** Fields past which a projected sql row may not fit PostgreSQL's 8 kB page (each toasted column still takes 18 bytes). */
const FIELDS_ALWAYS_FIT = 256;

/**
 * Whether a well-formed sql/nosql write may still be refused by the log's database: a key
 * PostgreSQL's text cannot hold or its index may not, a record too wide for its row. Such a write
 * must not be buffered to ride on a later step's commit (which it would fail in its place): it
 * commits on its own, so a refusal fails its own step (GUARANTEES 5).
 */
export function mayBeRefused(key: string, record: unknown): boolean {
  if (NOT_POSTGRES_TEXT.test(key)) return true;
  // A UTF-16 unit is at most 3 UTF-8 bytes: only a long key is measured.
  if (key.length * 3 > KEY_BYTES_ALWAYS_INDEXED && Buffer.byteLength(key, 'utf8') > KEY_BYTES_ALWAYS_INDEXED) return true;
  if (typeof record !== 'object' || record === null) return false;
  let fields = 0;
  for (const field in record) if (Object.hasOwn(record, field) && ++fields > FIELDS_ALWAYS_FIT) return true;
  return false;
}

/** A record without its undefined fields ("not given"); the record itself when it has none. */
export function stripUndefined(record: Record<string, unknown>): Record<string, unknown> {
  for (const key in record) {
    if (Object.hasOwn(record, key) && record[key] === undefined) {
      return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
    }
  }
  return record;
}

/**
 * JSON Merge Patch (RFC 7386), `undefined` = not given: objects merged key by key, arrays and
 * other values replace, `null` deletes. The same rule as engine/stores/merge.ts (a layer above us).
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = {};
  const define = (key: string, value: unknown): void => {
    if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  };
  if (typeof target === 'object' && target !== null && !Array.isArray(target)) {
    for (const key of Object.keys(target)) {
      const value = (target as Record<string, unknown>)[key];
      if (value !== undefined) define(key, value);
    }
  }
  for (const key of Object.keys(patch)) {
    const value = (patch as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (value === null) delete out[key];
    else define(key, mergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value));
  }
  return out;
}
