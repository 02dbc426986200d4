/**
 * The value semantics of Reqon's operators (§D.3, V2 column): numeric coercion, arithmetic,
 * ordering comparisons, `in` and `is T`. Short-circuiting (`and`, `or`, `??`) and evaluation order
 * live in `evaluate.ts`; everything here receives already-evaluated operands.
 *
 * Invariant: every failure is an `EvaluatorError` with a code from `eval-errors.ts`; no operator
 * silently produces NaN from a non-numeric operand.
 */
import type { Span } from '../lang/ast.js';
import { EvaluatorError } from './eval-errors.js';
import { dateStringToMs, isDateString, parseIsoInstant } from './iso-dates.js';
import { describeValue, displayString, hasOwnField, isPlainObject, withArticle } from './values.js';
import { IS_TYPE_NAMES } from '../lang/builtin-names.js';

/**
 * Numeric coercion: numbers as they are, numeric strings parsed, booleans 1/0. `op` names the
 * operation in the message ("Cannot perform '-' on null").
 */
export function toNumberFor(op: string, value: unknown, span: Span): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value === null) throw new EvaluatorError('R4002', `Cannot perform '${op}' on null`, span);
  if (value === undefined) throw new EvaluatorError('R4002', `Cannot perform '${op}' on null (the value is missing)`, span);
  if (typeof value === 'string') {
    const parsed = parseNumericString(value);
    if (parsed !== undefined) return parsed;
  }
  throw new EvaluatorError('R4001', `Cannot perform '${op}' on ${describeValue(value)}`, span);
}

/**
 * A string that is a number in full ("12", " 1.5e3 ", "-4"); `undefined` for "", "abc", "12px",
 * and for "Infinity" or "1e999": no number a run could log (log/loggable.ts).
 */
