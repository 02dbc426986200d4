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
