/**
 * The evaluator: `evaluate(expr, ctx)` turns an expression of the AST into a value.
 *
 * It is pure apart from `ctx.inputs` (the recorded clock, randomness and environment) and never
 * mutates a value it reads: objects and arrays it builds are new (a name returns the value it
 * names as it is). Name resolution follows §D.2
 * exactly (current record, then variables, then `response`, then fields of `response`); operators
 * follow §D.3's V2 column (see `operators.ts`). Every intended failure is an `EvaluatorError`.
 */
import { matchesObjectPattern, objectPatternOfLiteral } from './object-pattern.js';
import { matchesSchema } from './schema-match.js';
import type {
  AnyOfExpr,
  ArrayExpr,
  BinaryExpr,
  Expr,
  MatchExpr,
  ObjectExpr,
  WhereExpr,
  RefExpr,
  SchemaDecl,
  UnaryExpr,
  UnsupportedExpr,
} from '../lang/ast.js';
import { callBuiltin } from './builtins.js';
import { EvaluatorError } from './eval-errors.js';
import { arithmetic, compareOrdering, contentEqual, inOperator, isOfType, equals, toNumberFor, typeError } from './operators.js';
import type { StoreView } from './inputs.js';
import { BOOLEAN_STORE_INDEX_FORMAT, EVAL_RULES_FORMAT, recordedBefore, withRecord, type EvalContext } from './scope.js';
import { describeValue, fieldOf, hasField, hasOwnField, isPlainObject, isTruthy, setOwn, type PlainObject } from './values.js';
import { spanOf } from '../lang/ast.js';

export { EvaluatorError } from './eval-errors.js';

export function evaluate(expr: Expr, ctx: EvalContext): unknown {
  switch (expr.kind) {
    case 'Number':
    case 'String':
    case 'Boolean':
      return expr.value;
    case 'Null':
      return null;
    case 'Ref':
      return resolveRef(expr, ctx);
    case 'Member':
      return fieldOf(evaluate(expr.object, ctx), expr.property);
    case 'Index': {
      const store = storeNamed(expr.object, ctx);
      if (store) return storeRecord(store, evaluate(expr.index, ctx), !recordedBefore(ctx, BOOLEAN_STORE_INDEX_FORMAT));
      return subscript(evaluate(expr.object, ctx), evaluate(expr.index, ctx));
    }
    case 'Call':
      return callBuiltin(expr, ctx, evaluate);
    case 'Unary':
      return evaluateUnary(expr, ctx);
    case 'Binary':
      return evaluateBinary(expr, ctx);
    case 'Is':
      return isOfType(evaluate(expr.operand, ctx), expr.type.name, expr.type);
    case 'Conditional':
      return isTruthy(evaluate(expr.test, ctx)) ? evaluate(expr.consequent, ctx) : evaluate(expr.alternate, ctx);
    case 'Array':
      return expr.elements.map((element) => evaluate(element, ctx));
    case 'Object':
      return evaluateObject(expr, ctx);
    case 'MatchExpr':
      return evaluateMatch(expr, ctx);
    case 'AnyOf':
      return evaluateAnyOf(expr, ctx);
    case 'Where':
      return evaluateWhere(expr, ctx);
    case 'Lambda':
      // The parser takes a lambda only as a call's argument, and the checker only as a function argument.
      throw new EvaluatorError('R4001', 'A function (`x => …`) is a value only as the function argument of map, filter, reduce, sortBy, find or findIndex', spanOf(expr));
    case 'Unsupported':
      throw unsupported(expr);
  }
}

function evaluateUnary(expr: UnaryExpr, ctx: EvalContext): unknown {
  const operand = evaluate(expr.operand, ctx);
  switch (expr.operator) {
    case 'not':
      return !isTruthy(operand);
    case '-':
      return -toNumberFor('-', operand, expr);
    case '+':
      return toNumberFor('+', operand, expr);
  }
}

