/**
 * The typed syntax tree of a Reqon mission.
 *
 * Every node carries a `span` (UTF-16 offsets into its file's text, end exclusive). Line and
 * column are computed only when a diagnostic is printed (see `line-index.ts`). Nodes are
 * discriminated by `kind` and are plain data: the parser builds them, the checker reads them,
 * the evaluator and executor walk them. Nothing here has behaviour.
 *
 * Option blocks (`{ key: value, … }`) are parsed into typed fields; each option that the checker
 * or runtime may need to point at keeps its own span in `optionSpans` under its key.
 */

export interface Span {
  start: number;
  end: number;
}

/** A name as written in the source: an identifier, or any word in a name position. */
export interface Name {
  name: string;
  span: Span;
}

export interface StringLiteral {
  value: string;
  span: Span;
}

/** Spans of the option keys present in an option block, keyed by option name. */
export type OptionSpans = Record<string, Span>;

// ---------------------------------------------------------------------------------------------
// Files and top-level declarations

export interface Program {
  kind: 'Program';
  /** Path of the file as given to the parser (used in diagnostics). */
  file: string;
  items: TopLevelItem[];
  span: Span;
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
  span: Span;
}

/** A top-level `let`: parsed and ignored at run time, as in the original. */
export interface TopLevelLet {
  kind: 'TopLevelLet';
  name: Name;
  value: Expr;
  span: Span;
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
  checkpoint?: { mode: 'after-step' | 'on-failure'; span: Span };
  trace?: { mode: 'full' | 'minimal'; span: Span };
  span: Span;
}

export type AuthKind = 'oauth2' | 'bearer' | 'basic' | 'api_key' | 'none';

export interface SourceDecl {
  kind: 'Source';
  name: Name;
  /** `source S from "spec.yaml"`: an OpenAPI document, relative to the mission's folder. */
  spec?: StringLiteral;
  auth?: { kind: AuthKind; span: Span };
  base?: StringLiteral;
  headers: HeaderEntry[];
  validateResponses?: boolean;
  rateLimit?: RateLimitConfig;
  circuitBreaker?: CircuitBreakerConfig;
  /** One expression, or a list rotated round-robin per request attempt. */
  proxy?: Expr[];
  /** Per-request timeout in ms for this source (our extension; default 30 000). */
  timeout?: number;
  /** The largest response body in bytes this source may send (our extension; default 64 MiB). */
  maxResponseBytes?: number;
  optionSpans: OptionSpans;
  span: Span;
}

export interface HeaderEntry {
  name: StringLiteral;
  value: Expr;
  span: Span;
}

export interface RateLimitConfig {
  strategy?: 'pause' | 'throttle' | 'fail';
  maxWait?: number;
  fallbackRpm?: number;
  model?: { type: 'tokenBucket'; capacity: number; refill: number; safety?: number; span: Span };
  optionSpans: OptionSpans;
  span: Span;
}

export interface CircuitBreakerConfig {
  failureThreshold?: number;
  resetTimeout?: number;
  successThreshold?: number;
  failureWindow?: number;
  failureRate?: number;
  minimumRequests?: number;
  optionSpans: OptionSpans;
  span: Span;
}

export type StoreType = 'memory' | 'file' | 'sql' | 'nosql' | 'postgrest';

export interface StoreDecl {
  kind: 'Store';
  name: Name;
  type: { kind: StoreType; span: Span };
  /** The table, collection or file name the store writes to. */
  target: StringLiteral;
  batch?: { size: number; maxDelay?: number; durability?: 'strict' | 'relaxed'; span: Span };
  span: Span;
}

export interface SchemaDecl {
  kind: 'Schema';
  name: Name;
  fields: SchemaField[];
  span: Span;
}

export interface SchemaField {
  name: Name;
  type: TypeRef;
  optional: boolean;
  span: Span;
}

export type TypeRef =
  | { kind: 'NamedType'; name: string; span: Span }
  | { kind: 'ArrayType'; element: TypeRef; span: Span }
  | { kind: 'ObjectType'; fields: SchemaField[]; span: Span };

export interface TransformDecl {
  kind: 'Transform';
  name: Name;
  variants: TransformVariant[];
  span: Span;
}

export interface TransformVariant {
  /** Schema the input must match; `null` for `_` or the unconditional form `transform T -> X {…}`. */
  sourceSchema: Name | null;
  guard?: Expr;
  targetSchema: Name;
  fields: FieldMapping[];
  span: Span;
}

export interface FieldMapping {
  name: Name;
  value: Expr;
  span: Span;
}

export interface ActionDecl {
  kind: 'Action';
  name: Name;
  steps: Step[];
  /** The file the action was written in (differs from the mission's in folder missions). */
  file: string;
  span: Span;
}

export interface Pipeline {
  kind: 'Pipeline';
  stages: Stage[];
  span: Span;
}

