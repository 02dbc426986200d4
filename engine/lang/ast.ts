/**
 * The typed syntax tree of a Reqon mission.
 *
 * Every node carries its span as two numbers, `start` and `end` (UTF-16 offsets into its file's
 * text, end exclusive), not as a nested `Span` object: a multi-megabyte mission has over half a
 * million nodes, and one span object each was a third of the tree's objects, all of which the
 * young-generation collector copied (`spanOf` makes the `Span` a diagnostic or error keeps).
 * Line and column are computed only when a diagnostic is printed (see `line-index.ts`). Nodes
 * are discriminated by `kind` and are plain data: the parser builds them, the checker reads
 * them, the evaluator and executor walk them. Nothing here has behaviour but `spanOf`, `optionSpan`
 * and `namePatternBinds`.
 *
 * Option blocks (`{ key: value, … }`) are parsed into typed fields; `optionSpans` keeps where each
 * key given was written (see `OptionSpans`), so the checker and the runtime can point at it.
 */
import { DURATION_FUNCTION_MS } from './builtin-names.js';

export interface Span {
  start: number;
  end: number;
}

/** A new `Span` object with the offsets of `node` (a node is itself never kept as a span). */
export function spanOf(node: Span): Span {
  return { start: node.start, end: node.end };
}

/** A name as written in the source: an identifier, or any word in a name position. */
export interface Name {
  name: string;
  start: number;
  end: number;
}

export interface StringLiteral {
  value: string;
  start: number;
  end: number;
}

/**
 * Where each option key present in an option block starts, keyed by option name. A key is one
 * word, so it ends at `start + key.length` (`optionSpan`). Offsets rather than span objects: a
 * big mission has tens of thousands of option keys, and a number costs the tree no object.
 */
export type OptionSpans = Record<string, number>;

/** The span of option key `key` in `spans`, when the block gave it. */
export function optionSpan(spans: Readonly<OptionSpans> | undefined, key: string): Span | undefined {
  const start = spans !== undefined && Object.hasOwn(spans, key) ? spans[key] : undefined;
  return start === undefined ? undefined : { start, end: start + key.length };
}

// ---------------------------------------------------------------------------------------------
// Files and top-level declarations

export interface Program {
  kind: 'Program';
  /** Path of the file as given to the parser (used in diagnostics). */
  file: string;
  items: TopLevelItem[];
  start: number;
  end: number;
}

export type TopLevelItem =
  | MissionDecl
  | SourceDecl
  | StoreDecl
  | SchemaDecl
  | TransformDecl
  | ActionDecl
  | ImportDecl
  | TopLevelLet;

/** `import Name from "path"` — parsed and never resolved (the language has no module system). */
export interface ImportDecl {
  kind: 'Import';
  name: Name;
  from: StringLiteral;
  start: number;
  end: number;
}

/** A top-level `let`: parsed and ignored at run time, as in the original. */
export interface TopLevelLet {
  kind: 'TopLevelLet';
  name: Name;
  value: Expr;
  start: number;
  end: number;
}

export interface MissionDecl {
  kind: 'Mission';
  name: Name;
  sources: SourceDecl[];
  stores: StoreDecl[];
  schemas: SchemaDecl[];
  transforms: TransformDecl[];
  actions: ActionDecl[];
  /** The last `run` line wins; earlier ones are kept so the checker can warn about them. */
  pipelines: Pipeline[];
  schedules: Schedule[];
  checkpoint?: { mode: 'after-step' | 'on-failure'; start: number; end: number };
  trace?: { mode: 'full' | 'minimal'; start: number; end: number };
  start: number;
  end: number;
}

export type AuthKind = 'oauth2' | 'bearer' | 'basic' | 'api_key' | 'none';

