/**
 * Tiny builders for expression ASTs, so evaluator tests do not depend on the parser, plus `ev()`,
 * which evaluates an expression with a scope built from plain variables.
 */
import type { Expr, FieldMapping, MatchExprArm, ObjectEntry, Span, BinaryOperator, SchemaDecl, SchemaField, TypeRef, TransformDecl, TransformVariant } from '../../engine/lang/ast.js';
import { evaluate } from '../../engine/eval/evaluate.js';
import { fixedInputs, type FixedInputsOptions } from '../../engine/eval/inputs.js';
import { Scope, type EvalContext } from '../../engine/eval/scope.js';

export const S: Span = { start: 0, end: 0 };

export const num = (value: number): Expr => ({ kind: 'Number', value, ...S });
export const str = (value: string): Expr => ({ kind: 'String', value, ...S });
export const bool = (value: boolean): Expr => ({ kind: 'Boolean', value, ...S });
export const nul = (): Expr => ({ kind: 'Null', ...S });
/** `ref("a.b.c")`, or `ref(".a")` for the leading-dot form. */
export const ref = (dotted: string): Expr => {
  const leadingDot = dotted.startsWith('.');
  return { kind: 'Ref', parts: (leadingDot ? dotted.slice(1) : dotted).split('.'), leadingDot, ...S };
};
export const member = (object: Expr, property: string): Expr => ({ kind: 'Member', object, property, ...S });
export const index = (object: Expr, i: Expr): Expr => ({ kind: 'Index', object, index: i, ...S });
export const call = (name: string, ...args: Expr[]): Expr => ({ kind: 'Call', callee: { name, ...S }, args, ...S });
export const unary = (operator: '-' | '+' | 'not', operand: Expr): Expr => ({ kind: 'Unary', operator, operand, ...S });
export const bin = (operator: BinaryOperator, left: Expr, right: Expr): Expr => ({ kind: 'Binary', operator, left, right, ...S });
export const is = (operand: Expr, type: string): Expr => ({ kind: 'Is', operand, type: { name: type, ...S }, ...S });
export const cond = (test: Expr, consequent: Expr, alternate: Expr): Expr => ({ kind: 'Conditional', test, consequent, alternate, ...S });
export const arr = (...elements: Expr[]): Expr => ({ kind: 'Array', elements, ...S });
export const prop = (key: string, value: Expr): ObjectEntry => ({ kind: 'Property', key: { name: key, ...S }, value, ...S });
export const spread = (value: Expr): ObjectEntry => ({ kind: 'Spread', value, ...S });
export const obj = (...entries: ObjectEntry[]): Expr => ({ kind: 'Object', entries, ...S });
export const arm = (pattern: Expr | null, result: Expr, guard?: Expr): MatchExprArm => ({ pattern, guard, result, ...S });
export const match = (subject: Expr, ...arms: MatchExprArm[]): Expr => ({ kind: 'MatchExpr', subject, arms, ...S });
export const anyOf = (collection: Expr, where?: Expr): Expr => ({ kind: 'AnyOf', collection, where, ...S });
export const unsupported = (construct: 'range' | 'superposition' | 'parent-reference' | 'pipe'): Expr => ({ kind: 'Unsupported', construct, ...S });
/** An expression that fails if it is ever evaluated: proves short-circuiting. */
export const boom = (): Expr => unsupported('range');

/** Turns a JSON-ish value into a literal expression tree. */
export function lit(value: unknown): Expr {
  if (value === null) return nul();
  if (typeof value === 'number') return num(value);
  if (typeof value === 'string') return str(value);
  if (typeof value === 'boolean') return bool(value);
  if (Array.isArray(value)) return arr(...value.map(lit));
  if (typeof value === 'object') return obj(...Object.entries(value as object).map(([k, v]) => prop(k, lit(v))));
  throw new Error(`lit: unsupported ${typeof value}`);
}

export interface EvOptions {
  vars?: Record<string, unknown>;
  response?: unknown;
  current?: unknown;
  inputs?: FixedInputsOptions;
  scope?: Scope;
}

export function ctxOf(options: EvOptions = {}): EvalContext {
  const scope = options.scope ?? new Scope();
  for (const [k, v] of Object.entries(options.vars ?? {})) scope.set(k, v);
  const ctx: EvalContext = { scope, response: options.response, inputs: fixedInputs(options.inputs) };
  if ('current' in options) ctx.current = options.current;
  return ctx;
}

export function ev(expr: Expr, options: EvOptions = {}): unknown {
  return evaluate(expr, ctxOf(options));
}

// --- declarations -------------------------------------------------------------------------------

export const named = (name: string): TypeRef => ({ kind: 'NamedType', name, ...S });
export const arrayOf = (element: TypeRef): TypeRef => ({ kind: 'ArrayType', element, ...S });
export const objectOf = (fields: SchemaField[]): TypeRef => ({ kind: 'ObjectType', fields, ...S });
export const field = (name: string, type: TypeRef | string, optional = false): SchemaField => ({
  name: { name, ...S },
  type: typeof type === 'string' ? named(type) : type,
  optional,
  ...S,
});
export const schema = (name: string, ...fields: SchemaField[]): SchemaDecl => ({ kind: 'Schema', name: { name, ...S }, fields, ...S });
export const mapping = (name: string, value: Expr): FieldMapping => ({ name: { name, ...S }, value, ...S });
export const variant = (source: string | null, target: string, fields: FieldMapping[], guard?: Expr): TransformVariant => ({
  sourceSchema: source === null ? null : { name: source, ...S },
  guard,
  targetSchema: { name: target, ...S },
  fields,
  ...S,
});
export const transform = (name: string, ...variants: TransformVariant[]): TransformDecl => ({ kind: 'Transform', name: { name, ...S }, variants, ...S });
