/**
 * The built-in functions (§D.6 with V2 semantics, plus the doc-only helpers we implement) and the
 * one entry point that calls them: arity check, argument evaluation, dispatch.
 *
 * Invariants: the table here implements exactly `BUILTIN_NAMES` (a test checks both ways); the
 * non-deterministic built-ins read only `ctx.inputs`, so the journal can record and replay them;
 * `env` accepts only a string-literal name, so the set of variables a mission reads is static.
 */
import type { CallExpr, Expr } from '../lang/ast.js';
import { BUILTIN_ARITY, BUILTIN_NAMES, FUNCTION_ARGUMENTS } from '../lang/builtin-names.js';
import {
  argArray,
  argInteger,
  argNumber,
  finiteResult,
  numericList,
  type BuiltinImpl,
  type ItemFunction,
} from './builtin-support.js';
import { COLLECTION_BUILTINS, OBJECT_BUILTINS } from './builtins-collections.js';
import { FUNCTION_BUILTINS } from './builtins-functions.js';
import { DATE_BUILTINS } from './builtins-dates.js';
import { TEXT_BUILTINS } from './builtins-text.js';
import { EvaluatorError } from './eval-errors.js';
import { parseNumericString, storableNumber, toNumberFor } from './operators.js';
import { parseIsoInstant } from './iso-dates.js';
import { withRecord, type EvalContext } from './scope.js';
import { displayString, isTruthy } from './values.js';
import { spanOf } from '../lang/ast.js';

/** A decimal number as text: sign, digits with an optional fraction, an optional exponent; blanks around. */
const DECIMAL = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

/** The largest list `range()` builds (the original's cap). */
export const RANGE_CAP = 20_000_000;

/**
 * Halves away from zero, as on paper: round(2.5) is 3 and round(-2.5) is -3. (Math.round takes
 * halves up, toward +∞, so round(-2.5) was -2 and a total and its refund rounded apart.) Never -0.
 */
function roundHalfAway(x: number): number {
  return (x < 0 ? -Math.round(-x) : Math.round(x)) + 0;
}

/** `round(x, digits)`: halves away from zero, decided on the decimal digits as written. */
function roundTo(x: number, digits: number): number {
  if (digits === 0 || !Number.isFinite(x)) return roundHalfAway(x);
  // Shifting through the decimal exponent avoids 1.005 * 100 = 100.49999….
  const shifted = roundHalfAway(Number(`${x}e${digits}`));
  const result = Number(`${shifted}e${-digits}`);
  return Number.isNaN(result) ? roundHalfAway(x * 10 ** digits) / 10 ** digits : result + 0;
}

/**
 * `max(orders.updated_at)`: over ISO instants only (every item one), the latest (`sign` 1) or
 * earliest (-1), as the text it was given — the instants `<` and `>` already order. A high-water
 * mark failed with "Cannot perform 'max' on string". Undefined for any other list: numbers as before.
 */
function latestOrEarliest(args: unknown[], sign: 1 | -1): string | undefined {
  const items = args.length === 1 && Array.isArray(args[0]) ? args[0] : args;
  if (items.length === 0 || typeof items[0] !== 'string') return undefined;
  let best: { text: string; ms: number } | undefined;
  for (const item of items) {
    const at = typeof item === 'string' ? parseIsoInstant(item) : undefined;
    if (at === undefined) return undefined;
    if (best === undefined || (at.ms - best.ms) * sign > 0) best = { text: item as string, ms: at.ms };
  }
  return best!.text;
}

