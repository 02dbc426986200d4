/**
 * Expressions (reference §D.1), lowest precedence first:
 *   ternary `?:`  →  `??`  →  `or`  →  `and`  →  `not`  →  `|` (unsupported)  →  comparisons with a
 *   trailing `is T` / `in x`  →  `..` (unsupported)  →  `+ -`  →  `* / %`  →  unary `- + ^`  →
 *   postfix call / `.name` / `[i]`  →  primary.
 * Invariant: forms the original parses but cannot evaluate (pipes, superposition, ranges, `^x`)
 * become `UnsupportedExpr` plus one E2011 error — never a crash. Every recursion passes through
 * `parseUnary`, which counts depth, so deep nesting gives one E2012 instead of a stack overflow.
 * Chains parse in loops but build trees as deep as they are long (`1 + 1 + …`, `a[0][0]…`,
 * `x ?? y ?? …`), and the checker and the evaluator walk trees recursively: each link of a chain
 * counts as a level too (`link`), restored when the chain ends.
 *
 * Most operands stand alone (`x`, `"a"`, `f(y)`), so `parseNullish` reads the first operand
 * itself and returns it when no binary operator follows; otherwise it hands it to the levels
 * as their leftmost operand (`first`), which gives the same tree as descending through them.
 */
import type { BinaryOperator, Expr, MatchExprArm, Name, ObjectEntry } from './ast.js';
import { ABORT, type Parser } from './parser-core.js';
import { spanOf } from './ast.js';

export function parseExpr(p: Parser): Expr {
  const depth = p.depth;
  const filters = !p.noFilter;
  p.noFilter = false;
  let expr = parseNullish(p);
  if (p.at('?')) {
    link(p);
    const mark = p.advance();
    // `a?.b` (JavaScript's optional chaining) reads here as `a ? .b` with no `: else`.
    const chaining = p.kindAt(mark + 1) === '.' && p.startAt(mark + 1) === p.endAt(mark);
    const consequent = parseExpr(p);
    if (chaining && !p.at(':')) {
      p.error('E2011', { start: p.startAt(mark), end: p.endAt(mark + 1) }, 'Reqon has no optional chaining `?.`', 'a field of null or of an absent value is absent already: write `a.b` (and `a.b ?? fallback` for a default)');
      throw ABORT;
    }
    p.expect(':', 'a conditional is written `test ? then : else`');
    p.noFilter = !filters;
    const alternate = parseExpr(p);
    expr = { kind: 'Conditional', test: expr, consequent, alternate, start: expr.start, end: p.endFrom(expr.start) };
  }
  // `coll where cond` (a filter, lowest precedence): `let vips = customers where .tier == "vip"`.
  while (filters && atWordOp(p, 'where')) {
    link(p);
    p.advance();
    const condition = parseExpr(p);
    expr = { kind: 'Where', collection: expr, condition, start: expr.start, end: p.endFrom(expr.start) };
  }
  p.depth = depth;
  return expr;
}

/** One more link of a chain: its node nests the tree one level deeper (see the header). */
function link(p: Parser): void {
  p.enter();
}

/** An expression that a `where` of the enclosing construct follows (see Parser.noFilter). */
export function parseExprBeforeWhere(p: Parser): Expr {
  p.noFilter = true;
  return parseExpr(p);
}

function binary(p: Parser, operator: BinaryOperator, left: Expr, right: Expr): Expr {
  return { kind: 'Binary', operator, left, right, start: left.start, end: p.endFrom(left.start) };
}

/** A word operator, unless it is really the key of the next `key: value` entry. */
function atWordOp(p: Parser, word: string): boolean {
  return p.atWord(word) && p.peekKind() !== ':';
}

function parseNullish(p: Parser): Expr {
  let first: Expr | undefined;
  if (!atWordOp(p, 'not')) {
    first = parseUnary(p);
    if (!atBinaryOperator(p)) return first;
  }
  const depth = p.depth;
  let left = parseOr(p, first);
  while (p.at('??')) {
    link(p);
    p.advance();
    left = binary(p, '??', left, parseOr(p));
  }
  p.depth = depth;
  return left;
}

/**
 * The current token continues an operand as a binary operator of some level below `?:` (what
 * every level from `??` down to `* / %` would look for). `not` only starts an operand.
 */
