/**
 * Steps (reference §C), dispatched on their first word: call, get/post/put/patch/delete (also
 * upper-case), for, map, apply, validate, store, match, let, wait, pause. These words are keywords
 * only here, at the start of a step. Step blocks recover per step (parser-core), so one broken
 * step gives one error and the steps after it still parse.
 */
import type {
  ApplyStep, ArmPattern, Directive, Expr, FieldMapping, ForStep, HttpMethod, MatchArm, MatchStep, Name, ObjectPattern, Step,
  StoreStep, StringLiteral, SubPattern, ValidateStep,
} from './ast.js';
import { ABORT, didYouMeanWord, listWords, type BlockRules, type Parser } from './parser-core.js';
import { parseExpr, parseExprBeforeWhere } from './parser-expr.js';
import {
  boolValue, intValue, parseFetchOptions, parseOptionBlock, parseRetryBlock, unknownKey, type OptionSet,
} from './parser-options.js';
import { parsePause, parseWait } from './parser-steps-suspend.js';
import { spanOf } from './ast.js';

const METHODS: Readonly<Record<string, HttpMethod>> = {
  get: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE',
  GET: 'GET', POST: 'POST', PUT: 'PUT', PATCH: 'PATCH', DELETE: 'DELETE',
};

const STEP_LIST = ['get', 'post', 'put', 'patch', 'delete', 'call', 'for', 'map', 'apply', 'validate', 'store', 'match', 'let', 'wait', 'pause'];
const DIRECTIVES: ReadonlySet<string> = new Set(['continue', 'skip', 'abort', 'retry', 'queue', 'jump']);
export const STEP_WORDS: ReadonlySet<string> = new Set([...STEP_LIST, ...DIRECTIVES, 'GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** Words that start a declaration or mission item: inside a step block they mean a missing "}". */
const DECLARATION_WORDS: ReadonlySet<string> = new Set([
  'action', 'run', 'source', 'schema', 'transform', 'schedule', 'checkpoint', 'trace', 'mission', 'import',
]);
const COLON_ITEMS: ReadonlySet<string> = new Set(['schedule', 'checkpoint', 'trace']);

/** The rules of a step block whose owner (named in messages) is described from `S`. */
function stepBlockRules<S>(describe: (owner: S) => string): BlockRules<S> {
  return {
    describe,
    item: (p) => p.add(parseStep(p)),
    isItemStart: (p, i) => p.isWordAt(i, STEP_WORDS),
    leaveOn: (p, t, owner) => {
      const text = p.textAt(t);
      if (!DECLARATION_WORDS.has(text)) return false;
      if (COLON_ITEMS.has(text) && p.peekKind() !== ':') return false;
      p.error('E2001', p.spanAt(t), `Expected "}" to close ${describe(owner)} but found "${text}"`, `add "}" before this \`${text}\``);
      return true;
    },
  };
}

const STEP_BLOCK = stepBlockRules((owner: string) => owner);
const ACTION_BODY = stepBlockRules((action: Name) => `action \`${action.name}\``);

/** `{ step … }`. `owner` names the block in messages, e.g. "the `for` body". */
export function parseStepBlock(p: Parser, owner: string): Step[] {
  const steps = p.mark();
  p.parseBlock(STEP_BLOCK, owner);
  return p.take(steps);
}

/** The body of action `action`: a step block named "action `Name`" in messages. */
export function parseActionBody(p: Parser, action: Name): Step[] {
  const steps = p.mark();
  p.parseBlock(ACTION_BODY, action);
  return p.take(steps);
}

export function parseStep(p: Parser): Step {
  const isWord = p.kind === 'Word';
  if (isWord) {
    const text = p.textAt(p.pos);
    // Own keys only: a step word like `constructor` must not find Object.prototype's.
    const method = Object.hasOwn(METHODS, text) ? METHODS[text] : undefined;
    if (method !== undefined) return parseFetch(p, method);
    if (text === 'fetch') {
      const early = parseEarlyFetch(p);
      if (early) return early;
    }
    switch (text) {
      case 'call': return parseCall(p);
      case 'for': return parseFor(p);
      case 'map': return parseMap(p);
      case 'apply': return parseApply(p);
      case 'validate': return parseValidate(p);
      case 'store': return parseStoreStep(p);
      case 'match': return parseMatchStep(p);
      case 'let': return parseLet(p);
      case 'wait': return parseWait(p);
      case 'pause': return parsePause(p);
    }
    if (DIRECTIVES.has(text)) {
      const directive = parseDirective(p);
      return { kind: 'Flow', directive, start: directive.start, end: directive.end };
    }
  }
  if (isWord && p.textAt(p.pos) === 'if') {
    // `if … then … else` is an expression here; a conditional block of steps is written with match.
    const t = p.pos;
    p.error(
      'E2004',
      p.spanAt(t),
      '`if` as a step (a conditional block of steps) is not supported',
      'branch with `match { COND => … }` in a `let`, or with `match x { _ where COND -> skip, _ -> continue }`; filter a loop with `for x in xs where COND`',
    );
    throw ABORT;
  }
  danglingOperator(p);
  const help = (isWord ? didYouMeanWord(p.textAt(p.pos), STEP_LIST) : undefined) ?? `a step starts with ${listWords(STEP_LIST)}`;
  return p.fail('E2004', 'a step', help);
}

/**
 * Operators that leave an expression waiting for its operand: at a line's end, the next line is
 * read as it. Not `then`/`else` (`jump Refresh then` / `retry` on the next line is a directive), nor
 * the separators and brackets of lists and objects, which also end lines of valid missions.
 */
const CONTINUES_EXPRESSION = new Set(['+', '-', '*', '/', '%', '^', '??', '==', '!=', '<', '<=', '>', '>=', '.', '?', '=']);
const CONTINUES_EXPRESSION_WORDS = new Set(['and', 'or', 'not', 'in', 'is', 'where']);

/**
 * `let total = a + b +` at a line's end took the next line's `store` as its operand, and the error
 * fell on that line's `{` ("Expected a step"): E2004 at the operator left dangling instead, when
 * the token that failed follows a step's word at the start of the next line.
 */
function danglingOperator(p: Parser): void {
  const word = p.pos - 1;
  const operator = p.pos - 2;
  if (operator < 0 || p.kindAt(word) !== 'Word' || !STEP_WORDS.has(p.textAt(word))) return;
  const kind = p.kindAt(operator);
  const dangles = kind === 'Word' ? CONTINUES_EXPRESSION_WORDS.has(p.textAt(operator)) : CONTINUES_EXPRESSION.has(kind);
  if (!dangles || !p.tokens.text.slice(p.endAt(operator), p.startAt(word)).includes('\n')) return;
  const shown = p.textAt(operator);
  p.error(
    'E2004',
    p.spanAt(operator),
    `The expression ends with \`${shown}\` at the end of its line, so \`${p.textAt(word)}\` on the next line was read as part of it`,
    `finish the expression after \`${shown}\`, or remove the \`${shown}\``,
  );
  throw ABORT;
}

function parseFetch(p: Parser, method: HttpMethod): Step {
  const start = p.startAt(p.advance());
  // `get Primary "/users"` (upstream's docs, "Named Source"): a name right before the path string
  // is the request's source. No path expression is a name followed by a string, so this reads
  // nothing else differently.
  const named = p.kind === 'Word' && p.peekKind() === 'String' ? p.expectName('a source name') : undefined;
  const path = parseExpr(p);
  // `get "/Invoices" from Xero { … }` (upstream's multi-source example): `source: Xero`.
  const from = p.eatWord('from') ? p.expectName('a source name (`get "/path" from Source`)') : undefined;
  const options = parseFetchOptions(p);
  for (const [given, how] of [[named, 'before the path'], [from, 'after `from`']] as const) {
    if (!given) continue;
    if (options.source) {
      p.error('E2014', given, `The source is given twice (\`${given.name}\` ${how} and \`${options.source.name}\`)`, 'remove one of them');
    } else {
      options.source = given;
    }
  }
  return { kind: 'Fetch', method, path, options, start, end: p.endFrom(start) };
}

/**
 * `fetch GET "/path" { … }` and `fetch Source.operationId { … }`: upstream's early request syntax
 * (reference, "very early history"), still in its docs and older examples. Not supported: E2004
 * names it and gives the form to write, and the step is read as that form so the rest is checked.
 * Anything else after `fetch` is left to the usual "expected a step".
 */
function parseEarlyFetch(p: Parser): Step | undefined {
  if (p.peekKind() !== 'Word') return undefined;
  const t = p.pos;
  const next = p.textAt(t + 1);
  const method = Object.hasOwn(METHODS, next) ? METHODS[next] : undefined;
  if (method !== undefined) {
    p.advance();
    const step = parseFetch(p, method);
    const path = step.kind === 'Fetch' && step.path.kind === 'String' ? JSON.stringify(step.path.value) : '"/path"';
    p.error('E2004', { start: p.startAt(t), end: p.endAt(t + 1) }, `\`fetch ${next} …\` is upstream's early request syntax and is not supported`, `write \`${method.toLowerCase()} ${path}\``);
    return step;
  }
  if (p.peekKind(2) === '.') {
    p.advance();
    const step = parseCallRest(p, p.startAt(t));
    const op = step.kind === 'Call' ? `${step.source.name}.${step.operation.name}` : 'Source.operationId';
    p.error('E2004', { start: p.startAt(t), end: step.kind === 'Call' ? step.operation.end : step.end }, `\`fetch ${op}\` is upstream's early request syntax and is not supported`, `write \`call ${op}\``);
    return step;
  }
  return undefined;
}

function parseCall(p: Parser): Step {
  return parseCallRest(p, p.startAt(p.advance()));
}

/** `Source.operationId { … }` after `call` (or the early `fetch`), from `start`. */
function parseCallRest(p: Parser, start: number): Step {
  const source = p.expectName('a source name (`call Source.operation`)');
  p.expect('.', 'write `call Source.operationId`');
  const operation = p.expectName('an operation id');
  const options = parseFetchOptions(p);
  return { kind: 'Call', source, operation, options, start, end: p.endFrom(start) };
}

function parseFor(p: Parser): ForStep {
  const start = p.startAt(p.advance());
  const variable = p.expectName('a loop variable name');
  p.expectWord('in', 'write `for item in collection { … }`');
  const collection = parseExprBeforeWhere(p);
  const where = p.eatWord('where') ? parseExpr(p) : undefined;
  let concurrency: number | undefined;
  if (p.eatWord('concurrency')) {
    const t = p.pos;
    concurrency = intValue(p, 'a concurrency limit');
    if (concurrency < 1) p.error('E2013', p.spanAt(t), 'Expected a concurrency of at least 1 but found "0"');
  }
  let onError: ForStep['onError'];
  if (p.atWord('onError')) {
    const onErrorStart = p.startAt(p.advance());
    const mode = p.pos;
    const isWord = p.kind === 'Word';
    const text = p.textAt(mode);
    if (isWord && (text === 'continue' || text === 'abort')) {
      p.advance();
      onError = { mode: text, start: onErrorStart, end: p.endFrom(onErrorStart) };
    } else if (isWord && text === 'queue') {
      p.advance();
      const store = p.expectName('a store name after `queue`');
      onError = { mode: 'queue', store, start: onErrorStart, end: p.endFrom(onErrorStart) };
    } else {
      const modes = ['continue', 'abort', 'queue'];
      const help = isWord ? didYouMeanWord(text, modes) : undefined;
      p.error('E2007', p.spanAt(mode), `Expected an error mode (${listWords(modes)}) but found ${p.describe(mode)}`, help);
      throw ABORT;
    }
  }
  if (p.kind === 'Word') forClauseError(p);
  const body = parseStepBlock(p, 'the `for` body');
  // Optional fields are in the literal (undefined when absent; JSON and the goldens omit them):
  // see "One literal per node" in parser-core.ts.
  return { kind: 'For', variable, collection, body, start, end: p.endFrom(start), where, concurrency, onError };
}

const FOR_CLAUSES = ['where', 'concurrency', 'onError'];
/** Words people write for a loop's concurrency (`parallel 4`, JavaScript's and other engines'). */
const CONCURRENCY_WORDS = new Set(['parallel', 'concurrent', 'concurrently', 'async', 'workers', 'batch']);

/** A word where a `for` loop's body should begin: what may come there, and in which order. */
function forClauseError(p: Parser): never {
  const text = p.textAt(p.pos);
  const help = CONCURRENCY_WORDS.has(text)
    ? 'a loop runs several iterations at a time with `concurrency N`: `for x in xs concurrency 4 { … }`'
    : FOR_CLAUSES.includes(text)
      ? 'after the collection come `where …`, `concurrency N` and `onError …`, in that order, then the body in braces'
      : (didYouMeanWord(text, FOR_CLAUSES) ?? 'after the collection may come `where …`, `concurrency N` and `onError …`, then the body in braces');
  return p.fail('E2001', '"{"', help);
}

/** The rules of a field block whose owner (named in messages) is described from `S`. */
export function fieldBlockRules<S>(describe: (owner: S) => string): BlockRules<S> {
  return {
    describe,
    item: (p) => {
      const key = p.pos;
      const kind = p.kind;
      if (kind !== 'Word' && kind !== 'String') p.fail('E2001', 'a field name or "}"');
      p.advance();
      if (!p.eat(':')) p.expect(':', `write \`${p.valueAt(key)}: expression\``); // help built on failure only
      const value = parseExpr(p);
      const field: FieldMapping = { name: { name: p.valueAt(key), start: p.startAt(key), end: p.endAt(key) }, value, start: p.startAt(key), end: p.endFrom(p.startAt(key)) };
      p.add(field);
    },
    isItemStart: (p, i) => p.isKeyAt(i),
  };
}

const MAP_FIELDS = fieldBlockRules((schema: Name) => `\`map … -> ${schema.name}\``);

/** `{ name: expr, … }` as in `map` and transforms; field names are any word or a string. */
export function parseFieldBlock<S>(p: Parser, rules: BlockRules<S>, owner: S): FieldMapping[] {
  const fields = p.mark();
  p.parseBlock(rules, owner);
  return p.take(fields);
}

function parseMap(p: Parser): Step {
  const start = p.startAt(p.advance());
  const source = parseExpr(p);
  p.expect('->', 'write `map source -> Schema { field: expr }`');
  const schema = p.expectName('a schema name');
  if (!p.at('{')) {
    // `map { … } -> report` then `validate report` (upstream's payment example): a map names no
    // variable, and without fields it computes nothing. Say so, with the forms that do.
    const what = source.kind === 'Object' ? `\`map { … } -> ${schema.name}\`` : `\`map … -> ${schema.name}\``;
    p.error(
      'E2001',
      { start, end: schema.end },
      `${what} with no field block is not supported: a map builds the record its \`{ field: expr }\` block lists, and names no variable`,
      source.kind === 'Object'
        ? `to name the object, write \`let ${schema.name} = { … }\`; to build a record, write \`map source -> ${schema.name} { field: expr }\``
        : `write \`map source -> ${schema.name} { field: expr }\``,
    );
    return { kind: 'Map', source, schema, fields: [], start, end: p.endFrom(start) };
  }
  const fields = parseFieldBlock(p, MAP_FIELDS, schema);
  return { kind: 'Map', source, schema, fields, start, end: p.endFrom(start) };
}

function parseApply(p: Parser): ApplyStep {
  const start = p.startAt(p.advance());
  const transform = p.expectName('a transform name');
  p.expectWord('to', 'write `apply Transform to value`');
  const target = parseExpr(p);
  const as = p.eatWord('as') ? p.expectName('a variable name after `as`') : undefined;
  return { kind: 'Apply', transform, target, start, end: p.endFrom(start), as };
}

function parseValidate(p: Parser): ValidateStep {
  const keyword = p.advance();
  const start = p.startAt(keyword);
  // `validate { assume … }` (upstream's docs): no target is the current response, as `validate
  // response { … }` — not an object literal, whose `{ assume … }` has no `:` after its first name.
  const targetless = p.at('{') && p.isWord(p.peekIndex(1), 'assume') && p.kindAt(p.peekIndex(2)) !== ':';
  const target: Expr = targetless ? { kind: 'Ref', parts: p.singleName('response'), leadingDot: false, start, end: p.endAt(keyword) } : parseExpr(p);
  if (p.atWord('as') && p.peekKind() === 'Word') {
    // `validate response as Invoice { … }` (upstream's docs): no such form; one error, then the block as usual.
    const as = p.advance();
    const schema = p.advance();
    p.error(
      'E2001',
      { start: p.startAt(as), end: p.endAt(schema) },
      `\`validate … as ${p.textAt(schema)}\` is not supported: \`validate\` checks its \`assume\` conditions only`,
      `test the schema with a match: \`match response { ${p.textAt(schema)} -> continue, _ -> abort "not a valid ${p.textAt(schema)}" }\`, and validate without \`as\``,
    );
  }
  const list = p.mark();
  p.parseBlock(CONSTRAINTS, undefined);
  const constraints = p.take<ValidateStep['constraints'][number]>(list);
  let fallback: Step[] | undefined;
  if (p.atWord('or') && p.peekKind() === '{') {
    p.advance();
    fallback = parseStepBlock(p, 'the `validate … or` block');
  }
  return { kind: 'Validate', target, constraints, start, end: p.endFrom(start), fallback };
}
const ASSUME: ReadonlySet<string> = new Set(['assume']);

const CONSTRAINTS: BlockRules<undefined> = {
  describe: () => 'the `validate` block',
  item: (p) => {
    const at = p.startAt(p.expectWord('assume', 'each constraint is written `assume condition`'));
    const condition = parseExpr(p);
    const constraint: ValidateStep['constraints'][number] = { condition, start: at, end: p.endFrom(at) };
    p.add(constraint);
  },
  isItemStart: (p, i) => p.isWordAt(i, ASSUME),
};

function parseStoreStep(p: Parser): StoreStep {
  const start = p.startAt(p.advance());
  const each = p.atWord('each') && p.peekKind() !== '->';
  if (each) p.advance();
  const source = parseExpr(p);
  p.expect('->', 'write `store value -> storeName`');
  const store = p.expectName('a store name');
  const step: StoreStep = {
    kind: 'Store', each, source, store, optionSpans: {}, start, end: p.endFrom(start), key: undefined, partial: undefined, upsert: undefined,
  };
  if (p.at('{')) parseOptionBlock(p, STORE_OPTIONS, step, step.optionSpans);
  step.end = p.endFrom(start);
  return step;
}

const STORE_OPTIONS: OptionSet<StoreStep, 'key' | 'partial' | 'upsert'> = {
  context: 'store',
  keys: ['key', 'partial', 'upsert'],
  parse(p, key, step) {
    switch (key) {
      case 'key': step.key = parseExpr(p); return;
      case 'partial': step.partial = boolValue(p); return;
      case 'upsert': step.upsert = boolValue(p); return;
      default: unknownKey(key);
    }
  },
};

function parseLet(p: Parser): Step {
  const start = p.startAt(p.advance());
  const name = p.expectName('a variable name');
  if (!p.eat('=')) p.expect('=', `write \`let ${name.name} = expression\``); // help built on failure only
  const value = parseExpr(p);
  return { kind: 'Let', name, value, start, end: p.endFrom(start) };
}

function parseMatchStep(p: Parser): MatchStep {
  const start = p.startAt(p.advance());
  const subject = parseExpr(p);
  const list = p.mark();
  // `match x { }` matched nothing and carried on, where the grammar asks for at least one arm.
  if (p.at('{') && p.kindAt(p.pos + 1) === '}') {
    p.error('E2001', { start: p.startAt(p.pos), end: p.endAt(p.pos + 1) }, 'Expected a match arm but found "}": a `match` has at least one arm', 'write its arms: `match x { Pattern -> …, _ -> skip }`');
  }
  p.parseBlock(MATCH_ARMS, undefined);
  return { kind: 'Match', subject, arms: p.take<MatchArm>(list), start, end: p.endFrom(start) };
}

const MATCH_ARMS: BlockRules<undefined> = {
  describe: () => 'the `match` arms',
  item: (p) => p.add(parseArm(p)),
  // Arms are found again after an error by the comma that usually separates them.
  isItemStart: (p, i) => i > 0 && p.kindAt(i - 1) === ',',
};

function parseArm(p: Parser): MatchArm {
  const start = p.start;
  const pattern = parsePattern(p);
  const guard = p.eatWord('where') ? parseExpr(p) : undefined;
  p.expect('->', 'a match arm is written `Pattern -> directive`, `Pattern -> { steps }` or `Pattern -> step`');
  let body: MatchArm['body'];
  if (p.at('{')) {
    body = { kind: 'Steps', steps: parseStepBlock(p, 'the match arm') };
  } else if (p.isWordAt(p.pos, DIRECTIVES)) {
    body = { kind: 'Directive', directive: parseDirective(p) };
  } else {
    p.enter();
    body = { kind: 'Steps', steps: [parseStep(p)] };
    p.depth--;
  }
  return { pattern, body, start, end: p.endFrom(start), guard };
}

function parsePattern(p: Parser): ArmPattern {
  const t = p.pos;
  const kind = p.kind;
  if (kind === 'Word') {
    p.advance();
    const text = p.textAt(t);
    const start = p.startAt(t);
    const end = p.endAt(t);
    if (text === '_') return { kind: 'Wildcard', start, end };
    return { kind: 'SchemaPattern', schema: { name: text, start, end }, start, end };
  }
  if (kind === '[') {
    p.advance();
    if (p.at('Number')) return parseStatusList(p, t);
    if (p.eat(']')) return { kind: 'EmptyArrayPattern', start: p.startAt(t), end: p.endFrom(p.startAt(t)) };
    const schema = p.expectName('a schema name inside "[ ]"');
    p.expect(']');
    return { kind: 'SchemaArrayPattern', schema, start: p.startAt(t), end: p.endFrom(p.startAt(t)) };
  }
  if (kind === 'Number') {
    const status = intValue(p, 'an HTTP status code');
    return { kind: 'StatusPattern', status, start: p.startAt(t), end: p.endAt(t) };
  }
  if (kind === '{') return parseObjectPattern(p);
  const help =
    kind === 'String' || kind === '-'
      ? 'a match step compares no values in its arms: bind the subject and test it, `v where v == "paid" ->`, or match the record with an object pattern, `{ status: "paid" } ->`'
      : undefined;
  return p.fail('E2001', 'a match pattern (`_`, a schema name, `[Schema]`, `[]`, a status code or `{ key: pattern }`)', help);
}

/** `[200, 201]` after its `[`: one or more status codes. */
function parseStatusList(p: Parser, open: number): ArmPattern {
  const statuses = p.mark();
  for (;;) {
    const t = p.pos;
    p.add({ status: intValue(p, 'an HTTP status code'), start: p.startAt(t), end: p.endAt(t) });
    if (p.eat(']')) break;
    if (!p.eat(',')) p.fail('E2001', '"," or "]"', 'statuses are separated by commas: `[200, 201]`');
  }
  return { kind: 'StatusListPattern', statuses: p.take(statuses), start: p.startAt(open), end: p.endFrom(p.startAt(open)) };
}

const SUB_PATTERN = 'a sub-pattern (`_`, a literal, a variable name, `[]`, `[name]` or `{ key: pattern }`)';

/** `{ key: sub, "quoted key": sub, … }`; a key given twice is E2014. */
function parseObjectPattern(p: Parser): ObjectPattern {
  const start = p.startAt(p.advance());
  const fields = p.mark();
  const seen = new Set<string>();
  while (!p.at('}')) {
    const k = p.pos;
    if (p.kind !== 'Word' && p.kind !== 'String') p.fail('E2001', 'a key or "}"', 'an object pattern is written `{ key: pattern, … }`');
    p.advance();
    const key = p.kindAt(k) === 'String' ? p.valueAt(k) : p.textAt(k);
    const keySpan = p.spanAt(k);
    if (seen.has(key)) p.error('E2014', keySpan, `Key \`${key}\` is given twice in this pattern`, 'remove one of them');
    seen.add(key);
    p.expect(':', `write \`${key}: _\``);
    p.add({ key, keySpan, value: parseSubPattern(p) });
    if (p.at('}')) break;
    if (!p.eat(',')) p.fail('E2001', '"," or "}"', 'keys of an object pattern are separated by commas');
  }
  p.advance();
  return { kind: 'ObjectPattern', fields: p.take(fields), start, end: p.endFrom(start) };
}

function parseSubPattern(p: Parser): SubPattern {
  const t = p.pos;
  const span = { start: p.startAt(t), end: p.endAt(t) }; // object patterns are rare: a temporary here costs nothing
  switch (p.kind) {
    case '{':
      return parseObjectPattern(p);
    case '[': {
      p.advance();
      if (p.eat(']')) return { kind: 'EmptyList', start: span.start, end: p.endFrom(span.start) };
      const name = p.expectName('a name inside "[ ]" (`[item]` binds the one item of a list, `[Schema]` tests every item)');
      p.expect(']', 'a list sub-pattern holds one name: `[item]` or `[Schema]`');
      return { kind: 'List', name, start: span.start, end: p.endFrom(span.start) };
    }
    case 'String':
      p.advance();
      return { kind: 'Literal', value: p.valueAt(t), start: span.start, end: span.end };
    case 'Number':
      p.advance();
      return { kind: 'Literal', value: p.numberAt(t), start: span.start, end: span.end };
    case '-': {
      p.advance();
      if (!p.at('Number')) p.fail('E2001', 'a number after "-"');
      const n = p.advance();
      return { kind: 'Literal', value: -p.numberAt(n), start: span.start, end: p.endFrom(span.start) };
    }
    case 'Word': {
      p.advance();
      const text = p.textAt(t);
      if (text === '_') return { kind: 'Present', start: span.start, end: span.end };
      if (text === 'true' || text === 'false') return { kind: 'Literal', value: text === 'true', start: span.start, end: span.end };
      if (text === 'null') return { kind: 'Literal', value: null, start: span.start, end: span.end };
      return { kind: 'Bind', name: { name: text, start: span.start, end: span.end }, start: span.start, end: span.end };
    }
    default:
      return p.fail('E2001', SUB_PATTERN);
  }
}

/** Tokens after `abort` that cannot begin its message: the arm or block goes on. */
const NOT_A_MESSAGE: ReadonlySet<string> = new Set([',', '}', ']', ')', '->', '=>', 'EOF']);

function abortMessageFollows(p: Parser): boolean {
  if (NOT_A_MESSAGE.has(p.kind)) return false;
  return !p.tokens.text.slice(p.prevEnd, p.start).includes('\n');
}

/** A string followed by one of these is the start of an expression (`"Failed: " + e`). */
function startsOperator(kind: string): boolean {
  return kind === '+' || kind === '?' || kind === '??' || kind === '==' || kind === '!=';
}

interface QueueBlock {
  item: Expr | undefined;
  key: Expr | undefined;
}

const QUEUE_OPTIONS: OptionSet<QueueBlock, 'item' | 'key'> = {
  context: 'queue',
  keys: ['item', 'key'],
  parse(p, key, q) {
    switch (key) {
      case 'item': q.item = parseExpr(p); return;
      case 'key': q.key = parseExpr(p); return;
      default: unknownKey(key);
    }
  },
};

function parseDirective(p: Parser): Directive {
  const t = p.advance();
  const start = p.startAt(t);
  switch (p.textAt(t)) {
    case 'continue':
      return { kind: 'Continue', start, end: p.endAt(t) };
    case 'skip':
      return { kind: 'Skip', start, end: p.endAt(t) };
    case 'abort': {
      let message: StringLiteral | undefined;
      let messageExpr: Expr | undefined;
      if (p.at('String') && !startsOperator(p.peekKind())) message = p.expectString('a message');
      // `abort e`, `abort response.error` (upstream's docs): an expression on the same line; a
      // word on the next line is the next step, as after a bare `abort` before.
      else if (abortMessageFollows(p)) messageExpr = parseExpr(p);
      return { kind: 'Abort', start, end: p.endFrom(start), message, messageExpr };
    }
    case 'retry': {
      const config = p.at('{') ? parseRetryBlock(p) : undefined;
      return { kind: 'Retry', start, end: p.endFrom(start), config };
    }
    case 'queue': {
      // `queue dlq` names a store; a word followed by `->` or `where` is the next arm's pattern.
      const named = p.at('Word') && p.peekKind() !== '->' && !p.isWord(p.peekIndex(), 'where');
      const store = named ? p.expectName('a store name') : undefined;
      // `queue dlq { item: { … }, key: … }` (upstream's docs): the record and its key. Only a `{`
      // on the store's line: one on the next line is the next arm's object pattern.
      const q: QueueBlock = { item: undefined, key: undefined };
      if (store && p.at('{') && !p.tokens.text.slice(p.prevEnd, p.start).includes('\n')) {
        parseOptionBlock(p, QUEUE_OPTIONS, q, {});
      }
      return { kind: 'Queue', start, end: p.endFrom(start), store, item: q.item, key: q.key };
    }
    default: { // jump
      const action = p.expectName('an action name after `jump`');
      let then: 'retry' | 'continue' | undefined;
      if (p.eatWord('then')) {
        const at = p.pos;
        const text = p.textAt(at);
        if (p.kind !== 'Word' || (text !== 'retry' && text !== 'continue')) {
          p.error('E2007', p.spanAt(at), `Expected \`retry\` or \`continue\` after \`jump … then\` but found ${p.describe(at)}`);
          throw ABORT;
        }
        p.advance();
        then = text;
      }
      return { kind: 'Jump', action, start, end: p.endFrom(start), then };
    }
  }
}
