/**
 * The built-ins that take a function (builtin-names.ts FUNCTION_ARGUMENTS): `map`, `filter`,
 * `reduce`, `sortBy`, `find`, `findIndex`. Their function argument arrives as an `ItemFunction`
 * (`callBuiltin` makes it from a lambda or from an expression read with each item as the current
 * record); everything else about them is plain values.
 *
 * Invariants: the list is never mutated; a null or absent list is an empty one (as `where` takes
 * it); anything else that is no list fails naming it. Pure: replay computes the same.
 */
import { argArray, argFunction, type BuiltinCall, type BuiltinImpl } from './builtin-support.js';
import { ascendingOrder } from './builtins-collections.js';
import { EvaluatorError } from './eval-errors.js';
import { isTruthy } from './values.js';

function listOf(call: BuiltinCall, value: unknown): unknown[] {
  return value === null || value === undefined ? [] : argArray(call, 0, value);
}

export const FUNCTION_BUILTINS: Record<string, BuiltinImpl> = {
  map: (args, call) => {
    const f = argFunction(call, 1, args[1]);
    return listOf(call, args[0]).map((item) => f(item, [item]));
  },
  filter: (args, call) => {
    const f = argFunction(call, 1, args[1]);
    return listOf(call, args[0]).filter((item) => isTruthy(f(item, [item])));
  },
  /** `reduce(xs, (total, x) => …, initial)`; without `initial` the first item starts it, and an empty list then fails. */
  reduce: (args, call) => {
    const f = argFunction(call, 1, args[1]);
    const items = listOf(call, args[0]);
    let from = 0;
    let total = args[2];
    if (args.length < 3) {
      if (items.length === 0) throw new EvaluatorError('R4012', 'reduce() of an empty list with no initial value has no value', call.span);
      total = items[0];
      from = 1;
    }
    for (let i = from; i < items.length; i++) total = f(items[i], [total, items[i]]);
    return total;
  },
  /**
   * Ascending by the key the function gives, stable; keys all numbers or all strings (ISO instants
   * by instant), as `sort` orders; items whose key is null or absent come last, in their order.
   */
  sortBy: (args, call) => {
    const f = argFunction(call, 1, args[1]);
    const items = listOf(call, args[0]);
    const keys = items.map((item) => f(item, [item]));
    const keyed = items.flatMap((_, i) => (keys[i] === null || keys[i] === undefined ? [] : [i]));
    const order = ascendingOrder(keyed.map((i) => keys[i]), call, 'keys that are all numbers or all strings').map((k) => keyed[k]!);
    const unkeyed = items.flatMap((_, i) => (keys[i] === null || keys[i] === undefined ? [i] : []));
    return [...order, ...unkeyed].map((i) => items[i]);
  },
  /** The first item for which the function is truthy; absent when none is. */
  find: (args, call) => {
    const f = argFunction(call, 1, args[1]);
    return listOf(call, args[0]).find((item) => isTruthy(f(item, [item])));
  },
  /** The index of that item; -1 when none is. */
  findIndex: (args, call) => {
    const f = argFunction(call, 1, args[1]);
    return listOf(call, args[0]).findIndex((item) => isTruthy(f(item, [item])));
  },
};