function atBinaryOperator(p: Parser): boolean {
  switch (p.kind) {
    case '??': case '|': case '..':
    case '==': case '!=': case '<': case '>': case '<=': case '>=':
    case '+': case '-': case '*': case '/': case '%':
      return true;
    case 'Word': {
      if (p.peekKind() === ':') return false;
      const word = p.textAt(p.pos);
      return word === 'or' || word === 'and' || word === 'is' || word === 'in' || INFIX_CALLS.has(word);
    }
    default:
      return false;
  }
}

// Each level takes an optional `first`: its leftmost operand, already parsed (see the header).

function parseOr(p: Parser, first?: Expr): Expr {
  const depth = p.depth;
  let left = parseAnd(p, first);
  while (atWordOp(p, 'or')) {
    link(p);
    p.advance();
    left = binary(p, 'or', left, parseAnd(p));
  }
  p.depth = depth;
  return left;
}

function parseAnd(p: Parser, first?: Expr): Expr {
  const depth = p.depth;
  let left = parseNot(p, first);
  while (atWordOp(p, 'and')) {
    link(p);
    p.advance();
    left = binary(p, 'and', left, parseNot(p));
  }
  p.depth = depth;
  return left;
}

function parseNot(p: Parser, first?: Expr): Expr {
  if (first !== undefined || !atWordOp(p, 'not')) return parseBar(p, first);
  const start = p.startAt(p.advance());
  p.enter();
  const operand = parseNot(p);
  p.depth--;
  return { kind: 'Unary', operator: 'not', operand, start, end: p.endFrom(start) };
}

/** `a | b` (superposition) and `x | f(…)` (pipe): parsed, reported, not evaluable. */
function parseBar(p: Parser, first?: Expr): Expr {
  const left = parseComparison(p, first);
  if (!p.at('|')) return left;
  const bar = p.spanAt(p.pos);
  let pipe = false;
  while (p.eat('|')) {
    const right = parseComparison(p);
    if (right.kind === 'Call') pipe = true;
  }
  const span = p.span(left.start);
  if (pipe) {
    p.error('E2011', bar, 'Pipes (`x | f(…)`) are not supported yet', 'call the function directly: `f(x, …)`');
  } else {
    p.error('E2011', bar, 'Superposition (`a | b`) is not supported yet', 'use `any of [a, b]` for a random pick');
  }
  return { kind: 'Unsupported', construct: pipe ? 'pipe' : 'superposition', start: span.start, end: span.end };
}

function comparison(kind: string): BinaryOperator | undefined {
  switch (kind) {
    case '==': return '==';
    case '!=': return '!=';
    case '<': return '<';
    case '>': return '>';
    case '<=': return '<=';
    case '>=': return '>=';
    default: return undefined;
  }
}

function parseComparison(p: Parser, first?: Expr): Expr {
  const depth = p.depth;
  let left = parseRange(p, first);
  for (let op = comparison(p.kind); op !== undefined; op = comparison(p.kind)) {
    link(p);
    p.advance();
    left = binary(p, op, left, parseRange(p));
  }
  p.depth = depth;
  if (atWordOp(p, 'is')) {
    p.advance();
    const type = p.expectName('a type name after `is`');
    return { kind: 'Is', operand: left, type, start: left.start, end: p.endFrom(left.start) };
  }
  if (atWordOp(p, 'in')) {
    p.advance();
    return binary(p, 'in', left, parseRange(p));
  }
  const name = p.kind === 'Word' ? p.textAt(p.pos) : undefined;
  if (name !== undefined && INFIX_CALLS.has(name) && atWordOp(p, name)) {
    // `a contains b` is the built-in `contains(a, b)` (a substring, an array element or a key);
    // `a startsWith b`, `a endsWith b` likewise (upstream's docs write all three infix).
    const op = p.advance();
    const right = parseRange(p);
    const callee: Name = { name, start: p.startAt(op), end: p.endAt(op) };
    return { kind: 'Call', callee, args: [left, right], start: left.start, end: p.endFrom(left.start) };
  }
  return left;
}

/** Built-ins of two arguments written between them: `a contains b`. */
const INFIX_CALLS: ReadonlySet<string> = new Set(['contains', 'startsWith', 'endsWith']);