function evaluateBinary(expr: BinaryExpr, ctx: EvalContext): unknown {
  const { operator } = expr;
  const span = expr; // a node is its own span (EvaluatorError copies it)
  // The three lazy operators evaluate their right side only when they need it.
  switch (operator) {
    case 'and': {
      const left = evaluate(expr.left, ctx);
      return isTruthy(left) ? evaluate(expr.right, ctx) : left;
    }
    case 'or': {
      const left = evaluate(expr.left, ctx);
      return isTruthy(left) ? left : evaluate(expr.right, ctx);
    }
    case '??': {
      const left = evaluate(expr.left, ctx);
      return left === null || left === undefined ? evaluate(expr.right, ctx) : left;
    }
    default:
      break;
  }
  const left = evaluate(expr.left, ctx);
  const right = evaluate(expr.right, ctx);
  switch (operator) {
    case '+':
    case '-':
    case '*':
    case '/':
    case '%':
      return arithmetic(operator, left, right, span);
    case '==':
      return equals(left, right);
    case '!=':
      return !equals(left, right);
    case '<':
    case '>':
    case '<=':
    case '>=':
      return compareOrdering(operator, left, right, span);
    case 'in':
      return inOperator(left, right, span, recordedBefore(ctx, EVAL_RULES_FORMAT));
  }
}

/**
 * A map of null or absent (EvalContext.noRecord) reads `expr`: a `.field`, or a bare name that is
 * no variable, no store and not `response`, would fall through to another value (a variable, the
 * last response's field: a missing customer mapped to the order's id), so it fails here instead.
 */
function failNoRecordRead(expr: RefExpr, ctx: EvalContext): void {
  const head = expr.parts[0]!;
  // A variable, even one a `let` bound to an absent value (`note ?? "-"`), is no field read (helper 60).
  if (!expr.leadingDot && (head === 'response' || ctx.scope.get(head) !== undefined || ctx.scope.boundAbsent(head) || ctx.inputs.store?.(head) !== undefined)) return;
  const named = `${expr.leadingDot ? '.' : ''}${expr.parts.join('.')}`;
  const { state, source } = ctx.noRecord!;
  // `for t in xs where t != null`, `for o in orders where o.customer != null`: the loop's filter
  // sees its variable (for-step.ts), so the source as written is what to test.
  throw new EvaluatorError(
    'R4001',
    `\`${named}\` reads a field of ${source !== undefined ? `\`${source}\`, ` : ''}the record being mapped, but it is ${state}: skip such items${source !== undefined ? ` (\`where ${source} != null\`)` : ''}, or map a record`,
    expr,
  );
}

/**
 * §D.2, amended (docs/language.md): a name without a leading dot that a variable is bound to is
 * that variable, walked for a dotted name. Otherwise a single name: a field of the current record
 * (even if null), then the nearest variable,
 * then a declared store (its records, in insertion order; not for `.name`, which is a field),
 * then `response` itself, then a field of `response`. A dotted name: from `response` if it starts
 * with `response`; else the whole path walked from the current record (or `response` when there
 * is none) if that yields a value; else the first part as a variable and the rest walked from it;
 * else the first part as a declared store (its records); else the whole path walked again from
 * the record, this time through arrays (`fieldOf`: a field of an array is its items' field).
 */
export function resolveRef(expr: RefExpr, ctx: EvalContext): unknown {
  const { parts } = expr;
  const head = parts[0]!;
  // A null record (an item of `[null, …]`, `validate c` with c null) has no fields: `.x` is absent,
  // never a variable's or the response's `x` (which made `where .x != null` keep null items).
  if (ctx.noRecord !== undefined && ctx.current === undefined) failNoRecordRead(expr, ctx);
  if (expr.leadingDot && ctx.current === null) return undefined;
  if (expr.leadingDot && ctx.mapped !== undefined && ctx.current === ctx.mapped && !isPlainObject(ctx.current)) {
    const fix = Array.isArray(ctx.current) ? ': map each item in a `for`, or pick one (`x[0]`)' : '';
    throw new EvaluatorError('R4001', `\`.${parts.join('.')}\` reads a field of the record being mapped, but it is ${describeValue(ctx.current)}${fix}`, expr);
  }
  // A bare name the mission bound (`let`, a loop variable, a pattern name) is that variable even
  // where the current record has a field of the same name: in `for p in products where .category
  // == category`, `category` is the outer loop's; `.category` is always the record's field first.
  const bound = expr.leadingDot || head === 'response' ? undefined : ctx.scope.get(head);
  // A name bound to an absent value (a lambda's parameter, a match arm's name) is absent: not a field of another value.
  if (bound === undefined && !expr.leadingDot && head !== 'response' && ctx.scope.boundAbsent(head)) return undefined;
  // `.x` of a record is that record's field and nothing else: a line without an `id` keyed by
  // `.id` took its order's `response.id` (§D.2 fell through), so every such line was one record.
  const ownRecord = expr.leadingDot && isPlainObject(ctx.current);
  if (parts.length === 1) {
    if (bound !== undefined) return bound;
    if (ctx.current !== undefined && hasField(ctx.current, head)) return fieldOf(ctx.current, head);
    if (ownRecord) return undefined;
    const variable = ctx.scope.get(head);
    if (variable !== undefined) return variable;
    if (!expr.leadingDot && head !== 'response') {
      const store = ctx.inputs.store?.(head);
      if (store) return store.records;
    }
    if (head === 'response') return ctx.response;
    // Only a field `response` itself has: an array response's `length`, index or items field, never
    // its items' values (`.id` on a record without one is absent, not every item's id).
    return Array.isArray(ctx.response) && !hasField(ctx.response, head) ? undefined : fieldOf(ctx.response, head);
  }
  const rest = parts.slice(1);
  if (head === 'response') return walk(ctx.response, rest);
  if (bound !== undefined) return walk(bound, rest);
  const fromRecord = walkStrict(ctx.current !== undefined ? ctx.current : ctx.response, parts);
  if (fromRecord !== undefined) return fromRecord;
  if (ownRecord) return walk(ctx.current, parts);
  const variable = ctx.scope.get(head);
  if (variable !== undefined) return walk(variable, rest);
  if (!expr.leadingDot) {
    const store = ctx.inputs.store?.(head);
    if (store) return walk(store.records, rest);
  }
  // Last, the same walk through arrays of records (`.orders.total`: each order's total), which
  // the strict walk above refuses; it only yields where the strict walk found nothing.
  return walk(ctx.current !== undefined ? ctx.current : ctx.response, parts);
}

