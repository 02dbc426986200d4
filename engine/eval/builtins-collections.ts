/**
 * Collection built-ins (the "doc-only" helpers of §D.6 that we implement): includes/contains,
 * isEmpty, keys, values, flatten, unique, sort.
 *
 * Invariants: inputs are never mutated (sort returns a new array); results are deterministic
 * (sort compares strings by code units, not by locale — ISO instants by instant, as `<` does;
 * unique keeps first occurrences in order).
 */
import { argArray, argObject, argString, type BuiltinImpl } from './builtin-support.js';
import { EvaluatorError } from './eval-errors.js';
import { parseIsoInstant } from './iso-dates.js';
import { describeValue, canonicalJson, hasOwnField, isPlainObject } from './values.js';

const includes: BuiltinImpl = (args, call) => {
  const [collection, needle] = args;
  if (collection === null || collection === undefined) return false;
  if (Array.isArray(collection)) {
    return collection.includes(needle) && !(typeof needle === 'number' && Number.isNaN(needle));
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
    if (items.length === 0) return [];
    const kind = typeof items[0] === 'string' ? 'string' : 'number';
    const oddIndex = items.findIndex((item) => typeof item !== kind || Number.isNaN(item));
    if (oddIndex >= 0) {
      const odd = items[oddIndex];
      throw new EvaluatorError(
        'R4001',
        `sort() expected all numbers or all strings but got: ${describeValue(odd)}`,
        call.argSpans[0] ?? call.span,
      );
    }
    const sortable = items as (number | string)[];
    // Array.prototype.sort is stable; `<` on two strings compares code units, never the locale.
    const byUnits = (a: number | string, b: number | string): number => (a < b ? -1 : a > b ? 1 : 0);
    if (kind === 'string') {
      // ISO-8601 instants in several offsets sort as instants, as `<` compares them
      // ("2024-03-10T01:30:00-08:00" is after "2024-03-10T05:00:00Z"); only when every item is one.
      const instants = sortable.map((item) => parseIsoInstant(item as string)?.ms);
      if (instants.every((ms) => ms !== undefined)) {
        const order = sortable.map((_, i) => i).sort((i, j) => instants[i]! - instants[j]! || byUnits(sortable[i]!, sortable[j]!));
        return order.map((i) => sortable[i]);
      }
    }
    return [...sortable].sort(byUnits);
  },
};