function parseRange(p: Parser, first?: Expr): Expr {
  const left = parseAdditive(p, first);
  if (!p.at('..')) return left;
  const dots = p.spanAt(p.advance());
  if (startsOperand(p)) parseAdditive(p);
  p.error('E2011', dots, 'Ranges (`a..b`) are not supported yet', 'use `range(a, b)` for a list of numbers');
  return { kind: 'Unsupported', construct: 'range', start: left.start, end: p.endFrom(left.start) };
}

function startsOperand(p: Parser): boolean {
  const k = p.kind;
  return k === 'Word' || k === 'Number' || k === 'String' || k === '(' || k === '[' || k === '-' || k === '.';
}

function parseAdditive(p: Parser, first?: Expr): Expr {
  const depth = p.depth;
  let left = parseMultiplicative(p, first);
  for (;;) {
    const k = p.kind;
    if (k !== '+' && k !== '-') break;
    link(p);
    p.advance();
    left = binary(p, k, left, parseMultiplicative(p));
  }
  p.depth = depth;
  return left;
}

function parseMultiplicative(p: Parser, first?: Expr): Expr {
  const depth = p.depth;
  let left = first ?? parseUnary(p);
  for (;;) {
    const k = p.kind;
    if (k !== '*' && k !== '/' && k !== '%') break;
    link(p);
    p.advance();
    left = binary(p, k, left, parseUnary(p));
  }
  p.depth = depth;
  return left;
}

function parseUnary(p: Parser): Expr {
  p.enter();
  const t = p.pos;
  const kind = p.kind;
  let result: Expr;
  if (kind === '-' || kind === '+') {
    p.advance();
    const operand = parseUnary(p);
    result = { kind: 'Unary', operator: kind, operand, start: p.startAt(t), end: p.endFrom(p.startAt(t)) };
  } else if (kind === '^') {
    p.advance();
    p.expectNameToken('a name after `^`');
    while (p.at('.') && p.peekKind() === 'Word') {
      p.advance();
      p.advance();
    }
    p.error('E2011', p.spanAt(t), 'Parent references (`^x`) are not supported yet', 'bind the outer value with `let` before the loop');
    result = { kind: 'Unsupported', construct: 'parent-reference', start: p.startAt(t), end: p.endFrom(p.startAt(t)) };
  } else {
    result = parsePostfix(p);
  }
  p.depth--;
  return result;
}

function parsePostfix(p: Parser): Expr {
  const depth = p.depth;
  const start = p.start;
  let expr = parsePrimary(p);
  // Only a name written as a name extends into a dotted name or becomes a callee (`parseRef`
  // makes the call); after a call, subscript or parentheses `.x` is a field read (MemberExpr).
  for (;;) {
    const k = p.kind;
    if (k === '.' || k === '[' || k === '(') link(p);
    if (k === '.') {
      // A name written as a name has taken its dotted parts already (`parseRef`), so this `.x`
      // follows a call, subscript or parentheses.
      p.advance();
      const prop = p.textAt(p.expectNameToken('a property name after "."'));
      expr = { kind: 'Member', object: expr, property: prop, start, end: p.endFrom(start) };
    } else if (k === '[') {
      p.advance();
      const index = parseExpr(p);
      p.expect(']');
      expr = { kind: 'Index', object: expr, index, start, end: p.endFrom(start) };
    } else if (k === '(') {
      const open = p.pos;
      parseArgs(p);
      p.error('E2016', p.spanAt(open), 'Only a function name can be called', 'call a built-in by name, e.g. `length(x)`');
    } else {
      p.depth = depth;
      return expr;
    }
  }
}

function parseArgs(p: Parser): Expr[] {
  p.expect('(');
  if (p.eat(')')) return [];
  const args = p.mark();
  for (;;) {
    p.add(lambdaAhead(p) ? parseLambda(p) : parseExpr(p));
    if (p.eat(')')) return p.take(args);
    if (!p.at(',')) p.fail('E2001', '"," or ")"', 'arguments are separated by commas');
    p.advance();
  }
}

/** `x =>` or `(a, b) =>` at the cursor (an argument): a lambda follows. */
function lambdaAhead(p: Parser): boolean {
  if (p.kind === 'Word') return p.peekKind() === '=>';
  if (p.kind !== '(') return false;
  const close = p.tokens.aux[p.pos]!;
  return close > 0 && close < p.last && p.kindAt(close + 1) === '=>';
}

