/**
 * Expressions (reference §D.1), lowest precedence first:
 *   ternary `?:`  →  `??`  →  `or`  →  `and`  →  `not`  →  `|` (unsupported)  →  comparisons with a
 *   trailing `is T` / `in x`  →  `..` (unsupported)  →  `+ -`  →  `* / %`  →  unary `- + ^`  →
 *   postfix call / `.name` / `[i]`  →  primary.
 * Invariant: forms the original parses but cannot evaluate (pipes, superposition, ranges, `^x`)
 * become `UnsupportedExpr` plus one E2011 error — never a crash. Every recursion passes through
 * `parseUnary`, which counts depth, so deep nesting gives one E2012 instead of a stack overflow.
 */
import type { BinaryOperator, Expr, MatchExprArm, Name, ObjectEntry } from './ast.js';
import { type Parser } from './parser-core.js';

export function parseExpr(p: Parser): Expr {
  const test = parseNullish(p);
  if (!p.at('?')) return test;
  p.advance();
  const consequent = parseExpr(p);
  p.expect(':', 'a conditional is written `test ? then : else`');
  const alternate = parseExpr(p);
  return { kind: 'Conditional', test, consequent, alternate, span: p.span(test.span.start) };
}

function binary(p: Parser, operator: BinaryOperator, left: Expr, right: Expr): Expr {
  return { kind: 'Binary', operator, left, right, span: p.span(left.span.start) };
}

/** A word operator, unless it is really the key of the next `key: value` entry. */
function atWordOp(p: Parser, word: string): boolean {
  return p.atWord(word) && p.peek().kind !== ':';
}

function parseNullish(p: Parser): Expr {
  let left = parseOr(p);
  while (p.at('??')) {
    p.advance();
    left = binary(p, '??', left, parseOr(p));
  }
  return left;
}

function parseOr(p: Parser): Expr {
  let left = parseAnd(p);
  while (atWordOp(p, 'or')) {
    p.advance();
    left = binary(p, 'or', left, parseAnd(p));
  }
  return left;
}

function parseAnd(p: Parser): Expr {
  let left = parseNot(p);
  while (atWordOp(p, 'and')) {
    p.advance();
    left = binary(p, 'and', left, parseNot(p));
  }
  return left;
}

function parseNot(p: Parser): Expr {
  if (!atWordOp(p, 'not')) return parseBar(p);
  const start = p.advance().span.start;
  p.enter();
  const operand = parseNot(p);
  p.depth--;
  return { kind: 'Unary', operator: 'not', operand, span: p.span(start) };
}

/** `a | b` (superposition) and `x | f(…)` (pipe): parsed, reported, not evaluable. */
function parseBar(p: Parser): Expr {
  const left = parseComparison(p);
  if (!p.at('|')) return left;
  const bar = p.tok.span;
  let pipe = false;
  while (p.eat('|')) {
    const right = parseComparison(p);
    if (right.kind === 'Call') pipe = true;
  }
  const span = p.span(left.span.start);
  if (pipe) {
    p.error('E2011', bar, 'Pipes (`x | f(…)`) are not supported yet', 'call the function directly: `f(x, …)`');
  } else {
    p.error('E2011', bar, 'Superposition (`a | b`) is not supported yet', 'use `any of [a, b]` for a random pick');
  }
  return { kind: 'Unsupported', construct: pipe ? 'pipe' : 'superposition', span };
}

const COMPARISON: Partial<Record<string, BinaryOperator>> = {
  '==': '==', '!=': '!=', '<': '<', '>': '>', '<=': '<=', '>=': '>=',
};

function parseComparison(p: Parser): Expr {
  let left = parseRange(p);
  for (let op = COMPARISON[p.tok.kind]; op !== undefined; op = COMPARISON[p.tok.kind]) {
    p.advance();
    left = binary(p, op, left, parseRange(p));
  }
  if (atWordOp(p, 'is')) {
    p.advance();
    const type = p.expectName('a type name after `is`');
    return { kind: 'Is', operand: left, type, span: p.span(left.span.start) };
  }
  if (atWordOp(p, 'in')) {
    p.advance();
    return binary(p, 'in', left, parseRange(p));
  }
  return left;
}