export interface SourceDecl {
  kind: 'Source';
  name: Name;
  /** `source S from "spec.yaml"`: an OpenAPI document, relative to the mission's folder. */
  spec?: StringLiteral;
  auth?: { kind: AuthKind; start: number; end: number };
  base?: StringLiteral;
  headers: HeaderEntry[];
  validateResponses?: boolean;
  rateLimit?: RateLimitConfig;
  circuitBreaker?: CircuitBreakerConfig;
  /** One expression, or a list rotated round-robin per request attempt. */
  proxy?: Expr[];
  /** Per-request timeout in ms for this source (our extension; default 30 000). */
  timeout?: number;
  /** `retry: { … }` (upstream's docs): the retry of its requests that give none of their own. */
  retry?: RetryConfig;
  /** The largest response body in bytes this source may send (our extension; default 64 MiB). */
  maxResponseBytes?: number;
  optionSpans: OptionSpans;
  start: number;
  end: number;
}

export interface HeaderEntry {
  name: StringLiteral;
  value: Expr;
  start: number;
  end: number;
}

export interface RateLimitConfig {
  strategy?: 'pause' | 'throttle' | 'fail';
  maxWait?: number;
  fallbackRpm?: number;
  model?: { type: 'tokenBucket'; capacity: number; refill: number; safety?: number; start: number; end: number };
  optionSpans: OptionSpans;
  start: number;
  end: number;
}

export interface CircuitBreakerConfig {
  failureThreshold?: number;
  resetTimeout?: number;
  successThreshold?: number;
  failureWindow?: number;
  failureRate?: number;
  minimumRequests?: number;
  optionSpans: OptionSpans;
  start: number;
  end: number;
}

export type StoreType = 'memory' | 'file' | 'sql' | 'nosql' | 'postgrest';

export interface StoreDecl {
  kind: 'Store';
  name: Name;
  type: { kind: StoreType; start: number; end: number };
  /** The table, collection or file name the store writes to. */
  target: StringLiteral;
  batch?: { size: number; maxDelay?: number; durability?: 'strict' | 'relaxed'; start: number; end: number };
  start: number;
  end: number;
}

export interface SchemaDecl {
  kind: 'Schema';
  name: Name;
  fields: SchemaField[];
  start: number;
  end: number;
}

export interface SchemaField {
  name: Name;
  type: TypeRef;
  optional: boolean;
  start: number;
  end: number;
}

export type TypeRef =
  | { kind: 'NamedType'; name: string; start: number; end: number }
  | { kind: 'ArrayType'; element: TypeRef; start: number; end: number }
  | { kind: 'ObjectType'; fields: SchemaField[]; start: number; end: number };

export interface TransformDecl {
  kind: 'Transform';
  name: Name;
  variants: TransformVariant[];
  start: number;
  end: number;
}

export interface TransformVariant {
  /** Schema the input must match; `null` for `_` or the unconditional form `transform T -> X {…}`. */
  sourceSchema: Name | null;
  guard?: Expr;
  targetSchema: Name;
  fields: FieldMapping[];
  start: number;
  end: number;
}

export interface FieldMapping {
  name: Name;
  value: Expr;
  start: number;
  end: number;
}

export interface ActionDecl {
  kind: 'Action';
  name: Name;
  steps: Step[];
  /** The file the action was written in (differs from the mission's in folder missions). */
  file: string;
  start: number;
  end: number;
}

export interface Pipeline {
  kind: 'Pipeline';
  stages: Stage[];
  start: number;
  end: number;
}

export interface Stage {
  actions: Name[];
  parallel: boolean;
  condition?: Expr;
  start: number;
  end: number;
}

export type ScheduleUnit = 'seconds' | 'minutes' | 'hours' | 'days' | 'weeks';
/** Milliseconds per schedule unit: what `every N unit` means, to the checker and the worker alike. */
/** A schedule's `every` units: the duration functions' (builtin-names.ts), and weeks. */
export const SCHEDULE_UNIT_MS: Readonly<Record<ScheduleUnit, number>> = { ...DURATION_FUNCTION_MS, weeks: 7 * DURATION_FUNCTION_MS.days };