/** `x => body` or `(a, b) => body`; its parameters are plain names. */
function parseLambda(p: Parser): Expr {
  const start = p.start;
  const names = p.mark();
  if (p.eat('(')) {
    while (!p.at(')')) {
      p.add(p.expectName('a parameter name'));
      if (p.at(')')) break;
      if (!p.at(',')) p.fail('E2001', '"," or ")"', 'parameters are separated by commas: `(total, x) => total + x`');
      p.advance();
    }
    p.advance();
  } else {
    p.add(p.expectName('a parameter name'));
  }
  const params = p.take<Name>(names);
  p.expect('=>');
  const body = parseExpr(p);
  return { kind: 'Lambda', params, body, start, end: p.endFrom(start) };
}

function parsePrimary(p: Parser): Expr {
  const t = p.pos;
  switch (p.kind) {
    case 'Number':
      p.advance();
      return { kind: 'Number', value: p.numberAt(t), start: p.startAt(t), end: p.endAt(t) };
    case 'String':
      p.advance();
      return { kind: 'String', value: p.valueAt(t), start: p.startAt(t), end: p.endAt(t) };
    case '(': {
      p.advance();
      const inner = parseExpr(p);
      p.expect(')');
      return inner;
    }
    case '[':
      return parseArray(p);
    case '{':
      return parseObject(p);
    case '.':
      p.advance();
      return parseRef(p, p.startAt(t), p.textAt(p.expectNameToken('a property name after "."')), true);
    case 'Word':
      return parseWordPrimary(p);
    default: {
      // `a === b`, `a !== b` (JavaScript's): lexed as `==` or `!=` and then `=`, touching it.
      const strict = p.kind === '=' && t > 0 && (p.kindAt(t - 1) === '==' || p.kindAt(t - 1) === '!=') && p.endAt(t - 1) === p.startAt(t);
      return p.fail('E2005', 'an expression', strict ? `Reqon compares with \`==\` and \`!=\` (there is no \`===\` or \`!==\`)` : undefined);
    }
  }
}

/** A word followed by one of these is a plain name even if it could begin a construct. */
function nameFollows(p: Parser): boolean {
  const next = p.peekIndex();
  const k = p.kindAt(next);
  if (k === '.') return p.startAt(next) === p.endAt(p.pos); // `match.x` is a name, `match .x {` a match
  return k === ',' || k === ')' || k === ']' || k === '}' || k === ':' || k === 'EOF' || k === '=>';
}

function parseWordPrimary(p: Parser): Expr {
  const t = p.pos;
  const text = p.textAt(t);
  switch (text) {
    case 'true':
    case 'false':
      p.advance();
      return { kind: 'Boolean', value: text === 'true', start: p.startAt(t), end: p.endAt(t) };
    case 'null':
      p.advance();
      return { kind: 'Null', start: p.startAt(t), end: p.endAt(t) };
    case 'match':
      if (!nameFollows(p)) return parseMatchExpr(p);
      break;
    case 'any':
      if (p.isWord(p.peekIndex(), 'of')) return parseAnyOf(p);
      break;
    case 'if':
      if (!nameFollows(p)) return parseIfThenElse(p);
      break;
  }
  p.advance();
  return parseRef(p, p.startAt(t), text, false);
}

/**
 * A name (`a`, `.a`) with the dotted parts that follow it (`a.b.c`): one Ref and one parts
 * array, however many dots. A name followed by `(` is the callee of a call, made here: a Ref
 * made first and dropped for the call would be the one short-lived object among the tree's, and
 * V8 then stops creating Refs in the old generation (see Parser.take).
 */
function parseRef(p: Parser, start: number, first: string, leadingDot: boolean): Expr {
  if (!p.at('.')) {
    if (p.at('(')) return parseCall(p, start, first);
    return { kind: 'Ref', parts: p.singleName(first), leadingDot, start, end: p.endFrom(start) };
  }
  const parts = p.mark();
  p.add(first);
  do {
    p.advance();
    p.add(p.textAt(p.expectNameToken('a property name after "."')));
  } while (p.at('.'));
  if (p.at('(')) return parseCall(p, start, p.take<string>(parts).join('.'));
  return { kind: 'Ref', parts: p.take<string>(parts), leadingDot, start, end: p.endFrom(start) };
}