/** The store a bare name in `store[key]` reads, when nothing nearer (record field, variable) takes the name. */
function storeNamed(expr: Expr, ctx: EvalContext): StoreView | undefined {
  if (expr.kind !== 'Ref' || expr.parts.length !== 1 || expr.leadingDot || !ctx.inputs.store) return undefined;
  const head = expr.parts[0]!;
  if (head === 'response' || (ctx.current !== undefined && hasField(ctx.current, head)) || ctx.scope.get(head) !== undefined || ctx.scope.boundAbsent(head)) return undefined;
  return ctx.inputs.store(head);
}

/** The record under `key`, as a store write keys it (stores/keys.ts): a number or a boolean by its text (`booleans`: from log format 10; probe 110 K6). */
function storeRecord(store: StoreView, key: unknown, booleans: boolean): unknown {
  if (typeof key === 'string') return store.get(key);
  if (typeof key === 'number' && Number.isFinite(key)) return store.get(String(key));
  if (typeof key === 'boolean' && booleans) return store.get(String(key));
  return undefined;
}

/** Walks fields; `undefined` as soon as a step lands on something that has no fields. */
function walk(start: unknown, parts: readonly string[]): unknown {
  let value = start;
  for (const part of parts) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = fieldOf(value, part);
  }
  return value;
}

/** Like `walk`, but the walk must stay on objects all the way (§D.2 step 2). */
function walkStrict(start: unknown, parts: readonly string[]): unknown {
  let value = start;
  for (const part of parts) {
    if (typeof value !== 'object' || value === null || !hasField(value, part)) return undefined;
    value = fieldOf(value, part);
  }
  return value;
}

/**
 * `obj[k]`: arrays by integer index (negative counts from the end), strings by character index
 * (likewise), objects by the own field `k` names (`hasOwnField`); anything else is `undefined`.
 */