export interface Stage {
  actions: Name[];
  parallel: boolean;
  condition?: Expr;
  span: Span;
}

export type ScheduleUnit = 'seconds' | 'minutes' | 'hours' | 'days' | 'weeks';

export interface Schedule {
  kind: 'Schedule';
  trigger:
    | { kind: 'every'; amount: number; unit: ScheduleUnit; span: Span }
    | { kind: 'cron'; expression: StringLiteral; span: Span }
    | { kind: 'at'; when: StringLiteral; span: Span };
  timezone?: StringLiteral;
  maxConcurrency?: number;
  skipIfRunning?: boolean;
  retry?: { maxRetries?: number; delaySeconds?: number; span: Span };
  optionSpans: OptionSpans;
  span: Span;
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
  paginate?: Paginate;
  until?: Expr;
  retry?: RetryConfig;
  since?: Since;
  allow?: { statuses: number[]; span: Span };
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
  span: Span;
}

export interface CallStep {
  kind: 'Call';
  source: Name;
  operation: Name;
  options: FetchOptions;
  span: Span;
}

export interface Paginate {
  strategy: 'offset' | 'page' | 'cursor';
  /** The query parameter that carries the offset, page number or cursor. */
  param: Name;
  pageSize: number;
  /** `cursor` only: dotted path of the next cursor in each page. */
  cursorPath?: StringLiteral;
  /** Query parameter that carries the page size, when the mission names one (fixes the original's never-sent size). */
  sizeParam?: Name;
  span: Span;
}

export interface RetryConfig {
  maxAttempts?: number;
  backoff?: 'exponential' | 'linear' | 'constant';
  initialDelay?: number;
  maxDelay?: number;
  timeout?: number;
  optionSpans: OptionSpans;
  span: Span;
}

export type SinceFormat = 'iso' | 'unix' | 'unix-ms' | 'date-only';

export type Since =
  | {
      kind: 'LastSync';
      key?: StringLiteral;
      param?: string;
      format?: SinceFormat;
      updateFrom?: string;
      header?: string;
      optionSpans: OptionSpans;
      span: Span;
    }
  | { kind: 'SinceExpr'; value: Expr; span: Span };

export interface ForStep {
  kind: 'For';
  variable: Name;
  collection: Expr;
  where?: Expr;
  concurrency?: number;
  onError?: { mode: 'continue' | 'abort'; span: Span } | { mode: 'queue'; store: Name; span: Span };
  body: Step[];
  span: Span;
}

export interface MapStep {
  kind: 'Map';
  source: Expr;
  schema: Name;
  fields: FieldMapping[];
  span: Span;
}

export interface ApplyStep {
  kind: 'Apply';
  transform: Name;
  target: Expr;
  as?: Name;
  span: Span;
}

export interface ValidateStep {
  kind: 'Validate';
  target: Expr;
  constraints: { condition: Expr; span: Span }[];
  /** `validate x { … } or { steps }`: run these instead of failing. */
  fallback?: Step[];
  span: Span;
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
  span: Span;
}

export interface LetStep {
  kind: 'Let';
  name: Name;
  value: Expr;
  span: Span;
}

export interface MatchStep {
  kind: 'Match';
  subject: Expr;
  arms: MatchArm[];
  span: Span;
}

export interface MatchArm {
  pattern: ArmPattern;
  guard?: Expr;
  body: { kind: 'Directive'; directive: Directive } | { kind: 'Steps'; steps: Step[] };
  span: Span;
}

export type ArmPattern =
  | { kind: 'Wildcard'; span: Span }
  | { kind: 'SchemaPattern'; schema: Name; span: Span }
  | { kind: 'SchemaArrayPattern'; schema: Name; span: Span }
  | { kind: 'StatusPattern'; status: number; span: Span }
  /** `[200, 201]`: any of these statuses (upstream writes a list where one status would do). */
  | { kind: 'StatusListPattern'; statuses: { status: number; span: Span }[]; span: Span }
  | ObjectPattern;

/**
 * `{ error: _, code: 401, message: m }`: the subject is an object and every named key matches
 * its sub-pattern (docs/language.md, "Object patterns").
 */
export interface ObjectPattern {
  kind: 'ObjectPattern';
  fields: { key: string; keySpan: Span; value: SubPattern }[];
  span: Span;
}

/** What one key of an object pattern asks of its value. */
export type SubPattern =
  /** `_`: present, any value other than null. */
  | { kind: 'Present'; span: Span }
  /** A name (`e`): present, and the value is bound to that variable for the guard and the body. */
  | { kind: 'Bind'; name: Name; span: Span }
  /** `401`, `"failed"`, `true`, `null`: equal (`===`; `null` also matches an absent key). */
  | { kind: 'Literal'; value: string | number | boolean | null; span: Span }
  | ObjectPattern;