/** `name(args)` at the `(` after the callee `name`, which began at `start`. */
function parseCall(p: Parser, start: number, name: string): Expr {
  const callee: Name = { name, start, end: p.endFrom(start) };
  link(p); // a postfix link, as `parsePostfix` counts them (it restores the depth)
  const args = parseArgs(p);
  return { kind: 'Call', callee, args, start, end: p.endFrom(start) };
}

function parseArray(p: Parser): Expr {
  const start = p.startAt(p.expect('['));
  const elements = p.mark();
  while (!p.at(']')) {
    p.add(parseExpr(p));
    if (p.at(']')) break;
    if (!p.at(',')) p.fail('E2001', '"," or "]"', 'array elements are separated by commas');
    p.advance();
  }
  p.advance();
  return { kind: 'Array', elements: p.take<Expr>(elements), start, end: p.endFrom(start) };
}

function parseObject(p: Parser): Expr {
  const start = p.startAt(p.expect('{'));
  const entries = p.mark();
  while (!p.at('}')) {
    const entryStart = p.start;
    if (p.eat('...')) {
      const value = parseExpr(p);
      const entry: ObjectEntry = { kind: 'Spread', value, start: entryStart, end: p.endFrom(entryStart) };
      p.add(entry);
    } else {
      const k = p.pos;
      const kind = p.kind;
      if (kind !== 'Word' && kind !== 'String') p.fail('E2001', 'a property name or "}"');
      p.advance();
      p.expect(':');
      const value = parseExpr(p);
      const entry: ObjectEntry = { kind: 'Property', key: { name: p.valueAt(k), start: p.startAt(k), end: p.endAt(k) }, value, start: entryStart, end: p.endFrom(entryStart) };
      p.add(entry);
    }
    if (p.at('}')) break;
    if (!p.at(',')) p.fail('E2001', '"," or "}"', 'object properties are separated by commas');
    p.advance();
  }
  p.advance();
  return { kind: 'Object', entries: p.take<ObjectEntry>(entries), start, end: p.endFrom(start) };
}

/**
 * `match subject { pattern (where guard)? => result, … }` — commas between arms are optional.
 * `match { cond => result, … }` (no subject) is a guard match: the first truthy `cond` wins.
 */
function parseMatchExpr(p: Parser): Expr {
  const keyword = p.advance();
  const start = p.startAt(keyword);
  const guards = p.at('{');
  const subject: Expr = guards ? { kind: 'Boolean', value: true, start: p.startAt(keyword), end: p.endAt(keyword) } : parseExpr(p);
  p.expect('{', 'a match expression lists its arms in braces');
  const arms = p.mark();
  while (!p.at('}')) {
    if (p.eat(',')) continue;
    const armStart = p.start;
    let pattern: Expr | null;
    if (p.atWord('_') && (p.peekKind() === '=>' || p.textAt(p.peekIndex()) === 'where')) {
      p.advance();
      pattern = null;
    } else {
      pattern = parseExprBeforeWhere(p);
    }
    const guard = p.eatWord('where') ? parseExpr(p) : undefined;
    p.expect('=>', 'expression match arms use `=>` (step match arms use `->`)');
    const result = parseExpr(p);
    const arm: MatchExprArm = { pattern, result, start: armStart, end: p.endFrom(armStart), guard };
    p.add(arm);
  }
  p.advance();
  return { kind: 'MatchExpr', subject, arms: p.take<MatchExprArm>(arms), start, end: p.endFrom(start), guards: guards ? true : undefined };
}

function parseAnyOf(p: Parser): Expr {
  const start = p.startAt(p.advance());
  p.advance(); // `of`
  const collection = parseExprBeforeWhere(p);
  const where = p.eatWord('where') ? parseExpr(p) : undefined;
  return { kind: 'AnyOf', collection, start, end: p.endFrom(start), where };
}

function parseIfThenElse(p: Parser): Expr {
  const start = p.startAt(p.advance());
  const test = parseExpr(p);
  p.expectWord('then', 'write `if condition then a else b`');
  const consequent = parseExpr(p);
  p.expectWord('else', '`if … then …` needs an `else` branch');
  const alternate = parseExpr(p);
  return { kind: 'Conditional', test, consequent, alternate, start, end: p.endFrom(start) };
}