export function subscript(target: unknown, key: unknown): unknown {
  if (Array.isArray(target) || typeof target === 'string') {
    if (typeof key !== 'number' || !Number.isInteger(key)) return undefined;
    const index = key < 0 ? target.length + key : key;
    if (index < 0 || index >= target.length) return undefined;
    return target[index];
  }
  if (isPlainObject(target)) return hasOwnField(target, key) ? target[String(key)] : undefined;
  return undefined;
}

function evaluateObject(expr: ObjectExpr, ctx: EvalContext): PlainObject {
  const out: PlainObject = {};
  for (const entry of expr.entries) {
    switch (entry.kind) {
      case 'Property':
        setOwn(out, entry.key.name, evaluate(entry.value, ctx));
        break;
      case 'Spread': {
        // Only objects contribute (later keys override earlier ones); null, arrays and scalars add nothing.
        const value = evaluate(entry.value, ctx);
        if (isPlainObject(value)) {
          for (const key of Object.keys(value)) setOwn(out, key, value[key]);
        }
        break;
      }
    }
  }
  return out;
}

/**
 * §D.5. `name where guard` binds the subject as `name` (in a child scope: a bound name outranks
 * the current record's field of that name, while `.name` stays the field); `_` matches; any other pattern
 * is evaluated and compared with `===`, but an object literal of sub-patterns is a shape test
 * (`{ error: _, code: c }`, object-pattern.ts). No matching arm gives `undefined`.
 */
function evaluateMatch(expr: MatchExpr, ctx: EvalContext): unknown {
  if (expr.guards) return evaluateGuardMatch(expr, ctx);
  const subject = evaluate(expr.subject, ctx);
  for (const arm of expr.arms) {
    const pattern = arm.pattern;
    const wildcard = pattern === null || (isPlainName(pattern) && pattern.parts[0] === '_');
    if (arm.guard !== undefined && pattern !== null && isPlainName(pattern) && !wildcard) {
      const armCtx = bindSubject(ctx, pattern.parts[0]!, subject);
      if (isTruthy(evaluate(arm.guard, armCtx))) return evaluate(arm.result, armCtx);
      continue;
    }
    // A schema's name (no variable of that name) tests the subject against the schema, and binds
    // it, as in a match step; `[Card]`, a list of such records. It was compared as a value: it never
    // matched a record, and matched a null subject (helper 79).
    const schema = pattern !== null && !wildcard ? schemaArm(pattern, ctx) : undefined;
    if (schema !== undefined) {
      const matched =
        schema.list
          ? Array.isArray(subject) && subject.every((item) => matchesSchema(item, schema.decl, ctx.schemas!))
          : subject !== null && subject !== undefined && matchesSchema(subject, schema.decl, ctx.schemas!);
      if (!matched) continue;
      const armCtx = schema.list ? ctx : bindSubject(ctx, schema.decl.name.name, subject);
      if (arm.guard !== undefined && !isTruthy(evaluate(arm.guard, armCtx))) continue;
      return evaluate(arm.result, armCtx);
    }
    // An object literal is a shape test, as in a match step (object-pattern.ts); its names are
    // bound for the guard and the result, its computed values computed here.
    const shape = pattern?.kind === 'Object' ? objectPatternOfLiteral(pattern) : undefined;
    if (shape) {
      const bound = new Map<string, unknown>();
      if (!matchesObjectPattern(shape, subject, bound, (e) => evaluate(e, ctx), ctx.schemas)) continue;
      let armCtx = ctx;
      for (const [name, value] of bound) armCtx = bindSubject(armCtx, name, value);
      if (arm.guard !== undefined && !isTruthy(evaluate(arm.guard, armCtx))) continue;
      return evaluate(arm.result, armCtx);
    }
    // Any other pattern is a value the subject must equal by content (`[1, 2]`, `{ ...base }`).
    if (!wildcard && !contentEqual(evaluate(pattern!, ctx), subject)) continue;
    if (arm.guard !== undefined && !isTruthy(evaluate(arm.guard, ctx))) continue;
    return evaluate(arm.result, ctx);
  }
  return undefined;
}