function parseRange(p: Parser): Expr {
  const left = parseAdditive(p);
  if (!p.at('..')) return left;
  const dots = p.advance().span;
  if (startsOperand(p)) parseAdditive(p);
  p.error('E2011', dots, 'Ranges (`a..b`) are not supported yet', 'use `range(a, b)` for a list of numbers');
  return { kind: 'Unsupported', construct: 'range', span: p.span(left.span.start) };
}

function startsOperand(p: Parser): boolean {
  const k = p.tok.kind;
  return k === 'Word' || k === 'Number' || k === 'String' || k === '(' || k === '[' || k === '-' || k === '.';
}

function parseAdditive(p: Parser): Expr {
  let left = parseMultiplicative(p);
  for (;;) {
    const k = p.tok.kind;
    if (k !== '+' && k !== '-') return left;
    p.advance();
    left = binary(p, k, left, parseMultiplicative(p));
  }
}

function parseMultiplicative(p: Parser): Expr {
  let left = parseUnary(p);
  for (;;) {
    const k = p.tok.kind;
    if (k !== '*' && k !== '/' && k !== '%') return left;
    p.advance();
    left = binary(p, k, left, parseUnary(p));
  }
}

function parseUnary(p: Parser): Expr {
  p.enter();
  const t = p.tok;
  let result: Expr;
  if (t.kind === '-' || t.kind === '+') {
    p.advance();
    const operand = parseUnary(p);
    result = { kind: 'Unary', operator: t.kind, operand, span: p.span(t.span.start) };
  } else if (t.kind === '^') {
    p.advance();
    p.expectName('a name after `^`');
    while (p.at('.') && p.peek().kind === 'Word') {
      p.advance();
      p.advance();
    }
    p.error('E2011', t.span, 'Parent references (`^x`) are not supported yet', 'bind the outer value with `let` before the loop');
    result = { kind: 'Unsupported', construct: 'parent-reference', span: p.span(t.span.start) };
  } else {
    result = parsePostfix(p);
  }
  p.depth--;
  return result;
}

function parsePostfix(p: Parser): Expr {
  const start = p.tok.span.start;
  const parenthesised = p.at('(');
  let expr = parsePrimary(p);
  // Only a name written as a name extends into a dotted name or becomes a callee; after a call,
  // subscript or parentheses `.x` is a field read (MemberExpr).
  let named = expr.kind === 'Ref' && !parenthesised;
  for (;;) {
    const k = p.tok.kind;
    if (k === '.') {
      p.advance();
      const prop = p.expectName('a property name after "."');
      if (named && expr.kind === 'Ref') {
        expr = { kind: 'Ref', parts: [...expr.parts, prop.name], leadingDot: expr.leadingDot, span: p.span(start) };
      } else {
        expr = { kind: 'Member', object: expr, property: prop.name, span: p.span(start) };
      }
    } else if (k === '[') {
      p.advance();
      const index = parseExpr(p);
      p.expect(']');
      expr = { kind: 'Index', object: expr, index, span: p.span(start) };
      named = false;
    } else if (k === '(') {
      const open = p.tok.span;
      const args = parseArgs(p);
      if (named && expr.kind === 'Ref') {
        const callee: Name = { name: expr.parts.join('.'), span: expr.span };
        expr = { kind: 'Call', callee, args, span: p.span(start) };
      } else {
        p.error('E2016', open, 'Only a function name can be called', 'call a built-in by name, e.g. `length(x)`');
      }
      named = false;
    } else {
      return expr;
    }
  }
}

function parseArgs(p: Parser): Expr[] {
  p.expect('(');
  const args: Expr[] = [];
  if (p.eat(')')) return args;
  for (;;) {
    args.push(parseExpr(p));
    if (p.eat(')')) return args;
    if (!p.at(',')) p.fail('E2001', '"," or ")"', 'arguments are separated by commas');
    p.advance();
  }
}

function parsePrimary(p: Parser): Expr {
  const t = p.tok;
  switch (t.kind) {
    case 'Number':
      p.advance();
      return { kind: 'Number', value: t.number, span: t.span };
    case 'String':
      p.advance();
      return { kind: 'String', value: t.value, span: t.span };
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
    case '.': {
      p.advance();
      const name = p.expectName('a property name after "."');
      return { kind: 'Ref', parts: [name.name], leadingDot: true, span: p.span(t.span.start) };
    }
    case 'Word':
      return parseWordPrimary(p);
    default:
      return p.fail('E2005', 'an expression');
  }
}