const CORE_BUILTINS: Record<string, BuiltinImpl> = {
  length: ([x]) => (Array.isArray(x) || typeof x === 'string' ? x.length : 0),
  count: ([x]) => (Array.isArray(x) ? x.length : 0),
  sum: (args, call) => argArray(call, 0, args[0]).reduce<number>((acc, item) => acc + toNumberFor('sum', item, call.argSpans[0] ?? call.span), 0),
  first: (args, call) => (args[0] === null || args[0] === undefined ? undefined : argArray(call, 0, args[0])[0]),
  last: (args, call) => {
    if (args[0] === null || args[0] === undefined) return undefined;
    const items = argArray(call, 0, args[0]);
    return items[items.length - 1];
  },
  round: (args, call) => {
    const x = argNumber(call, 0, args[0]);
    if (args.length < 2 || args[1] === undefined || args[1] === null) return roundHalfAway(x);
    const digits = argInteger(call, 1, args[1]);
    if (digits < -15 || digits > 15) {
      throw new EvaluatorError('R4014', `round() expected 0 to 15 digits but got: number (${digits})`, call.argSpans[1] ?? call.span);
    }
    return roundTo(x, digits);
  },
  floor: (args, call) => Math.floor(argNumber(call, 0, args[0])),
  ceil: (args, call) => Math.ceil(argNumber(call, 0, args[0])),
  abs: (args, call) => Math.abs(argNumber(call, 0, args[0])),
  max: (args, call) => latestOrEarliest(args, 1) ?? Math.max(...numericList(args, call)),
  min: (args, call) => latestOrEarliest(args, -1) ?? Math.min(...numericList(args, call)),
  avg: (args, call) => {
    const items = numericList(args, call);
    return items.reduce((a, b) => a + b, 0) / items.length;
  },
  now: (_args, call) => {
    const ms = call.ctx.inputs.now();
    const date = new Date(ms);
    if (Number.isNaN(date.getTime())) throw new EvaluatorError('R4014', `now() got an invalid clock value: ${ms}`, call.span);
    return date.toISOString();
  },
  timestamp: (_args, call) => call.ctx.inputs.now(),
  // `env`'s argument is checked to be a literal in `callBuiltin`, before evaluation.
  env: (args, call) => call.ctx.inputs.env(String(args[0])) ?? '',
  // Arrays only: one array of their items, as upstream's docs have it (`concat([1, 2], [3, 4])` is
  // `[1, 2, 3, 4]`; joined as text it was "[1,2][3,4]"). Anything else: the text of each, joined (§D.6).
  concat: (args) => (args.length > 0 && args.every(Array.isArray) ? (args as unknown[][]).flat(1) : args.map(displayString).join('')),
  /** `Number(x)` for numbers, numeric strings and booleans; null for anything else, NaN or a number beyond a 64-bit float ("1e999"). */
  parseNumber: ([x]) => {
    if (typeof x === 'number') return Number.isNaN(x) ? null : x;
    if (typeof x === 'boolean') return x ? 1 : 0;
    if (typeof x === 'string') return parseNumericString(x) ?? null;
    return null;
  },
  /** A decimal string such as "19.99" (or a finite number) as a number; null for anything else — stricter than parseNumber's Number(x). */
  parseDecimal: ([x]) => {
    if (typeof x === 'number') return Number.isFinite(x) ? x : null;
    // Decimal digits only: Number() would also read "0x10" as 16, "0b101" as 5 and "Infinity".
    if (typeof x === 'string' && DECIMAL.test(x)) return parseNumericString(x) ?? null;
    return null;
  },
  /**
   * Checkpoint `key` (an ISO instant); null when there is none (or no store to ask). A mission that
   * declares a store named `sync_state` writes its checkpoints there as ordinary records
   * (`store { "k": now() } -> sync_state { key: "k" }`): then this reads that store, giving the
   * record's one value (the record itself when it has several), null when there is no record.
   */
  'sync_state.get': (args, call) => {
    const declared = call.ctx.inputs.store?.('sync_state');
    if (declared === undefined) return call.ctx.inputs.syncState?.(String(args[0])) ?? null;
    const record = declared.get(String(args[0]));
    if (record === null || record === undefined) return null;
    if (typeof record !== 'object' || Array.isArray(record)) return record;
    const values = Object.values(record as Record<string, unknown>);
    return values.length === 1 ? values[0] : record;
  },
  /** `generateId()` / `generateId("inv")`: a deterministic id from the recorded inputs (inputs.ts), with an optional prefix. */
  generateId: (args, call) => {
    const id = call.ctx.inputs.generateId?.();
    if (id === undefined) throw new EvaluatorError('R4004', '`generateId()` has no run to derive an id from here', call.span);
    return args.length > 0 && args[0] !== null && args[0] !== undefined ? `${String(args[0])}_${id}` : id;
  },
  /** True unless the value is null or absent: `exists(categories[id])`, `exists(.email)`. */
  exists: ([x]) => x !== null && x !== undefined,
  /** Strict conversion: null/undefined → null; a non-numeric value is an error (use parseNumber to get null). */
  toNumber: (args, call) => (args[0] === null || args[0] === undefined ? null : argNumber(call, 0, args[0])),
  /** Strings "false", "0", "no", "off" and "" (any case, trimmed) are false; other values by truthiness. */
  toBoolean: ([x]) => (typeof x === 'string' ? !['false', '0', 'no', 'off', ''].includes(x.trim().toLowerCase()) : isTruthy(x)),
  range: (args, call) => {
    const [start, end] = args.length === 1 ? [0, argNumber(call, 0, args[0])] : [argNumber(call, 0, args[0]), argNumber(call, 1, args[1])];
    if (!Number.isFinite(start) || !Number.isFinite(end)) {
      throw new EvaluatorError('R4014', 'range() expected finite bounds', call.span);
    }
    const size = Math.max(0, Math.ceil(end - start));
    if (size > RANGE_CAP) {
      throw new EvaluatorError('R4013', `range() would produce ${size} items; the limit is ${RANGE_CAP}`, call.span);
    }
    return Array.from({ length: size }, (_, i) => start + i);
  },
  pow: (args, call) => finiteResult(call, argNumber(call, 0, args[0]) ** argNumber(call, 1, args[1])),
  sqrt: (args, call) => finiteResult(call, Math.sqrt(argNumber(call, 0, args[0]))),
};

