/**
 * Transforms (§C.4) and field maps (shared with `map`, §C.3).
 *
 * `applyTransform` picks the first variant whose source schema matches (`_` or no schema always
 * does; a schema the mission does not declare never does) and whose guard, evaluated with the
 * value as the current record, is truthy; it then evaluates that variant's fields with the value
 * as the current record. Invariant: the result holds exactly the variant's fields, in order.
 */
import type { Expr, FieldMapping, TransformDecl, TransformVariant, Span } from '../lang/ast.js';
import { EvaluatorError, withinDeclaration } from './eval-errors.js';
import { evaluate } from './evaluate.js';
import { matchesSchema, type SchemaTable } from './schema-match.js';
import { EVAL_RULES_FORMAT, recordedBefore, withRecord, type EvalContext, type Scope } from './scope.js';
import { describeValue, isTruthy, setOwn, type PlainObject } from './values.js';
import { spanOf } from '../lang/ast.js';

/** Told about a variant skipped because it names a schema the mission does not declare. */
export type TransformWarning = (message: string, span: Span) => void;

/** `source`: the expression the value came from (`apply T to o.customer`), named in R4001. */
export function applyTransform(
  t: TransformDecl,
  value: unknown,
  ctx: EvalContext,
  schemas: SchemaTable,
  warn?: TransformWarning,
  source?: Expr,
): unknown {
  const own = transformContext(ctx, value);
  const valueCtx = withRecord(own, value);
  const variant = t.variants.find((v) => variantApplies(v, value, valueCtx, schemas, t, warn));
  if (variant === undefined) {
    throw new EvaluatorError(
      'R4009',
      `No matching transform variant for \`${t.name.name}\`; the value was: ${describeValue(value)}`,
      spanOf(t.name),
    );
  }
  // Runs recorded before log format 7 failed with the bare message: their verify compares it.
  const named = recordedBefore(ctx, EVAL_RULES_FORMAT) ? undefined : `transform \`${t.name.name}\``;
  return evaluateFieldMap(variant.fields, mappingContext(own, value, source), named);
}

/**
 * A transform is declared once for the mission and applied by any action: a bare name in it is
 * the value's field first (§C.4, §D.2), and a variable of the applying action only where the
 * value has no such field. In an action a variable outranks a field of the same name
 * (evaluate.ts, resolveRef); here the value's fields are bound over the action's variables, or
 * a `let status` in one action chose another variant and filled its fields: one transform
 * mapped by who applied it.
 */
function transformContext(ctx: EvalContext, value: unknown): EvalContext {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return ctx;
  let scope: Scope | undefined;
  for (const [name, field] of Object.entries(value)) {
    if (ctx.scope.get(name) === undefined && !ctx.scope.boundAbsent(name)) continue;
    (scope ??= ctx.scope.child()).bind(name, field);
  }
  return scope === undefined ? ctx : { ...ctx, scope };
}

/**
 * The context a field map (`map`'s, a transform variant's) is evaluated in: `value` as the record
 * being mapped; of null or absent there is no record (EvalContext.noRecord: a `.field` read fails,
 * R4001, naming `source` when it is a name), while variables and aggregates still map.
 */
export function mappingContext(ctx: EvalContext, value: unknown, source?: Expr): EvalContext {
  const none = value === null ? 'null' : value === undefined ? 'absent' : undefined;
  if (none === undefined) return { ...ctx, current: value, mapped: value };
  const named = source?.kind === 'Ref' ? `${source.leadingDot ? '.' : ''}${source.parts.join('.')}` : undefined;
  return { ...ctx, current: undefined, noRecord: { state: none, ...(named !== undefined ? { source: named } : {}) } };
}

function variantApplies(
  variant: TransformVariant,
  value: unknown,
  valueCtx: EvalContext,
  schemas: SchemaTable,
  t: TransformDecl,
  warn: TransformWarning | undefined,
): boolean {
  if (variant.sourceSchema !== null && variant.sourceSchema.name !== '_') {
    const schema = schemas.get(variant.sourceSchema.name);
    if (schema === undefined) {
      warn?.(
        `Transform \`${t.name.name}\` skips a variant for the undeclared schema \`${variant.sourceSchema.name}\``,
        spanOf(variant.sourceSchema),
      );
      return false;
    }
    if (!matchesSchema(value, schema, schemas)) return false;
  }
  return variant.guard === undefined || isTruthy(evaluate(variant.guard, valueCtx));
}

/** `{ name: expr, … }` of `map` and transforms: each expression evaluated in `ctx`, in order. */
export function evaluateFieldMap(fields: readonly FieldMapping[], ctx: EvalContext, declaration?: string): PlainObject {
  const out: PlainObject = {};
  for (const field of fields) {
    let value: unknown;
    try {
      value = evaluate(field.value, ctx);
    } catch (error) {
      // A transform is applied by a step elsewhere: its failure names the transform and field.
      throw declaration === undefined ? error : withinDeclaration(error, `${declaration}, field \`${field.name.name}\``);
    }
    setOwn(out, field.name.name, value);
  }
  return out;
}
