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
  // The rest of §D.6's doc-only list (LANGUAGE.md decision 6; docs/language.md)
  trimStart: { min: 1, max: 1 },
  trimEnd: { min: 1, max: 1 },
  slugify: { min: 1, max: 1 },
  entries: { min: 1, max: 1 },
  hasKey: { min: 2, max: 2 },
  pick: { min: 2, max: 2 },
  omit: { min: 2, max: 2 },
  merge: { min: 1, max: Infinity },
  toArray: { min: 1, max: 1 },
  formatDate: { min: 2, max: 2 },
  year: { min: 1, max: 1 },
  month: { min: 1, max: 1 },
  day: { min: 1, max: 1 },
  hour: { min: 1, max: 1 },
  minute: { min: 1, max: 1 },
  addMonths: { min: 2, max: 2 },
  subtractDays: { min: 2, max: 2 },
  isBefore: { min: 2, max: 2 },
  isAfter: { min: 2, max: 2 },
  // Functions of a list and a function (FUNCTION_ARGUMENTS)
  map: { min: 2, max: 2 },
  filter: { min: 2, max: 2 },
  reduce: { min: 2, max: 3 },
  sortBy: { min: 2, max: 2 },
  find: { min: 2, max: 2 },
  findIndex: { min: 2, max: 2 },
};

/**
 * The built-ins that take a function: which argument it is and how many parameters a lambda there
 * has. The argument is a lambda (`x => x.total * 2`, `(total, x) => total + x`) or, where one
 * parameter is wanted, any expression, evaluated with each item as the current record (`.total`,
 * `.status == "paid"`, as `where` evaluates its condition).
 */
export const FUNCTION_ARGUMENTS: Readonly<Record<string, { index: number; params: number }>> = {
  map: { index: 1, params: 1 },
  filter: { index: 1, params: 1 },
  reduce: { index: 1, params: 2 },
  sortBy: { index: 1, params: 1 },
  find: { index: 1, params: 1 },
  findIndex: { index: 1, params: 1 },
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

/** Built-ins whose result is not a pure function of their arguments (recorded for replay). */
export const NONDETERMINISTIC_BUILTINS: ReadonlySet<string> = new Set(['now', 'timestamp', 'env', 'sync_state.get']);

/** The type names `x is T` accepts (case-insensitive), as §D.3 lists them. */
export const IS_TYPE_NAMES = ['array', 'object', 'string', 'number', 'decimal', 'int', 'integer', 'boolean', 'null', 'undefined', 'date'] as const;

/**
 * The built-in type names of a schema field (case-insensitive); any other name is a declared
 * schema, or matches any value (§B.5).
 */
export const SCHEMA_TYPE_NAMES = ['string', 'int', 'integer', 'decimal', 'number', 'float', 'double', 'boolean', 'bool', 'date', 'datetime', 'any', 'array', 'object'] as const;