/** A word followed by one of these is a plain name even if it could begin a construct. */
function nameFollows(p: Parser): boolean {
  const next = p.peek();
  const k = next.kind;
  if (k === '.') return next.span.start === p.tok.span.end; // `match.x` is a name, `match .x {` a match
  return k === ',' || k === ')' || k === ']' || k === '}' || k === ':' || k === 'EOF' || k === '=>';
}

function parseWordPrimary(p: Parser): Expr {
  const t = p.tok;
  switch (t.text) {
    case 'true':
    case 'false':
      p.advance();
      return { kind: 'Boolean', value: t.text === 'true', span: t.span };
    case 'null':
      p.advance();
      return { kind: 'Null', span: t.span };
    case 'match':
      if (!nameFollows(p)) return parseMatchExpr(p);
      break;
    case 'any':
      if (p.peek().kind === 'Word' && p.peek().text === 'of') return parseAnyOf(p);
      break;
    case 'if':
      if (!nameFollows(p)) return parseIfThenElse(p);
      break;
  }
  p.advance();
  return { kind: 'Ref', parts: [t.text], leadingDot: false, span: t.span };
}

function parseArray(p: Parser): Expr {
  const start = p.expect('[').span.start;
  const elements: Expr[] = [];
  while (!p.at(']')) {
    elements.push(parseExpr(p));
    if (p.at(']')) break;
    if (!p.at(',')) p.fail('E2001', '"," or "]"', 'array elements are separated by commas');
    p.advance();
  }
  p.advance();
  return { kind: 'Array', elements, span: p.span(start) };
}

function parseObject(p: Parser): Expr {
  const start = p.expect('{').span.start;
  const entries: ObjectEntry[] = [];
  while (!p.at('}')) {
    const entryStart = p.tok.span.start;
    if (p.eat('...')) {
      const value = parseExpr(p);
      entries.push({ kind: 'Spread', value, span: p.span(entryStart) });
    } else {
      const k = p.tok;
      if (k.kind !== 'Word' && k.kind !== 'String') p.fail('E2001', 'a property name or "}"');
      p.advance();
      p.expect(':');
      const value = parseExpr(p);
      entries.push({ kind: 'Property', key: { name: k.value, span: k.span }, value, span: p.span(entryStart) });
    }
    if (p.at('}')) break;
    if (!p.at(',')) p.fail('E2001', '"," or "}"', 'object properties are separated by commas');
    p.advance();
  }
  p.advance();
  return { kind: 'Object', entries, span: p.span(start) };
}

/** `match subject { pattern (where guard)? => result, … }` — commas between arms are optional. */
function parseMatchExpr(p: Parser): Expr {
  const start = p.advance().span.start;
  const subject = parseExpr(p);
  p.expect('{', 'a match expression lists its arms in braces');
  const arms: MatchExprArm[] = [];
  while (!p.at('}')) {
    if (p.eat(',')) continue;
    const armStart = p.tok.span.start;
    let pattern: Expr | null;
    if (p.atWord('_') && (p.peek().kind === '=>' || p.peek().text === 'where')) {
      p.advance();
      pattern = null;
    } else {
      pattern = parseExpr(p);
    }
    const guard = p.eatWord('where') ? parseExpr(p) : undefined;
    p.expect('=>', 'expression match arms use `=>` (step match arms use `->`)');
    const result = parseExpr(p);
    const arm: MatchExprArm = { pattern, result, span: p.span(armStart) };
    if (guard !== undefined) arm.guard = guard;
    arms.push(arm);
  }
  p.advance();
  return { kind: 'MatchExpr', subject, arms, span: p.span(start) };
}

function parseAnyOf(p: Parser): Expr {
  const start = p.advance().span.start;
  p.advance(); // `of`
  const collection = parseExpr(p);
  const expr: Expr = { kind: 'AnyOf', collection, span: { start, end: start } };
  if (p.eatWord('where')) expr.where = parseExpr(p);
  expr.span = p.span(start);
  return expr;
}

function parseIfThenElse(p: Parser): Expr {
  const start = p.advance().span.start;
  const test = parseExpr(p);
  p.expectWord('then', 'write `if condition then a else b`');
  const consequent = parseExpr(p);
  p.expectWord('else', '`if … then …` needs an `else` branch');
  const alternate = parseExpr(p);
  return { kind: 'Conditional', test, consequent, alternate, span: p.span(start) };
}
