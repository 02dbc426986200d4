/**
 * Property: on any expression tree of bounded depth, over any JSON-ish data, `evaluate` either
 * returns a value or throws an `EvaluatorError` — never a TypeError, RangeError or the like.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EvaluatorError } from '../../engine/eval/eval-errors.js';
import { evaluate } from '../../engine/eval/evaluate.js';
import { BUILTIN_NAMES } from '../../engine/lang/builtin-names.js';
import { fixedInputs } from '../../engine/eval/inputs.js';
import { Scope } from '../../engine/eval/scope.js';
import type { BinaryOperator, Expr } from '../../engine/lang/ast.js';

const S = { start: 0, end: 0 };
const NAMES = ['a', 'b', 'id', 'response', 'tags', 'x', '_', 'constructor', '__proto__', 'length', '0'];
const OPS: BinaryOperator[] = ['+', '-', '*', '/', '%', '==', '!=', '<', '>', '<=', '>=', 'and', 'or', '??', 'in'];
const TYPES = ['array', 'object', 'string', 'number', 'int', 'date', 'null', 'undefined', 'Widget'];
const FUNCS = [...BUILTIN_NAMES, 'filter', 'nope'];

const json = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, false, 0, -1, 2.5, 1e21, '', '12', 'abc', '2024-01-01', Number.NaN),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...NAMES), tie('value'), { maxKeys: 4 }),
  ),
})).value;

const smallNumber = fc.oneof(fc.integer({ min: -50, max: 50 }), fc.double({ min: -1e6, max: 1e6, noNaN: false }));

const expr = fc.letrec<{ e: Expr }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true, maxDepth: 5 },
    smallNumber.map((value): Expr => ({ kind: 'Number', value, ...S })),
    fc.constantFrom('', 'a', 'vip', '2024-03-01T00:00:00Z', '7.5', 'TOKEN').map((value): Expr => ({ kind: 'String', value, ...S })),
    fc.boolean().map((value): Expr => ({ kind: 'Boolean', value, ...S })),
    fc.constant<Expr>({ kind: 'Null', ...S }),
    fc.tuple(fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }), fc.boolean()).map(
      ([parts, leadingDot]): Expr => ({ kind: 'Ref', parts, leadingDot, ...S }),
    ),
    fc.tuple(tie('e'), fc.constantFrom(...NAMES)).map(([object, property]): Expr => ({ kind: 'Member', object, property, ...S })),
    fc.tuple(tie('e'), tie('e')).map(([object, index]): Expr => ({ kind: 'Index', object, index, ...S })),
    fc.tuple(fc.constantFrom(...FUNCS), fc.array(tie('e'), { maxLength: 3 })).map(
      ([name, args]): Expr => ({ kind: 'Call', callee: { name, ...S }, args, ...S }),
    ),
    fc.tuple(fc.constantFrom<'-' | '+' | 'not'>('-', '+', 'not'), tie('e')).map(([operator, operand]): Expr => ({ kind: 'Unary', operator, operand, ...S })),
    fc.tuple(fc.constantFrom(...OPS), tie('e'), tie('e')).map(([operator, left, right]): Expr => ({ kind: 'Binary', operator, left, right, ...S })),
    fc.tuple(tie('e'), fc.constantFrom(...TYPES)).map(([operand, name]): Expr => ({ kind: 'Is', operand, type: { name, ...S }, ...S })),
    fc.tuple(tie('e'), tie('e'), tie('e')).map(([test, consequent, alternate]): Expr => ({ kind: 'Conditional', test, consequent, alternate, ...S })),
    fc.array(tie('e'), { maxLength: 3 }).map((elements): Expr => ({ kind: 'Array', elements, ...S })),
    fc.array(fc.tuple(fc.boolean(), fc.constantFrom(...NAMES), tie('e')), { maxLength: 3 }).map(
      (entries): Expr => ({
        kind: 'Object',
        entries: entries.map(([isSpread, key, value]) =>
          isSpread ? { kind: 'Spread' as const, value, ...S } : { kind: 'Property' as const, key: { name: key, ...S }, value, ...S },
        ),
        ...S,
      }),
    ),
    fc.tuple(tie('e'), fc.array(fc.tuple(fc.option(tie('e')), fc.option(tie('e')), tie('e')), { minLength: 1, maxLength: 3 })).map(
      ([subject, arms]): Expr => ({
        kind: 'MatchExpr',
        subject,
        arms: arms.map(([pattern, guard, result]) => ({ pattern, guard: guard ?? undefined, result, ...S })),
        ...S,
      }),
    ),
    fc.tuple(tie('e'), fc.option(tie('e'))).map(([collection, where]): Expr => ({ kind: 'AnyOf', collection, where: where ?? undefined, ...S })),
    fc.constantFrom<Expr['kind']>('Unsupported').map((): Expr => ({ kind: 'Unsupported', construct: 'range', ...S })),
  ),
})).e;

describe('evaluate on random expressions', () => {
  it('returns a value or throws an EvaluatorError, nothing else', () => {
    fc.assert(
      fc.property(expr, json, json, fc.option(json), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (e, vars, response, current, r) => {
        const scope = new Scope();
        if (vars !== null && typeof vars === 'object' && !Array.isArray(vars)) {
          for (const [k, v] of Object.entries(vars)) scope.set(k, v);
        }
        const ctx = { scope, response, current: current ?? undefined, inputs: fixedInputs({ now: 1_700_000_000_000, random: r, env: { TOKEN: 't' } }) };
        try {
          evaluate(e, ctx);
        } catch (error) {
          if (!(error instanceof EvaluatorError)) throw error;
          expect(error.code).toMatch(/^R4\d{3}$/);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