/**
 * A flow-control directive written as a step (`if`/`match` arm blocks, loop bodies, validate
 * fallbacks): `skip`, `abort "…"`, `retry { … }`, `continue`, `queue store`, `jump A …`. It means
 * what the same directive means as a match arm body; a `queue` step queues `response`.
 */
export interface FlowStep {
  kind: 'Flow';
  directive: Directive;
  span: Span;
}

export type Directive =
  | { kind: 'Continue'; span: Span }
  | { kind: 'Skip'; span: Span }
  /** `abort "text"`, or `abort e` / `abort response.error`: a message computed when it runs. */
  | { kind: 'Abort'; message?: StringLiteral; messageExpr?: Expr; span: Span }
  | { kind: 'Retry'; config?: RetryConfig; span: Span }
  | { kind: 'Queue'; store?: Name; span: Span }
  | { kind: 'Jump'; action: Name; then?: 'retry' | 'continue'; span: Span };

export interface WaitStep {
  kind: 'Wait';
  timeout?: number;
  path?: StringLiteral;
  expectedEvents?: number;
  eventFilter?: Expr;
  retry?: RetryConfig;
  storage?: { target: Name; key?: Expr; span: Span };
  optionSpans: OptionSpans;
  span: Span;
}

export type PauseTrigger = { kind: 'timeout'; span: Span } | { kind: 'webhook'; path: StringLiteral; span: Span };

export interface PauseStep {
  kind: 'Pause';
  /** Duration in milliseconds, parsed from an integer or a string such as "7d" or "1.5h". */
  duration?: { ms: number; span: Span };
  persist?: Name;
  resumeOn: PauseTrigger[];
  optionSpans: OptionSpans;
  span: Span;
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
  | UnsupportedExpr;

export interface NumberLiteral {
  kind: 'Number';
  value: number;
  span: Span;
}

export interface StringLiteralExpr {
  kind: 'String';
  value: string;
  span: Span;
}

export interface BooleanLiteral {
  kind: 'Boolean';
  value: boolean;
  span: Span;
}

export interface NullLiteral {
  kind: 'Null';
  span: Span;
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
  span: Span;
}

/** `.name` after a call, subscript or parenthesised expression: a field read, never a name lookup. */
export interface MemberExpr {
  kind: 'Member';
  object: Expr;
  property: string;
  span: Span;
}

export interface IndexExpr {
  kind: 'Index';
  object: Expr;
  index: Expr;
  span: Span;
}

export interface CallExpr {
  kind: 'Call';
  callee: Name;
  args: Expr[];
  span: Span;
}

export interface UnaryExpr {
  kind: 'Unary';
  operator: '-' | '+' | 'not';
  operand: Expr;
  span: Span;
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
  span: Span;
}

/** `x is T`: a runtime type test. */
export interface IsExpr {
  kind: 'Is';
  operand: Expr;
  type: Name;
  span: Span;
}

/** `c ? a : b`, and `if c then a else b`. */
export interface ConditionalExpr {
  kind: 'Conditional';
  test: Expr;
  consequent: Expr;
  alternate: Expr;
  span: Span;
}

export interface ArrayExpr {
  kind: 'Array';
  elements: Expr[];
  span: Span;
}

export type ObjectEntry =
  | { kind: 'Property'; key: Name; value: Expr; span: Span }
  | { kind: 'Spread'; value: Expr; span: Span };

export interface ObjectExpr {
  kind: 'Object';
  entries: ObjectEntry[];
  span: Span;
}

export interface MatchExprArm {
  /** `null` for the `_` wildcard. A plain identifier with a guard binds the subject (`s where s > 3`). */
  pattern: Expr | null;
  guard?: Expr;
  result: Expr;
  span: Span;
}

export interface MatchExpr {
  kind: 'MatchExpr';
  /** For a guard match (`match { cond => value, … }`) a `true` literal at the `match` keyword. */
  subject: Expr;
  arms: MatchExprArm[];
  /** `match { cond => value, … }`: no subject; the first arm whose condition is truthy wins. */
  guards?: true;
  span: Span;
}

/** `coll where cond`: the items of `coll` for which `cond` (the item as current record) is truthy. */
export interface WhereExpr {
  kind: 'Where';
  collection: Expr;
  condition: Expr;
  span: Span;
}

/** `any of coll` (a recorded random pick) or `any of coll where cond` (the first match). */
export interface AnyOfExpr {
  kind: 'AnyOf';
  collection: Expr;
  where?: Expr;
  span: Span;
}

/** Constructs the original parses but cannot evaluate (ranges, superposition, `^parent`). */
export interface UnsupportedExpr {
  kind: 'Unsupported';
  construct: 'range' | 'superposition' | 'parent-reference' | 'pipe';
  span: Span;
}
