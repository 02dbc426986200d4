/**
 * Object patterns in `match` arms (`{ error: _, code: 401, message: m } -> …`), as upstream's docs
 * write them: a shape test on the subject that also collects the names it binds. Pure: the
 * caller decides where bindings go (docs/language.md, "Object patterns").
 */
import type { Expr, ObjectExpr, ObjectPattern, SubPattern } from '../lang/ast.js';

/**
 * An object pattern: the subject is an object (not an array, not null) and each named key
 * matches — `_` and a name need the key present and not null (a name binds the value), a literal
 * needs `===` (`null` also matches an absent key), a nested pattern recurses. Keys are own keys.
 */
export function matchesObjectPattern(pattern: ObjectPattern, subject: unknown, bound: Map<string, unknown>): boolean {
  if (subject === null || typeof subject !== 'object' || Array.isArray(subject)) return false;
  for (const { key, value: sub } of pattern.fields) {
    const value = Object.hasOwn(subject, key) ? (subject as Record<string, unknown>)[key] : undefined;
    if (!matchesSub(sub, value, bound)) return false;
  }
  return true;
}

function matchesSub(sub: SubPattern, value: unknown, bound: Map<string, unknown>): boolean {
  switch (sub.kind) {
    case 'Present':
      return value !== undefined && value !== null;
    case 'Bind':
      if (value === undefined || value === null) return false;
      bound.set(sub.name.name, value);
      return true;
    case 'Literal':
      return sub.value === null ? value === null || value === undefined : value === sub.value;
    case 'ObjectPattern':
      return matchesObjectPattern(sub, value, bound);
  }
}

const fromLiterals = new WeakMap<ObjectExpr, ObjectPattern | null>();

/**
 * An object literal written as a pattern of a match *expression* (`match .x { { a: 1 } => … }`)
 * read as the object pattern it spells, so both kinds of match test shapes the same way: `_`
 * present, a bare name binds, a literal (a negative number too) compares, a nested `{ … }`
 * recurses. Undefined when an entry is none of these (a spread, `.field`, `a + 1`): that literal
 * stays a value compared with `===` (as before; docs/language.md). Read once per literal.
 */
export function objectPatternOfLiteral(expr: ObjectExpr): ObjectPattern | undefined {
  let pattern = fromLiterals.get(expr);
  if (pattern === undefined) fromLiterals.set(expr, (pattern = literalPattern(expr) ?? null));
  return pattern ?? undefined;
}

function literalPattern(expr: ObjectExpr): ObjectPattern | undefined {
  const fields: ObjectPattern['fields'] = [];
  for (const entry of expr.entries) {
    if (entry.kind !== 'Property') return undefined;
    const value = subPatternOf(entry.value);
    if (value === undefined) return undefined;
    fields.push({ key: entry.key.name, keySpan: entry.key.span, value });
  }
  return { kind: 'ObjectPattern', fields, span: expr.span };
}

function subPatternOf(expr: Expr): SubPattern | undefined {
  switch (expr.kind) {
    case 'Ref':
      if (expr.leadingDot || expr.parts.length !== 1) return undefined;
      return expr.parts[0] === '_' ? { kind: 'Present', span: expr.span } : { kind: 'Bind', name: { name: expr.parts[0]!, span: expr.span }, span: expr.span };
    case 'String':
    case 'Number':
    case 'Boolean':
      return { kind: 'Literal', value: expr.value, span: expr.span };
    case 'Null':
      return { kind: 'Literal', value: null, span: expr.span };
    case 'Unary':
      return expr.operator === '-' && expr.operand.kind === 'Number' ? { kind: 'Literal', value: -expr.operand.value, span: expr.span } : undefined;
    case 'Object':
      return literalPattern(expr);
    default:
      return undefined;
  }
}
