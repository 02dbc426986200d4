/**
 * Object patterns in `match` arms (`{ error: _, code: 401, message: m } -> …`), as upstream's docs
 * write them: a shape test on the subject that also collects the names it binds. Pure: the
 * caller decides where bindings go (docs/language.md, "Object patterns").
 */
import type { Expr, ObjectExpr, ObjectPattern, Span, SubPattern } from '../lang/ast.js';
import { contentEqual } from './operators.js';
import { spanOf } from '../lang/ast.js';
import { matchesSchema, type SchemaTable } from './schema-match.js';

/** A key of a match expression's object literal whose value is no sub-pattern (`{ a: .n + 1 }`): it must equal that value. */
interface ValueSub {
  kind: 'Value';
  expr: Expr;
  span: Span;
}

/** An object pattern as a match expression spells it: a match step's, plus computed values. */
export interface ShapePattern {
  kind: 'ObjectPattern';
  fields: { key: string; value: Exclude<SubPattern, ObjectPattern> | ValueSub | ShapePattern }[];
  span: Span;
}

/**
 * An object pattern: the subject is an object (not an array, not null) and each named key
 * matches — `_` and a name need the key present and not null (a name binds the value; one that
 * names a declared schema, `{ method: Card }`, also tests the value against it, as `Card ->`
 * does the subject: it bound any value, and the arm after it was never reached), a literal
 * needs `===` (`null` also matches an absent key), a computed value (match expressions only;
 * `evaluate` computes it, without this pattern's bindings) must equal the key's value by content
 * (operators.ts, contentEqual), a nested pattern recurses. Keys are own keys.
 */
export function matchesObjectPattern(
  pattern: ObjectPattern | ShapePattern,
  subject: unknown,
  bound: Map<string, unknown>,
  evaluate?: (expr: Expr) => unknown,
  schemas?: SchemaTable,
): boolean {
  if (subject === null || typeof subject !== 'object' || Array.isArray(subject)) return false;
  for (const { key, value: sub } of pattern.fields) {
    const value = Object.hasOwn(subject, key) ? (subject as Record<string, unknown>)[key] : undefined;
    if (!matchesSub(sub, value, bound, evaluate, schemas)) return false;
  }
  return true;
}

function matchesSub(
  sub: ShapePattern['fields'][number]['value'] | SubPattern,
  value: unknown,
  bound: Map<string, unknown>,
  evaluate: ((expr: Expr) => unknown) | undefined,
  schemas: SchemaTable | undefined,
): boolean {
  switch (sub.kind) {
    case 'Present':
      return value !== undefined && value !== null;
    case 'Bind': {
      if (value === undefined || value === null) return false;
      // A schema's name tests the value and binds it too (the arm may read it: `store Card -> …`).
      const schema = schemas?.get(sub.name.name);
      if (schema !== undefined && !matchesSchema(value, schema, schemas!)) return false;
      bound.set(sub.name.name, value);
      return true;
    }
    case 'Literal':
      return sub.value === null ? value === null || value === undefined : value === sub.value;
    case 'EmptyList':
      return Array.isArray(value) && value.length === 0;
    case 'List': {
      if (!Array.isArray(value)) return false;
      const schema = schemas?.get(sub.name.name);
      if (schema !== undefined) return value.every((item) => matchesSchema(item, schema, schemas!));
      if (value.length !== 1) return false;
      bound.set(sub.name.name, value[0]);
      return true;
    }
    case 'Value':
      if (!evaluate) throw new Error('internal: a computed object-pattern value needs an evaluator');
      return contentEqual(value, evaluate(sub.expr));
    case 'ObjectPattern':
      return matchesObjectPattern(sub, value, bound, evaluate, schemas);
  }
}

const fromLiterals = new WeakMap<ObjectExpr, ShapePattern | null>();

/**
 * An object literal written as a pattern of a match *expression* (`match .x { { a: 1 } => … }`)
 * read as the object pattern it spells, so both kinds of match test shapes the same way: `_`
 * present, a bare name binds, a literal (a negative number too) compares, a nested `{ … }`
 * recurses; any other value (`.field`, `a + 1`, `[1, 2]`) is computed and compared by content.
 * Undefined for a literal with a spread (`{ ...base, a: 1 }`): that one is a value, equal by
 * content to the subject as a whole (docs/language.md). Read once per literal.
 */
export function objectPatternOfLiteral(expr: ObjectExpr): ShapePattern | undefined {
  let pattern = fromLiterals.get(expr);
  if (pattern === undefined) fromLiterals.set(expr, (pattern = literalPattern(expr) ?? null));
  return pattern ?? undefined;
}

function literalPattern(expr: ObjectExpr): ShapePattern | undefined {
  const fields: ShapePattern['fields'] = [];
  for (const entry of expr.entries) {
    if (entry.kind !== 'Property') return undefined;
    // A nested literal with a spread is a value of its own, compared by content.
    const value = (entry.value.kind === 'Object' && literalPattern(entry.value)) || subPatternOf(entry.value);
    fields.push({ key: entry.key.name, value });
  }
  return { kind: 'ObjectPattern', fields, span: spanOf(expr) };
}

function subPatternOf(expr: Expr): Exclude<SubPattern, ObjectPattern> | ValueSub {
  // (An object literal reaching here has a spread: literalPattern declined it.)
  switch (expr.kind) {
    case 'Ref':
      if (expr.leadingDot || expr.parts.length !== 1) return { kind: 'Value', expr, span: spanOf(expr) };
      return expr.parts[0] === '_' ? { kind: 'Present', start: expr.start, end: expr.end } : { kind: 'Bind', name: { name: expr.parts[0]!, start: expr.start, end: expr.end }, start: expr.start, end: expr.end };
    case 'String':
    case 'Number':
    case 'Boolean':
      return { kind: 'Literal', value: expr.value, start: expr.start, end: expr.end };
    case 'Null':
      return { kind: 'Literal', value: null, start: expr.start, end: expr.end };
    case 'Unary':
      if (expr.operator === '-' && expr.operand.kind === 'Number') return { kind: 'Literal', value: -expr.operand.value, start: expr.start, end: expr.end };
      return { kind: 'Value', expr, span: spanOf(expr) };
    default:
      return { kind: 'Value', expr, span: spanOf(expr) };
  }
}