export interface Schedule {
  kind: 'Schedule';
  trigger:
    | { kind: 'every'; amount: number; unit: ScheduleUnit; start: number; end: number }
    | { kind: 'cron'; expression: StringLiteral; start: number; end: number }
    | { kind: 'at'; when: StringLiteral; start: number; end: number };
  timezone?: StringLiteral;
  maxConcurrency?: number;
  skipIfRunning?: boolean;
  retry?: { maxRetries?: number; delaySeconds?: number; start: number; end: number };
  optionSpans: OptionSpans;
  start: number;
  end: number;
}

// ---------------------------------------------------------------------------------------------
// Steps

export type Step =
  | FetchStep
  | CallStep
  | ForStep
  | MapStep
  | ApplyStep
  | ValidateStep
  | StoreStep
  | LetStep
  | MatchStep
  | WaitStep
  | PauseStep
  | FlowStep;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface FetchOptions {
  source?: Name;
  body?: Expr;
  /** `params: { limit: 100, status: "active" }`: query parameters, in the URL after the path's own. */
  params?: Expr;
  /** `headers: { "Accept": "…" }`: this request's headers, over the source's (names case-insensitive). */
  headers?: Expr;
  /** `timeout: 120000`: this request's timeout in ms, over the source's `timeout`. */
  timeout?: number;
  paginate?: Paginate;
  until?: Expr;
  retry?: RetryConfig;
  since?: Since;
  allow?: { statuses: number[]; start: number; end: number };
  backfill?: boolean;
  /** Page caps (our names for the V2 `maxPages`/`maxItems`); hitting one marks the result truncated. */
  maxPages?: number;
  maxItems?: number;
  /** Dotted path of the items array in each page (default: the first array-valued property). */
  itemsPath?: StringLiteral;
  optionSpans: OptionSpans;
}

export interface FetchStep {
  kind: 'Fetch';
  method: HttpMethod;
  path: Expr;
  options: FetchOptions;
  start: number;
  end: number;
}

export interface CallStep {
  kind: 'Call';
  source: Name;
  operation: Name;
  options: FetchOptions;
  start: number;
  end: number;
}

export interface Paginate {
  strategy: 'offset' | 'page' | 'cursor';
  /** The query parameter that carries the offset, page number or cursor. */
  param: Name;
  /** Absent only for a cursor pagination given none (no `sizeParam`): its next cursor says whether more pages follow. */
  pageSize: number | undefined;
  /** `cursor` only: dotted path of the next cursor in each page. */
  cursorPath?: StringLiteral;
  /** Query parameter that carries the page size, when the mission names one (fixes the original's never-sent size). */
  sizeParam?: Name;
  /** `page` only (`paginate: { …, firstPage: 0 }`): the number of the first page; 1 when not given. */
  firstPage?: number;
  start: number;
  end: number;
}

export interface RetryConfig {
  maxAttempts?: number;
  backoff?: 'exponential' | 'linear' | 'constant';
  initialDelay?: number;
  maxDelay?: number;
  /** `delay: 60000` (upstream's docs): a fixed delay in ms, i.e. constant backoff of that many ms, not capped by the default maxDelay. */
  delay?: number;
  timeout?: number;
  optionSpans: OptionSpans;
  start: number;
  end: number;
}

/** `http-date`: RFC 9110's IMF-fixdate (`Wed, 02 Dec 2026 12:00:00 GMT`), what `If-Modified-Since` takes. */
export type SinceFormat = 'iso' | 'unix' | 'unix-ms' | 'date-only' | 'http-date';

export type Since =
  | {
      kind: 'LastSync';
      /** The checkpoint key: a string literal, or an expression evaluated per request (`lastSync(concat("orders:", a.id))`). */
      key?: Expr;
      param?: string;
      format?: SinceFormat;
      updateFrom?: string;
      header?: string;
      optionSpans: OptionSpans;
      start: number;
  end: number;
    }
  | { kind: 'SinceExpr'; value: Expr; start: number; end: number };