export function parseNumericString(text: string): number | undefined {
  if (text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * `n`, a number an expression computed, when the log can hold it. JSON has no Infinity or NaN: a
 * run that stored or sent one would store or send `null`, and its replay would read `null` back.
 */
export function storableNumber(n: number, what: string, span: Span): number {
  if (Number.isFinite(n)) return n;
  throw new EvaluatorError('R4015', `${what} gives ${String(n)}, beyond what a number can hold (a 64-bit float); a run cannot store, send or log it`, span);
}

export type ArithmeticOperator = '+' | '-' | '*' | '/' | '%';

export function arithmetic(op: ArithmeticOperator, left: unknown, right: unknown, span: Span): unknown {
  if (op === '+' && (typeof left === 'string' || typeof right === 'string')) {
    const later = instantSum(left, right, span);
    if (later !== undefined) return later;
    return displayString(left) + displayString(right);
  }
  if (op === '-' && typeof left === 'string') {
    const since = instantDifference(left, right);
    if (since !== undefined) return since;
  }
  const l = toNumberFor(op, left, span);
  const r = toNumberFor(op, right, span);
  const n = numeric(op, l, r, span);
  // The description is built only for the error: arithmetic is on every pure step's path.
  return Number.isFinite(n) ? n : storableNumber(n, `${l} ${op} ${r}`, span);
}

function numeric(op: ArithmeticOperator, l: number, r: number, span: Span): number {
  switch (op) {
    case '+':
      return l + r;
    case '-':
      return l - r;
    case '*':
      return l * r;
    case '/':
      if (r === 0) throw new EvaluatorError('R4003', 'Division by zero', span);
      return l / r;
    case '%':
      if (r === 0) throw new EvaluatorError('R4003', 'Division by zero', span);
      return l % r;
  }
}

/**
 * `instant - ms` → the ISO instant that many milliseconds earlier (`now() - days(90)`), and
 * `instant - instant` → the milliseconds between them, where the instants are ISO-8601 strings
 * (what `now()` gives). Undefined when `left` is no ISO instant or `right` is neither a number
 * nor one, so every other `-` keeps its numeric meaning ("10" - 1 is 9).
 */
function instantDifference(left: string, right: unknown): string | number | undefined {
  const from = parseIsoInstant(left);
  if (from === undefined) return undefined;
  if (typeof right === 'number') {
    const ms = from.ms - right;
    // Past what a Date can hold (±8.64e15 ms) there is no instant to give.
    return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : undefined;
  }
  if (typeof right === 'string') {
    const to = parseIsoInstant(right);
    return to === undefined ? undefined : from.ms - to.ms;
  }
  return undefined;
}

/**
 * `instant + ms` and `ms + instant` → the ISO instant that many milliseconds later
 * (`now() + days(1)`), as `instant - ms` is the one earlier; it concatenated ("…Z86400000").
 * Undefined unless one side is an ISO instant and the other a number, so every other `+` with a
 * string still concatenates. A sum past what a Date holds is an error, not text.
 */
function instantSum(left: unknown, right: unknown, span: Span): string | undefined {
  let text: string;
  let ms: number;
  if (typeof left === 'string' && typeof right === 'number') [text, ms] = [left, right];
  else if (typeof left === 'number' && typeof right === 'string') [text, ms] = [right, left];
  else return undefined;
  const from = parseIsoInstant(text);
  if (from === undefined) return undefined;
  const sum = from.ms + ms;
  if (!Number.isFinite(sum) || Math.abs(sum) > 8.64e15) {
    throw new EvaluatorError('R4014', `Cannot add ${describeValue(ms)} ms to the instant ${JSON.stringify(text)}: the result is past what an instant can hold`, span);
  }
  return new Date(sum).toISOString();
}

export type OrderingOperator = '<' | '>' | '<=' | '>=';

/**
 * V2 ordering: null, undefined or NaN on either side → false; numbers with numbers, booleans with
 * booleans, strings with strings; two ISO-8601 strings compare as instants (so "2024-01-02" is
 * after "2024-01-01T23:00:00Z"); mixed types are an error.
 */
export function compareOrdering(op: OrderingOperator, left: unknown, right: unknown, span: Span): boolean {
  if (isAbsentOrNaN(left) || isAbsentOrNaN(right)) return false;
  let l: number | string | boolean;
  let r: number | string | boolean;
  if (typeof left === 'number' && typeof right === 'number') {
    [l, r] = [left, right];
  } else if (typeof left === 'boolean' && typeof right === 'boolean') {
    [l, r] = [Number(left), Number(right)];
  } else if (typeof left === 'string' && typeof right === 'string') {
    const li = parseIsoInstant(left);
    const ri = parseIsoInstant(right);
    [l, r] = li !== undefined && ri !== undefined ? [li.ms, ri.ms] : [left, right];
  } else {
    throw new EvaluatorError(
      'R4008',
      `Cannot compare ${describeValue(left)} with ${describeValue(right)} using '${op}'`,
      span,
    );
  }
  switch (op) {
    case '<':
      return l < r;
    case '>':
      return l > r;
    case '<=':
      return l <= r;
    case '>=':
      return l >= r;
  }
}

/**
 * `a == b`: the same value (`===`: `1 == "1"` is false, objects and arrays by identity), except
 * that null and an absent value are equal — `.total != null` is true only when `total` has a
 * value, as an object pattern's `null` matches an absent key (docs/language.md).
 */
export function equals(a: unknown, b: unknown): boolean {
  return a === b || ((a === null || a === undefined) && (b === null || b === undefined));
}

/**
 * A `match` expression's value arm (`match x { [1, 2] => …, { a: .n + 1 } => … }`): equal by
 * content — arrays item by item, objects key by key (a key holding undefined counts as absent),
 * anything else as `==` compares. JSON nests at most 256 levels, so the recursion is bounded.
 */
export function contentEqual(a: unknown, b: unknown): boolean {
  if (equals(a, b)) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!contentEqual(a[i], b[i])) return false;
    return true;
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = (r: Record<string, unknown>) => Object.keys(r).filter((k) => r[k] !== undefined);
  const ka = keys(ra);
  if (ka.length !== keys(rb).length) return false;
  for (const k of ka) if (!Object.hasOwn(rb, k) || !contentEqual(ra[k], rb[k])) return false;
  return true;
}

function isAbsentOrNaN(value: unknown): boolean {
  return value === null || value === undefined || (typeof value === 'number' && Number.isNaN(value));
}

/**
 * `x in coll`: an array holds `x` (as `==` compares: null and absent alike); a string contains `x` (which must be a string); an object
 * has the own field `x` names (`hasOwnField`; the original also saw inherited keys such as
 * "toString"); else false.
 */
export function inOperator(left: unknown, right: unknown, span: Span, strictItems = false): boolean {
  // Each item as `==` compares it: an absent `x` is in `[null, "draft"]` (helper 79: `where .status
  // in [null, "draft"]` dropped the records whose API left `status` out, which `== null` keeps).
  // `strictItems`: by `===`, as runs recorded before log format 7 compared them.
  if (Array.isArray(right)) return strictItems ? right.includes(left) && !Number.isNaN(left) : right.some((item) => equals(left, item));
  if (typeof right === 'string') {
    if (typeof left !== 'string') {
      throw new EvaluatorError('R4001', `'in' on a string expected a string but got: ${describeValue(left)}`, span);
    }
    return right.includes(left);
  }
  if (isPlainObject(right)) return hasOwnField(right, left);
  return false;
}

export type IsTypeName = (typeof IS_TYPE_NAMES)[number];

export function isIsTypeName(name: string): name is IsTypeName {
  return (IS_TYPE_NAMES as readonly string[]).includes(name);
}

export function isOfType(value: unknown, typeNameText: string, span: Span): boolean {
  const t = typeNameText.toLowerCase();
  if (!isIsTypeName(t)) {
    throw new EvaluatorError(
      'R4007',
      `Unknown type \`${typeNameText}\` after 'is'; expected one of ${IS_TYPE_NAMES.join(', ')}`,
      span,
    );
  }
  switch (t) {
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isPlainObject(value);
    case 'string':
      return typeof value === 'string';
    case 'number':
    case 'decimal':
      return typeof value === 'number';
    case 'int':
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      // An absent value is null, as it is to `==` (`r.nope is null` agrees with `r.nope == null`).
      // `is undefined` still tells the two apart.
      return value === null || value === undefined;
    case 'undefined':
      return value === undefined;
    case 'date':
      return isDateValue(value);
  }
}

/** A valid Date, or a string that reads as a date (see `isDateString`). */
export function isDateValue(value: unknown): boolean {
  if (value instanceof Date) return !Number.isNaN(value.getTime());
  return typeof value === 'string' && isDateString(value);
}

/** Milliseconds since the epoch of a Date or date string, or an R4001/R4014 error naming `fn`. */
export function toInstantMs(fn: string, value: unknown, span: Span): number {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.getTime();
  if (typeof value === 'string') {
    const ms = dateStringToMs(value);
    if (ms !== undefined) return ms;
    throw new EvaluatorError('R4014', `${fn}() expected a date but got: ${describeValue(value)}`, span);
  }
  throw new EvaluatorError('R4001', `${fn}() expected ${withArticle('date')} but got: ${describeValue(value)}`, span);
}

/** "expected an array but got: number (128)", prefixed with what was expecting it. */
export function typeError(where: string, expected: string, value: unknown, span: Span): EvaluatorError {
  return new EvaluatorError('R4001', `${where} expected ${withArticle(expected)} but got: ${describeValue(value)}`, span);
}

