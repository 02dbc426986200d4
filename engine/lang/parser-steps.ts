/**
 * Steps (reference §C), dispatched on their first word: call, get/post/put/patch/delete (also
 * upper-case), for, map, apply, validate, store, match, let, wait, pause. These words are keywords
 * only here, at the start of a step. Step blocks recover per step (parser-core), so one broken
 * step gives one error and the steps after it still parse.
 */
import type {
  ApplyStep, ArmPattern, Directive, FieldMapping, ForStep, HttpMethod, MatchArm, MatchStep, Step,
  StoreStep, ValidateStep,
} from './ast.js';
import { ABORT, didYouMeanWord, listWords, type Parser } from './parser-core.js';
import { parseExpr } from './parser-expr.js';
import { boolValue, intValue, parseFetchOptions, parseOptionBlock, parseRetryBlock } from './parser-options.js';
import { parsePause, parseWait } from './parser-steps-suspend.js';
import { describeToken } from './token.js';

const METHODS: Readonly<Record<string, HttpMethod>> = {
  get: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE',
  GET: 'GET', POST: 'POST', PUT: 'PUT', PATCH: 'PATCH', DELETE: 'DELETE',
};

const STEP_LIST = ['get', 'post', 'put', 'patch', 'delete', 'call', 'for', 'map', 'apply', 'validate', 'store', 'match', 'let', 'wait', 'pause'];
export const STEP_WORDS: ReadonlySet<string> = new Set([...STEP_LIST, 'GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** Words that start a declaration or mission item: inside a step block they mean a missing "}". */
const DECLARATION_WORDS: ReadonlySet<string> = new Set([
  'action', 'run', 'source', 'schema', 'transform', 'schedule', 'checkpoint', 'trace', 'mission', 'import',
]);
const COLON_ITEMS: ReadonlySet<string> = new Set(['schedule', 'checkpoint', 'trace']);

/** `{ step … }`. `owner` names the block in messages, e.g. "action `Load`". */
export function parseStepBlock(p: Parser, owner: string): Step[] {
  const steps: Step[] = [];
  p.parseBlock(
    owner,
    () => steps.push(parseStep(p)),
    (i) => p.isWordAt(i, STEP_WORDS),
    (t) => {
      if (t.kind !== 'Word' || !DECLARATION_WORDS.has(t.text)) return false;
      if (COLON_ITEMS.has(t.text) && p.peek().kind !== ':') return false;
      p.error('E2001', t.span, `Expected "}" to close ${owner} but found "${t.text}"`, `add "}" before this \`${t.text}\``);
      return true;
    },
  );
  return steps;
}

export function parseStep(p: Parser): Step {
  const t = p.tok;
  if (t.kind === 'Word') {
    const method = METHODS[t.text];
    if (method !== undefined) return parseFetch(p, method);
    switch (t.text) {
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
  }
  const help = (t.kind === 'Word' ? didYouMeanWord(t.text, STEP_LIST) : undefined) ?? `a step starts with ${listWords(STEP_LIST)}`;
  return p.fail('E2004', 'a step', help);
}

function parseFetch(p: Parser, method: HttpMethod): Step {
  const start = p.advance().span.start;
  const path = parseExpr(p);
  const options = parseFetchOptions(p);
  return { kind: 'Fetch', method, path, options, span: p.span(start) };
}

function parseCall(p: Parser): Step {
  const start = p.advance().span.start;
  const source = p.expectName('a source name (`call Source.operation`)');
  p.expect('.', 'write `call Source.operationId`');
  const operation = p.expectName('an operation id');
  const options = parseFetchOptions(p);
  return { kind: 'Call', source, operation, options, span: p.span(start) };
}

function parseFor(p: Parser): ForStep {
  const start = p.advance().span.start;
  const variable = p.expectName('a loop variable name');
  p.expectWord('in', 'write `for item in collection { … }`');
  const collection = parseExpr(p);
  const step: ForStep = { kind: 'For', variable, collection, body: [], span: p.span(start) };
  if (p.eatWord('where')) step.where = parseExpr(p);
  if (p.eatWord('concurrency')) {
    const t = p.tok;
    step.concurrency = intValue(p, 'a concurrency limit');
    if (step.concurrency < 1) p.error('E2013', t.span, 'Expected a concurrency of at least 1 but found "0"');
  }
  if (p.atWord('onError')) {
    const onErrorStart = p.advance().span.start;
    const mode = p.tok;
    if (mode.kind === 'Word' && (mode.text === 'continue' || mode.text === 'abort')) {
      p.advance();
      step.onError = { mode: mode.text, span: p.span(onErrorStart) };
    } else if (mode.kind === 'Word' && mode.text === 'queue') {
      p.advance();
      const store = p.expectName('a store name after `queue`');
      step.onError = { mode: 'queue', store, span: p.span(onErrorStart) };
    } else {
      const modes = ['continue', 'abort', 'queue'];
      const help = mode.kind === 'Word' ? didYouMeanWord(mode.text, modes) : undefined;
      p.error('E2007', mode.span, `Expected an error mode (${listWords(modes)}) but found ${describeToken(mode)}`, help);
      throw ABORT;
    }
  }
  step.body = parseStepBlock(p, 'the `for` body');
  step.span = p.span(start);
  return step;
}

/** `{ name: expr, … }` as in `map` and transforms; field names are any word or a string. */
export function parseFieldBlock(p: Parser, owner: string): FieldMapping[] {
  const fields: FieldMapping[] = [];
  p.parseBlock(
    owner,
    () => {
      const key = p.tok;
      if (key.kind !== 'Word' && key.kind !== 'String') p.fail('E2001', 'a field name or "}"');
      p.advance();
      p.expect(':', `write \`${key.value}: expression\``);
      const value = parseExpr(p);
      fields.push({ name: { name: key.value, span: key.span }, value, span: p.span(key.span.start) });
    },
    (i) => p.isKeyAt(i),
  );
  return fields;
}

function parseMap(p: Parser): Step {
  const start = p.advance().span.start;
  const source = parseExpr(p);
  p.expect('->', 'write `map source -> Schema { field: expr }`');
  const schema = p.expectName('a schema name');
  const fields = parseFieldBlock(p, `\`map … -> ${schema.name}\``);
  return { kind: 'Map', source, schema, fields, span: p.span(start) };
}

function parseApply(p: Parser): ApplyStep {
  const start = p.advance().span.start;
  const transform = p.expectName('a transform name');
  p.expectWord('to', 'write `apply Transform to value`');
  const target = parseExpr(p);
  const step: ApplyStep = { kind: 'Apply', transform, target, span: p.span(start) };
  if (p.eatWord('as')) step.as = p.expectName('a variable name after `as`');
  step.span = p.span(start);
  return step;
}

function parseValidate(p: Parser): ValidateStep {
  const start = p.advance().span.start;
  const target = parseExpr(p);
  const step: ValidateStep = { kind: 'Validate', target, constraints: [], span: p.span(start) };
  p.parseBlock(
    'the `validate` block',
    () => {
      const at = p.expectWord('assume', 'each constraint is written `assume condition`').span.start;
      const condition = parseExpr(p);
      step.constraints.push({ condition, span: p.span(at) });
    },
    (i) => p.isWordAt(i, ASSUME),
  );
  if (p.atWord('or') && p.peek().kind === '{') {
    p.advance();
    step.fallback = parseStepBlock(p, 'the `validate … or` block');
  }
  step.span = p.span(start);
  return step;
}
const ASSUME: ReadonlySet<string> = new Set(['assume']);

function parseStoreStep(p: Parser): StoreStep {
  const start = p.advance().span.start;
  const each = p.atWord('each') && p.peek().kind !== '->';
  if (each) p.advance();
  const source = parseExpr(p);
  p.expect('->', 'write `store value -> storeName`');
  const store = p.expectName('a store name');
  const step: StoreStep = { kind: 'Store', each, source, store, optionSpans: {}, span: p.span(start) };
  if (p.at('{')) {
    parseOptionBlock(
      p,
      'store',
      {
        key: () => (step.key = parseExpr(p)),
        partial: () => (step.partial = boolValue(p)),
        upsert: () => (step.upsert = boolValue(p)),
      },
      step.optionSpans,
    );
  }
  step.span = p.span(start);
  return step;
}

function parseLet(p: Parser): Step {
  const start = p.advance().span.start;
  const name = p.expectName('a variable name');
  p.expect('=', `write \`let ${name.name} = expression\``);
  const value = parseExpr(p);
  return { kind: 'Let', name, value, span: p.span(start) };
}

function parseMatchStep(p: Parser): MatchStep {
  const start = p.advance().span.start;
  const subject = parseExpr(p);
  const step: MatchStep = { kind: 'Match', subject, arms: [], span: p.span(start) };
  // Arms are found again after an error by the comma that usually separates them.
  p.parseBlock('the `match` arms', () => step.arms.push(parseArm(p)), (i) => p.tokens[i - 1]?.kind === ',');
  step.span = p.span(start);
  return step;
}

const DIRECTIVES: ReadonlySet<string> = new Set(['continue', 'skip', 'abort', 'retry', 'queue', 'jump']);

function parseArm(p: Parser): MatchArm {
  const start = p.tok.span.start;
  const pattern = parsePattern(p);
  const arm: MatchArm = { pattern, body: { kind: 'Steps', steps: [] }, span: pattern.span };
  if (p.eatWord('where')) arm.guard = parseExpr(p);
  p.expect('->', 'a match arm is written `Pattern -> directive`, `Pattern -> { steps }` or `Pattern -> step`');
  const t = p.tok;
  if (t.kind === '{') {
    arm.body = { kind: 'Steps', steps: parseStepBlock(p, 'the match arm') };
  } else if (t.kind === 'Word' && DIRECTIVES.has(t.text)) {
    arm.body = { kind: 'Directive', directive: parseDirective(p) };
  } else {
    p.enter();
    arm.body = { kind: 'Steps', steps: [parseStep(p)] };
    p.depth--;
  }
  arm.span = p.span(start);
  return arm;
}

function parsePattern(p: Parser): ArmPattern {
  const t = p.tok;
  if (t.kind === 'Word') {
    p.advance();
    if (t.text === '_') return { kind: 'Wildcard', span: t.span };
    return { kind: 'SchemaPattern', schema: { name: t.text, span: t.span }, span: t.span };
  }
  if (t.kind === '[') {
    p.advance();
    const schema = p.expectName('a schema name inside "[ ]"');
    p.expect(']');
    return { kind: 'SchemaArrayPattern', schema, span: p.span(t.span.start) };
  }
  if (t.kind === 'Number') {
    const status = intValue(p, 'an HTTP status code');
    return { kind: 'StatusPattern', status, span: t.span };
  }
  return p.fail('E2001', 'a match pattern (`_`, a schema name, `[Schema]` or a status code)');
}

function parseDirective(p: Parser): Directive {
  const t = p.advance();
  const span = t.span;
  switch (t.text) {
    case 'continue':
      return { kind: 'Continue', span };
    case 'skip':
      return { kind: 'Skip', span };
    case 'abort': {
      const d: Directive = { kind: 'Abort', span };
      if (p.at('String')) d.message = p.expectString('a message');
      d.span = p.span(span.start);
      return d;
    }
    case 'retry': {
      const d: Directive = { kind: 'Retry', span };
      if (p.at('{')) d.config = parseRetryBlock(p);
      d.span = p.span(span.start);
      return d;
    }
    case 'queue': {
      const d: Directive = { kind: 'Queue', span };
      // `queue dlq` names a store; a word followed by `->` or `where` is the next arm's pattern.
      if (p.at('Word') && p.peek().kind !== '->' && !(p.peek().kind === 'Word' && p.peek().text === 'where')) {
        d.store = p.expectName('a store name');
      }
      d.span = p.span(span.start);
      return d;
    }
    default: { // jump
      const action = p.expectName('an action name after `jump`');
      const d: Directive = { kind: 'Jump', action, span };
      if (p.eatWord('then')) {
        const then = p.tok;
        if (then.kind !== 'Word' || (then.text !== 'retry' && then.text !== 'continue')) {
          p.error('E2007', then.span, `Expected \`retry\` or \`continue\` after \`jump … then\` but found ${describeToken(then)}`);
          throw ABORT;
        }
        p.advance();
        d.then = then.text;
      }
      d.span = p.span(span.start);
      return d;
    }
  }
}
