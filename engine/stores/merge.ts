/**
 * What a store holds after a write: the one rule every store kind (memory, sql, nosql, file,
 * postgrest) applies, so that the same mission gives the same store contents on every backend.
 *
 * - 'set' replaces the record under the key.
 * - 'upsert' merges shallowly into the existing record: top-level fields of the new record win,
 *   fields it does not mention keep their old values, nested objects are replaced, not merged.
 * - A field whose value is `undefined` is "not given": it is dropped, never stored, and never
 *   erases an existing value (JSON cannot represent it, so keeping it would make the in-memory
 *   and the on-disk record differ).
 * - `partial: true|false` on the step adds `_partial` with that boolean to the record.
 * None of these functions mutates its inputs (the original mutated the mission's source object).
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

/** Shallow merge, later wins, `undefined` fields ignored. */
export function mergeUpsert(
  existing: Record<string, unknown> | undefined,
  incoming: Record<string, unknown>,
): Record<string, unknown> {
  return { ...(existing === undefined ? {} : stripUndefined(existing)), ...stripUndefined(incoming) };
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