/** `match { cond => value, … }`: the first arm whose condition (and guard) is truthy; `_` always is. */
function evaluateGuardMatch(expr: MatchExpr, ctx: EvalContext): unknown {
  for (const arm of expr.arms) {
    const pattern = arm.pattern;
    const wildcard = pattern === null || (isPlainName(pattern) && pattern.parts[0] === '_');
    if (!wildcard && !isTruthy(evaluate(pattern!, ctx))) continue;
    if (arm.guard !== undefined && !isTruthy(evaluate(arm.guard, ctx))) continue;
    return evaluate(arm.result, ctx);
  }
  return undefined;
}

/**
 * `coll where cond`: a new array of the items for which `cond` is truthy with the item as the
 * current record (`.field` reads the item). A null or absent collection filters to `[]`; anything
 * else that is not an array is a type error.
 */
function evaluateWhere(expr: WhereExpr, ctx: EvalContext): unknown[] {
  const collection = evaluate(expr.collection, ctx);
  if (collection === null || collection === undefined) return [];
  if (!Array.isArray(collection)) throw typeError("'where'", 'array', collection, spanOf(expr.collection));
  return collection.filter((item) => isTruthy(evaluate(expr.condition, withRecord(ctx, item))));
}

/** The schema a match expression's arm names (`Card`, or `[Card]` for a list of them), when no variable has that name. */
function schemaArm(pattern: Expr, ctx: EvalContext): { decl: SchemaDecl; list: boolean } | undefined {
  if (recordedBefore(ctx, EVAL_RULES_FORMAT)) return undefined;
  const list = pattern.kind === 'Array' && pattern.elements.length === 1 && pattern.elements[0]!.kind === 'Ref';
  const name = list ? (pattern as ArrayExpr).elements[0]! : pattern;
  if (!isPlainName(name) || name.leadingDot) return undefined;
  const head = name.parts[0]!;
  const decl = ctx.schemas?.get(head);
  if (decl === undefined || ctx.scope.get(head) !== undefined || ctx.scope.boundAbsent(head)) return undefined;
  return { decl, list };
}

function isPlainName(expr: Expr): expr is RefExpr {
  return expr.kind === 'Ref' && expr.parts.length === 1;
}

function bindSubject(ctx: EvalContext, name: string, subject: unknown): EvalContext {
  // A bound name outranks the record's field of that name (`resolveRef`), so the record is left
  // as it is: `.name` in the arm is still its field (it was the binder, helper 60).
  const scope = ctx.scope.child();
  scope.bind(name, subject);
  return { ...ctx, scope };
}

/**
 * `any of coll where cond`: the first item for which `cond` (item as current) is truthy, else
 * `undefined`. `any of coll`: the item at floor(random * length), the random number coming from
 * the recorded inputs so replay picks the same one.
 */
function evaluateAnyOf(expr: AnyOfExpr, ctx: EvalContext): unknown {
  const collection = evaluate(expr.collection, ctx);
  if (!Array.isArray(collection)) throw typeError("'any of'", 'array', collection, spanOf(expr.collection));
  if (expr.where !== undefined) {
    for (const item of collection) {
      if (isTruthy(evaluate(expr.where, withRecord(ctx, item)))) return item;
    }
    return undefined;
  }
  if (collection.length === 0) return undefined;
  const r = ctx.inputs.random();
  const index = Math.min(collection.length - 1, Math.max(0, Math.floor(r * collection.length)));
  return collection[Number.isNaN(index) ? 0 : index];
}

const UNSUPPORTED_LABELS: Record<UnsupportedExpr['construct'], string> = {
  range: 'Ranges (`a..b`)',
  superposition: 'Superposition (`a | b`)',
  'parent-reference': 'Parent references (`^name`)',
  pipe: 'Pipes (`x | f(...)`)',
};

function unsupported(expr: UnsupportedExpr): EvaluatorError {
  return new EvaluatorError('R4004', `${UNSUPPORTED_LABELS[expr.construct]} are not supported yet`, spanOf(expr));
}