export interface ForStep {
  kind: 'For';
  variable: Name;
  collection: Expr;
  where?: Expr;
  concurrency?: number;
  onError?: { mode: 'continue' | 'abort'; start: number; end: number } | { mode: 'queue'; store: Name; start: number; end: number };
  body: Step[];
  start: number;
  end: number;
}

export interface MapStep {
  kind: 'Map';
  source: Expr;
  schema: Name;
  fields: FieldMapping[];
  start: number;
  end: number;
}

export interface ApplyStep {
  kind: 'Apply';
  transform: Name;
  target: Expr;
  as?: Name;
  start: number;
  end: number;
}

export interface ValidateStep {
  kind: 'Validate';
  target: Expr;
  constraints: { condition: Expr; start: number; end: number }[];
  /** `validate x { … } or { steps }`: run these instead of failing. */
  fallback?: Step[];
  start: number;
  end: number;
}

export interface StoreStep {
  kind: 'Store';
  each: boolean;
  source: Expr;
  store: Name;
  key?: Expr;
  partial?: boolean;
  upsert?: boolean;
  optionSpans: OptionSpans;
  start: number;
  end: number;
}

export interface LetStep {
  kind: 'Let';
  name: Name;
  value: Expr;
  start: number;
  end: number;
}

export interface MatchStep {
  kind: 'Match';
  subject: Expr;
  arms: MatchArm[];
  start: number;
  end: number;
}

export interface MatchArm {
  pattern: ArmPattern;
  guard?: Expr;
  body: { kind: 'Directive'; directive: Directive } | { kind: 'Steps'; steps: Step[] };
  start: number;
  end: number;
}

export type ArmPattern =
  | { kind: 'Wildcard'; start: number; end: number }
  /**
   * `Order`: the subject matches the declared schema. A name that is no declared schema binds the
   * subject to that variable for the guard and the body (`v where v is string -> …`); the checker
   * lets it only when the arm reads it, so a misspelt schema is still an error (`namePatternBinds`).
   */
  | { kind: 'SchemaPattern'; schema: Name; start: number; end: number }
  /**
   * `[Order]`: an array whose every item matches the schema. `[single]`, a name that is no declared
   * schema: an array of exactly one item, which it binds (upstream's docs).
   */
  | { kind: 'SchemaArrayPattern'; schema: Name; start: number; end: number }
  /** `[]`: an empty array. */
  | { kind: 'EmptyArrayPattern'; start: number; end: number }
  | { kind: 'StatusPattern'; status: number; start: number; end: number }
  /** `[200, 201]`: any of these statuses (upstream writes a list where one status would do). */
  | { kind: 'StatusListPattern'; statuses: { status: number; start: number; end: number }[]; start: number; end: number }
  | ObjectPattern;

/**
 * `v` or `[single]` naming no declared schema: a binding, not a schema test (one rule for the
 * checker and the runtime; the checker lets such a name only when its arm reads it).
 */
export function namePatternBinds(pattern: ArmPattern, schemas: { has(name: string): boolean }): pattern is Extract<ArmPattern, { schema: Name }> {
  return (pattern.kind === 'SchemaPattern' || pattern.kind === 'SchemaArrayPattern') && !schemas.has(pattern.schema.name);
}

/**
 * `{ error: _, code: 401, message: m }`: the subject is an object and every named key matches
 * its sub-pattern (docs/language.md, "Object patterns").
 */
export interface ObjectPattern {
  kind: 'ObjectPattern';
  fields: { key: string; keySpan: Span; value: SubPattern }[];
  start: number;
  end: number;
}

