/**
 * What a store holds after a write: the one rule every store kind (memory, sql, nosql, file,
 * postgrest) applies, so that the same mission gives the same store contents on every backend.
 *
 * - 'set' replaces the record under the key.
 * - 'upsert' (and `partial: true`, which the store step turns into an upsert) applies the new
 *   record to the existing one as a JSON Merge Patch (RFC 7386): objects are merged key by key at
 *   every depth, arrays and other values replace what was there, and a field whose value is
 *   `null` is deleted. Fields it does not mention keep their old values.
 * - A field whose value is `undefined` is "not given": it is dropped, never stored, and never
 *   erases an existing value (JSON cannot represent it, so keeping it would make the in-memory
 *   and the on-disk record differ).
 * - `partial: true|false` on the step adds `_partial` with that boolean to the record.
 * None of these functions mutates its inputs (the original mutated the mission's source object).
 * engine/log/sqlite/table-store.ts applies the same rule to sql/nosql tables (it sits a layer
 * below and cannot import this; test/stores/merge-kinds.int.test.ts holds every kind to it).
 */

export type StoreOp = 'set' | 'upsert';

/** The field `partial:` sets on every stored record. */
export const PARTIAL_FIELD = '_partial';

/** A shallow copy without the fields whose value is `undefined`. */
export function stripUndefined(record: Record<string, unknown>): Record<string, unknown> {
  // A plain loop (several times cheaper than entries/filter/fromEntries: replay plans one record
  // per store write), in Object.keys order — the order fromEntries would give.
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(record)) {
    const value = record[key];
    if (value === undefined) continue;
    // Assigning "__proto__" would set the prototype: define it, so it stays a data field.
    if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  }
  return out;
}

/** The record a step asks to store: undefined fields dropped, `_partial` added when `partial` is given. */
export function prepareRecord(record: Record<string, unknown>, partial?: boolean): Record<string, unknown> {
  const out = stripUndefined(record);
  if (partial !== undefined) out[PARTIAL_FIELD] = partial;
  return out;
}

/** `incoming` applied to `existing` as a JSON Merge Patch (RFC 7386); `undefined` fields ignored. */
export function mergeUpsert(
  existing: Record<string, unknown> | undefined,
  incoming: Record<string, unknown>,
): Record<string, unknown> {
  return mergePatch(existing, incoming) as Record<string, unknown>;
}

/** RFC 7386 MergePatch(target, patch), with `undefined` meaning "not given". */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = {};
  if (isObject(target)) {
    for (const key of Object.keys(target)) if (target[key] !== undefined) define(out, key, target[key]);
  }
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === undefined) continue;
    if (value === null) delete out[key];
    else define(out, key, mergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value));
  }
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function define(out: Record<string, unknown>, key: string, value: unknown): void {
  // Assigning "__proto__" would set the prototype: define it, so it stays a data field.
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** The record as stored after applying `op` with `incoming` on top of `existing`. */
export function resolveStoredRecord(
  op: StoreOp,
  existing: Record<string, unknown> | undefined,
  incoming: Record<string, unknown>,
): Record<string, unknown> {
  switch (op) {
    case 'set':
      return stripUndefined(incoming);
    case 'upsert':
      return mergeUpsert(existing, incoming);
    default: {
      const never: never = op;
      throw new Error(`unknown store op ${JSON.stringify(never)}`);
    }
  }
}
