/**
 * The names and arities of Reqon's built-in functions (§D.6 plus the doc-only helpers we add).
 *
 * Invariant: this file has no imports, so the checker can load it cheaply, and it lists exactly
 * the functions `builtins.ts` implements (a test asserts the two agree).
 */

/** Argument-count bounds per built-in; `max` is `Infinity` for variadic functions. */
export const BUILTIN_ARITY: Record<string, { min: number; max: number }> = {
  // §D.6 (V2)
  length: { min: 1, max: 1 },
  count: { min: 1, max: 1 },
  sum: { min: 1, max: 1 },
  first: { min: 1, max: 1 },
  last: { min: 1, max: 1 },
  round: { min: 1, max: 2 },
  floor: { min: 1, max: 1 },
  ceil: { min: 1, max: 1 },
  now: { min: 0, max: 0 },
  env: { min: 1, max: 1 },
  abs: { min: 1, max: 1 },
  max: { min: 1, max: Infinity },
  min: { min: 1, max: Infinity },
  concat: { min: 0, max: Infinity },
  parseNumber: { min: 1, max: 1 },
  fromUnix: { min: 1, max: 1 },
  timestamp: { min: 0, max: 0 },
  range: { min: 1, max: 2 },
  // Doc-only helpers of §D.6 that we implement (LANGUAGE.md decision 6)
  lowercase: { min: 1, max: 1 },
  uppercase: { min: 1, max: 1 },
  trim: { min: 1, max: 1 },
  substring: { min: 2, max: 3 },
  split: { min: 2, max: 2 },
  join: { min: 1, max: 2 },
  replace: { min: 3, max: 3 },
  includes: { min: 2, max: 2 },
  contains: { min: 2, max: 2 },
  startsWith: { min: 2, max: 2 },
  endsWith: { min: 2, max: 2 },
  isEmpty: { min: 1, max: 1 },
  keys: { min: 1, max: 1 },
  values: { min: 1, max: 1 },
  flatten: { min: 1, max: 1 },
  unique: { min: 1, max: 1 },
  sort: { min: 1, max: 1 },
  pow: { min: 2, max: 2 },
  sqrt: { min: 1, max: 1 },
  toNumber: { min: 1, max: 1 },
  toString: { min: 1, max: 1 },
  toBoolean: { min: 1, max: 1 },
  avg: { min: 1, max: Infinity },
  addDays: { min: 2, max: 2 },
  diffDays: { min: 2, max: 2 },
  // Forms upstream's examples and docs use (docs/language.md)
  exists: { min: 1, max: 1 },
  parseDecimal: { min: 1, max: 1 },
  parseDate: { min: 1, max: 1 },
  days: { min: 1, max: 1 },
  hours: { min: 1, max: 1 },
  minutes: { min: 1, max: 1 },
  seconds: { min: 1, max: 1 },
  /** The checkpoint store read as a value (`sync_state.get("orders_last_sync")`); null before the first checkpoint. */
  'sync_state.get': { min: 1, max: 1 },
  /** A deterministic id: derived from the run, the step and a per-step count (never random), so replay gets the same one. */
  generateId: { min: 0, max: 1 },
};

/**
 * The duration functions upstream's examples write (`days(7)`, `hours(1)`): milliseconds per
 * unit. The evaluator's built-ins and the durations fixed at check time (a pause's `duration`, a
 * wait's `timeout`) read them here.
 */
export const DURATION_FUNCTION_MS: Readonly<Record<'days' | 'hours' | 'minutes' | 'seconds', number>> = { days: 86_400_000, hours: 3_600_000, minutes: 60_000, seconds: 1_000 };

/**
 * The checkpoint store: upstream's examples read it (`sync_state.get(key)`) and write it
 * (`store {…} -> sync_state { key: … }`) without declaring it, so the checker knows the name.
 */
export const CHECKPOINT_STORE = 'sync_state';

export const BUILTIN_NAMES: ReadonlySet<string> = new Set(Object.keys(BUILTIN_ARITY));

/**
 * Names the original documents but nobody implements (§D.6 "doc-only"), minus the ones above.
 * Calling one is an error that says "not supported yet" rather than "unknown function".
 */
export const UNSUPPORTED_BUILTIN_NAMES: ReadonlySet<string> = new Set([
  'trimStart',
  'trimEnd',
  'map',
  'filter',
  'reduce',
  'sortBy',
  'find',
  'findIndex',
  'entries',
  'hasKey',
  'pick',
  'omit',
  'merge',
  'toArray',
  'formatDate',
  'year',
  'month',
  'day',
  'hour',
  'minute',
  'addMonths',
  'subtractDays',
  'isBefore',
  'isAfter',
  'slugify',
]);

/** Built-ins whose result is not a pure function of their arguments (recorded for replay). */
export const NONDETERMINISTIC_BUILTINS: ReadonlySet<string> = new Set(['now', 'timestamp', 'env', 'sync_state.get']);

/** The type names `x is T` accepts (case-insensitive), as §D.3 lists them. */
export const IS_TYPE_NAMES = ['array', 'object', 'string', 'number', 'decimal', 'int', 'integer', 'boolean', 'null', 'undefined', 'date'] as const;

/**
 * The built-in type names of a schema field (case-insensitive); any other name is a declared
 * schema, or matches any value (§B.5).
 */
export const SCHEMA_TYPE_NAMES = ['string', 'int', 'integer', 'decimal', 'number', 'float', 'double', 'boolean', 'bool', 'date', 'datetime', 'any', 'array', 'object'] as const;