/** What one key of an object pattern asks of its value. */
export type SubPattern =
  /** `_`: present, any value other than null. */
  | { kind: 'Present'; start: number; end: number }
  /** A name (`e`): present, and the value is bound to that variable for the guard and the body. */
  | { kind: 'Bind'; name: Name; start: number; end: number }
  /** `401`, `"failed"`, `true`, `null`: equal (`===`; `null` also matches an absent key). */
  | { kind: 'Literal'; value: string | number | boolean | null; start: number; end: number }
  /** `[]`: an empty list. */
  | { kind: 'EmptyList'; start: number; end: number }
  /**
   * `[name]`: a list of one item, bound to that variable — or, where a schema declares the name,
   * a list every item of which matches it (as the arm patterns `[single] ->` and `[Order] ->`).
   */
  | { kind: 'List'; name: Name; start: number; end: number }
  | ObjectPattern;

/**
 * A flow-control directive written as a step (`if`/`match` arm blocks, loop bodies, validate
 * fallbacks): `skip`, `abort "…"`, `retry { … }`, `continue`, `queue store`, `jump A …`. It means
 * what the same directive means as a match arm body; a `queue` step queues `response`.
 */
export interface FlowStep {
  kind: 'Flow';
  directive: Directive;
  start: number;
  end: number;
}

export type Directive =
  | { kind: 'Continue'; start: number; end: number }
  | { kind: 'Skip'; start: number; end: number }
  /** `abort "text"`, or `abort e` / `abort response.error`: a message computed when it runs. */
  | { kind: 'Abort'; message?: StringLiteral; messageExpr?: Expr; start: number; end: number }
  | { kind: 'Retry'; config?: RetryConfig; start: number; end: number }
  /** `queue S`, or `queue S { item: expr, key: expr }`: the record to queue (default: the matched value) and its key. */
  | { kind: 'Queue'; store?: Name; item?: Expr; key?: Expr; start: number; end: number }
  | { kind: 'Jump'; action: Name; then?: 'retry' | 'continue'; start: number; end: number };

export interface WaitStep {
  kind: 'Wait';
  timeout?: number;
  path?: StringLiteral;
  expectedEvents?: number;
  eventFilter?: Expr;
  retry?: RetryConfig;
  storage?: { target: Name; key?: Expr; start: number; end: number };
  optionSpans: OptionSpans;
  start: number;
  end: number;
}

export type PauseTrigger = { kind: 'timeout'; start: number; end: number } | { kind: 'webhook'; path: StringLiteral; start: number; end: number };

export interface PauseStep {
  kind: 'Pause';
  /** Duration in milliseconds, parsed from an integer or a string such as "7d" or "1.5h". */
  duration?: { ms: number; start: number; end: number };
  persist?: Name;
  resumeOn: PauseTrigger[];
  optionSpans: OptionSpans;
  start: number;
  end: number;
}

// ---------------------------------------------------------------------------------------------
// Expressions

export type Expr =
  | NumberLiteral
  | StringLiteralExpr
  | BooleanLiteral
  | NullLiteral
  | RefExpr
  | MemberExpr
  | IndexExpr
  | CallExpr
  | UnaryExpr
  | BinaryExpr
  | IsExpr
  | ConditionalExpr
  | ArrayExpr
  | ObjectExpr
  | MatchExpr
  | AnyOfExpr
  | WhereExpr
  | LambdaExpr
  | UnsupportedExpr;

export interface NumberLiteral {
  kind: 'Number';
  value: number;
  start: number;
  end: number;
}

export interface StringLiteralExpr {
  kind: 'String';
  value: string;
  start: number;
  end: number;
}

export interface BooleanLiteral {
  kind: 'Boolean';
  value: boolean;
  start: number;
  end: number;
}

export interface NullLiteral {
  kind: 'Null';
  start: number;
  end: number;
}

/**
 * A name or dotted name: `x`, `.x`, `a.b.c`, `.a.b`. Resolution (current record, variables,
 * `response`, fields of `response`) follows §D.2 of the reference and lives in the evaluator.
 * `.x` and `x` mean the same thing; `leadingDot` is kept only for printing.
 */