const BUILTINS: Record<string, BuiltinImpl> = {
  ...CORE_BUILTINS,
  ...TEXT_BUILTINS,
  ...COLLECTION_BUILTINS,
  ...OBJECT_BUILTINS,
  ...DATE_BUILTINS,
  ...FUNCTION_BUILTINS,
};

/** Names implemented here (compared with `BUILTIN_NAMES` by a test). */
export const IMPLEMENTED_BUILTINS: ReadonlySet<string> = new Set(Object.keys(BUILTINS));

/**
 * Calls the built-in `call.callee.name`: checks it exists and its arity, evaluates the arguments
 * left to right with `evaluate`, then runs it. A function argument (FUNCTION_ARGUMENTS) is not
 * evaluated here but handed over as an `ItemFunction` (`itemFunction`).
 */
export function callBuiltin(call: CallExpr, ctx: EvalContext, evaluate: (expr: Expr, ctx: EvalContext) => unknown): unknown {
  const name = call.callee.name;
  const impl = Object.prototype.hasOwnProperty.call(BUILTINS, name) ? BUILTINS[name] : undefined;
  if (impl === undefined || !BUILTIN_NAMES.has(name)) throw unknownFunction(call);
  const arity = BUILTIN_ARITY[name]!;
  const n = call.args.length;
  if (n < arity.min || n > arity.max) {
    throw new EvaluatorError('R4006', `${name}() expects ${describeArity(arity)} but got ${n}`, spanOf(call));
  }
  if (name === 'env' && call.args[0]!.kind !== 'String') {
    throw new EvaluatorError(
      'R4011',
      'env() needs a string-literal variable name, e.g. env("API_TOKEN"); a computed name is not allowed',
      spanOf(call.args[0]!),
    );
  }
  const fn = Object.hasOwn(FUNCTION_ARGUMENTS, name) ? FUNCTION_ARGUMENTS[name]!.index : -1;
  const args = call.args.map((arg, i) => (i === fn ? itemFunction(arg, ctx, evaluate) : evaluate(arg, ctx)));
  const result = impl(args, { name, span: call, argSpans: call.args, ctx }); // nodes as spans: EvaluatorError copies them
  return typeof result === 'number' && !Number.isFinite(result) ? storableNumber(result, `${name}()`, call) : result;
}

/**
 * A lambda's body with its parameters bound, or any other expression, evaluated with the item as
 * the current record (as `where` evaluates its condition): `map(xs, x => x.total)` and
 * `map(xs, .total)` are the same. The item is the record, so a map's record-less state is left behind.
 */
function itemFunction(arg: Expr, ctx: EvalContext, evaluate: (expr: Expr, ctx: EvalContext) => unknown): ItemFunction {
  const itemCtx = (item: unknown, scope: EvalContext['scope']): EvalContext => ({ ...withRecord(ctx, item), scope, mapped: undefined, noRecord: undefined });
  if (arg.kind !== 'Lambda') return (item) => evaluate(arg, itemCtx(item, ctx.scope));
  return (item, params) => {
    const scope = ctx.scope.child();
    arg.params.forEach((param, i) => scope.bind(param.name, params[i]));
    return evaluate(arg.body, itemCtx(item, scope));
  };
}

function describeArity({ min, max }: { min: number; max: number }): string {
  const plural = (k: number): string => (k === 1 ? 'argument' : 'arguments');
  if (min === max) return `${min} ${plural(min)}`;
  if (max === Infinity) return `at least ${min} ${plural(min)}`;
  return `${min} to ${max} arguments`;
}

function unknownFunction(call: CallExpr): EvaluatorError {
  const name = call.callee.name;
  const suggestion = closestBuiltin(name);
  const help = suggestion === undefined ? '' : `; did you mean \`${suggestion}\`?`;
  return new EvaluatorError('R4005', `Unknown function \`${name}\`${help}`, spanOf(call.callee));
}

/** The closest built-in (equal ignoring case, or within a third of the name's length in edits). */
function closestBuiltin(name: string): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.min(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of BUILTIN_NAMES) {
    const d = candidate.toLowerCase() === name.toLowerCase() ? 0 : editDistance(candidate, name);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}
