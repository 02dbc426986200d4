/**
 * What a built-in implementation receives, and the argument checks they share. Kept apart from
 * `builtins.ts` so the families of built-ins (core, text, collections) can live in their own files.
 *
 * Invariant: argument checks fail with an `EvaluatorError` pointing at the offending argument.
 */
import type { Span } from '../lang/ast.js';
import { EvaluatorError } from './eval-errors.js';
import { toNumberFor, typeError } from './operators.js';
import type { EvalContext } from './scope.js';
import { isPlainObject, type PlainObject } from './values.js';

export interface BuiltinCall {
  name: string;
  /** Span of the whole call. */
  span: Span;
  /** Span of each argument, for errors that point at one. */
  argSpans: readonly Span[];
  ctx: EvalContext;
}

export type BuiltinImpl = (args: unknown[], call: BuiltinCall) => unknown;

/**
 * The function argument of `map`, `filter`, `reduce`, … (builtin-names.ts FUNCTION_ARGUMENTS), as
 * `callBuiltin` hands it over: called for `item` with the values of its parameters (`[item]`, or
 * `[total, item]` for `reduce`).
 */
export type ItemFunction = (item: unknown, params: readonly unknown[]) => unknown;

export function argFunction(call: BuiltinCall, index: number, value: unknown): ItemFunction {
  if (typeof value !== 'function') throw new EvaluatorError('R4001', `${call.name}() expected a function as argument ${index + 1}`, argSpan(call, index));
  return value as ItemFunction;
}

function argSpan(call: BuiltinCall, index: number): Span {
  return call.argSpans[index] ?? call.span;
}

export function argNumber(call: BuiltinCall, index: number, value: unknown): number {
  return toNumberFor(call.name, value, argSpan(call, index));
}

export function argInteger(call: BuiltinCall, index: number, value: unknown): number {
  const n = argNumber(call, index, value);
  if (!Number.isInteger(n)) {
    throw new EvaluatorError('R4014', `${call.name}() expected an integer but got: number (${n})`, argSpan(call, index));
  }
  return n;
}

export function argArray(call: BuiltinCall, index: number, value: unknown): unknown[] {
  if (!Array.isArray(value)) throw typeError(`${call.name}()`, 'array', value, argSpan(call, index));
  return value;
}

export function argString(call: BuiltinCall, index: number, value: unknown): string {
  if (typeof value !== 'string') throw typeError(`${call.name}()`, 'string', value, argSpan(call, index));
  return value;
}

export function argObject(call: BuiltinCall, index: number, value: unknown): PlainObject {
  if (!isPlainObject(value)) throw typeError(`${call.name}()`, 'object', value, argSpan(call, index));
  return value;
}

/** `f(a, b, c)` or `f([a, b, c])`: the list an aggregate works on, coerced to numbers, non-empty. */
export function numericList(args: unknown[], call: BuiltinCall): number[] {
  const items = args.length === 1 && Array.isArray(args[0]) ? args[0] : args;
  if (items.length === 0) {
    throw new EvaluatorError('R4012', `${call.name}() of an empty list has no value`, call.span);
  }
  return items.map((item) => toNumberFor(call.name, item, call.span));
}

/** Fails when a numeric result is NaN (e.g. `sqrt(-1)`), so NaN never reaches a store. */
export function finiteResult(call: BuiltinCall, value: number): number {
  if (Number.isNaN(value)) {
    throw new EvaluatorError('R4014', `${call.name}() has no numeric result for these arguments`, call.span);
  }
  return value;
}