export interface RefExpr {
  kind: 'Ref';
  parts: string[];
  leadingDot: boolean;
  start: number;
  end: number;
}

/** `.name` after a call, subscript or parenthesised expression: a field read, never a name lookup. */
export interface MemberExpr {
  kind: 'Member';
  object: Expr;
  property: string;
  start: number;
  end: number;
}

export interface IndexExpr {
  kind: 'Index';
  object: Expr;
  index: Expr;
  start: number;
  end: number;
}

export interface CallExpr {
  kind: 'Call';
  callee: Name;
  args: Expr[];
  start: number;
  end: number;
}

export interface UnaryExpr {
  kind: 'Unary';
  operator: '-' | '+' | 'not';
  operand: Expr;
  start: number;
  end: number;
}

export type BinaryOperator =
  | '+'
  | '-'
  | '*'
  | '/'
  | '%'
  | '=='
  | '!='
  | '<'
  | '>'
  | '<='
  | '>='
  | 'and'
  | 'or'
  | '??'
  | 'in';

export interface BinaryExpr {
  kind: 'Binary';
  operator: BinaryOperator;
  left: Expr;
  right: Expr;
  start: number;
  end: number;
}

/** `x is T`: a runtime type test. */
export interface IsExpr {
  kind: 'Is';
  operand: Expr;
  type: Name;
  start: number;
  end: number;
}

/** `c ? a : b`, and `if c then a else b`. */
export interface ConditionalExpr {
  kind: 'Conditional';
  test: Expr;
  consequent: Expr;
  alternate: Expr;
  start: number;
  end: number;
}

export interface ArrayExpr {
  kind: 'Array';
  elements: Expr[];
  start: number;
  end: number;
}

export type ObjectEntry =
  | { kind: 'Property'; key: Name; value: Expr; start: number; end: number }
  | { kind: 'Spread'; value: Expr; start: number; end: number };

export interface ObjectExpr {
  kind: 'Object';
  entries: ObjectEntry[];
  start: number;
  end: number;
}

export interface MatchExprArm {
  /** `null` for the `_` wildcard. A plain identifier with a guard binds the subject (`s where s > 3`). */
  pattern: Expr | null;
  guard?: Expr;
  result: Expr;
  start: number;
  end: number;
}

export interface MatchExpr {
  kind: 'MatchExpr';
  /** For a guard match (`match { cond => value, … }`) a `true` literal at the `match` keyword. */
  subject: Expr;
  arms: MatchExprArm[];
  /** `match { cond => value, … }`: no subject; the first arm whose condition is truthy wins. */
  guards?: true;
  start: number;
  end: number;
}

/** `coll where cond`: the items of `coll` for which `cond` (the item as current record) is truthy. */
export interface WhereExpr {
  kind: 'Where';
  collection: Expr;
  condition: Expr;
  start: number;
  end: number;
}

/**
 * `x => x * 2`, `(total, x) => total + x`: a function, written only as the function argument of
 * `map`, `filter`, `reduce`, `sortBy`, `find` and `findIndex` (the parser takes it nowhere else).
 * Its body sees its parameters and, as the current record, the item it is called for.
 */
export interface LambdaExpr {
  kind: 'Lambda';
  params: Name[];
  body: Expr;
  start: number;
  end: number;
}

/** `any of coll` (a recorded random pick) or `any of coll where cond` (the first match). */
export interface AnyOfExpr {
  kind: 'AnyOf';
  collection: Expr;
  where?: Expr;
  start: number;
  end: number;
}

/** Constructs the original parses but cannot evaluate (ranges, superposition, `^parent`). */
export interface UnsupportedExpr {
  kind: 'Unsupported';
  construct: 'range' | 'superposition' | 'parent-reference' | 'pipe';
  start: number;
  end: number;
}
