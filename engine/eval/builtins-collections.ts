/**
 * Collection built-ins (the "doc-only" helpers of §D.6 that we implement): includes/contains,
 * isEmpty, keys, values, flatten, unique, sort; and the object helpers entries, hasKey, pick, omit,
 * merge, toArray.
 *
 * Invariants: inputs are never mutated (sort returns a new array); results are deterministic
 * (sort compares strings by code units, not by locale — ISO instants by instant, as `<` does;
 * unique keeps first occurrences in order).
 */
import { argArray, argObject, argString, type BuiltinCall, type BuiltinImpl } from './builtin-support.js';
import { EvaluatorError } from './eval-errors.js';
import { equals } from './operators.js';
import { EVAL_RULES_FORMAT, recordedBefore } from './scope.js';
import { parseIsoInstant } from './iso-dates.js';
import { describeValue, canonicalJson, hasOwnField, isPlainObject, setOwn, type PlainObject } from './values.js';

const includes: BuiltinImpl = (args, call) => {
  const [collection, needle] = args;
  if (collection === null || collection === undefined) return false;
  if (Array.isArray(collection)) {
    if (recordedBefore(call.ctx, EVAL_RULES_FORMAT)) return collection.includes(needle) && !Number.isNaN(needle);
    return collection.some((item) => equals(needle, item));
  }
  if (typeof collection === 'string') return collection.includes(argString(call, 1, needle));
  if (isPlainObject(collection)) return hasOwnField(collection, needle);
  throw new EvaluatorError(
    'R4001',
    `${call.name}() expected an array, a string or an object but got: ${describeValue(collection)}`,
    call.argSpans[0] ?? call.span,
  );
};

/** Arrays and objects are compared by content (canonical JSON); scalars by `===`. */
function uniqueKey(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? `json:${canonicalJson(value)}` : value;
}

/**
 * The indexes of `keys` in ascending order, stable: all numbers or all strings (code units, never
 * the locale; ISO-8601 instants by instant, as `<` compares them, when every key is one); any
 * other mix fails, naming the odd value and what was `expected`.
 */
export function ascendingOrder(keys: readonly unknown[], call: BuiltinCall, expected: string): number[] {
  const order = keys.map((_, i) => i);
  if (keys.length === 0) return order;
  const kind = typeof keys[0] === 'string' ? 'string' : 'number';
  const odd = keys.find((key) => typeof key !== kind || Number.isNaN(key));
  if (odd !== undefined || keys.some((key) => key === undefined)) {
    throw new EvaluatorError('R4001', `${call.name}() expected ${expected} but got: ${describeValue(odd)}`, call.argSpans[0] ?? call.span);
  }
  const byUnits = (a: unknown, b: unknown): number => ((a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0);
  if (kind === 'string') {
    // "2024-03-10T01:30:00-08:00" is after "2024-03-10T05:00:00Z"; only when every key is an instant.
    const instants = keys.map((key) => parseIsoInstant(key as string)?.ms);
    if (instants.every((ms) => ms !== undefined)) return order.sort((i, j) => instants[i]! - instants[j]! || byUnits(keys[i], keys[j]));
  }
  return order.sort((i, j) => byUnits(keys[i], keys[j])); // Array.prototype.sort is stable
}

export const COLLECTION_BUILTINS: Record<string, BuiltinImpl> = {
  includes,
  contains: includes,
  /** null/undefined, "", [] and {} are empty; numbers and booleans never are. */
  isEmpty: (args) => {
    const [value] = args;
    if (value === null || value === undefined) return true;
    if (typeof value === 'string' || Array.isArray(value)) return value.length === 0;
    if (isPlainObject(value)) return Object.keys(value).length === 0;
    return false;
  },
  keys: (args, call) => Object.keys(argObject(call, 0, args[0])),
  values: (args, call) => Object.values(argObject(call, 0, args[0])),
  /** One level: `flatten([[1], 2, [3, [4]]])` is `[1, 2, 3, [4]]`. */
  flatten: (args, call) => argArray(call, 0, args[0]).flatMap((item) => (Array.isArray(item) ? item : [item])),
  unique: (args, call) => {
    const seen = new Set<unknown>();
    const out: unknown[] = [];
    for (const item of argArray(call, 0, args[0])) {
      const key = uniqueKey(item);
      if (Number.isNaN(key)) {
        out.push(item);
        continue;
      }
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(item);
    }
    return out;
  },
  /** Ascending, stable; all numbers or all strings (code-unit order; ISO instants by instant); anything else is an error. */
  sort: (args, call) => {
    const items = argArray(call, 0, args[0]);
    return ascendingOrder(items, call, 'all numbers or all strings').map((i) => items[i]);
  },
};

/** `pick`/`omit`'s key list: an array of strings (a single string is one key). */
function keyList(call: BuiltinCall, value: unknown): string[] {
  const list = typeof value === 'string' ? [value] : argArray(call, 1, value);
  return list.map((key) => argString(call, 1, key));
}

/** The object helpers of §D.6's doc-only list; none mutates its input. */
export const OBJECT_BUILTINS: Record<string, BuiltinImpl> = {
  /** `entries({ a: 1 })` is `[["a", 1]]`, in the object's key order. */
  entries: (args, call) => Object.entries(argObject(call, 0, args[0])),
  /** An own key (a key holding null counts; one absent does not); false for null or absent. */
  hasKey: (args, call) => (args[0] === null || args[0] === undefined ? false : hasOwnField(argObject(call, 0, args[0]), argString(call, 1, args[1]))),
  /** The keys listed that the object has, in the list's order. */
  pick: (args, call) => {
    const source = argObject(call, 0, args[0]);
    const out: PlainObject = {};
    for (const key of keyList(call, args[1])) if (hasOwnField(source, key)) setOwn(out, key, source[key]);
    return out;
  },
  /** Every key but the ones listed. */
  omit: (args, call) => {
    const source = argObject(call, 0, args[0]);
    const dropped = new Set(keyList(call, args[1]));
    const out: PlainObject = {};
    for (const [key, value] of Object.entries(source)) if (!dropped.has(key)) setOwn(out, key, value);
    return out;
  },
  /** One level, the later object's keys win (as `{ ...a, ...b }`); null or absent arguments add nothing. */
  merge: (args, call) => {
    const out: PlainObject = {};
    args.forEach((arg, i) => {
      if (arg === null || arg === undefined) return;
      for (const [key, value] of Object.entries(argObject(call, i, arg))) setOwn(out, key, value);
    });
    return out;
  },
  /** A list as it is; null or absent is `[]`; any other value a list of that one value. */
  toArray: ([x]) => (Array.isArray(x) ? x : x === null || x === undefined ? [] : [x]),
};
