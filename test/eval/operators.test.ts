import { describe, expect, it } from 'vitest';
import { EvaluatorError } from '../../engine/eval/eval-errors.js';
import { inOperator } from '../../engine/eval/operators.js';
import type { BinaryOperator } from '../../engine/lang/ast.js';
import { arr, bin, bool, boom, call, cond, ev, index, is, lit, member, nul, num, obj, prop, ref, spread, str, unary, unsupported } from './ast-builders.js';

function binary(op: BinaryOperator, l: unknown, r: unknown): unknown {
  return ev(bin(op, lit(l), lit(r)));
}

function errorOf(fn: () => unknown): EvaluatorError {
  try {
    fn();
  } catch (e) {
    if (e instanceof EvaluatorError) return e;
    throw e;
  }
  throw new Error('expected an EvaluatorError');
}

describe('arithmetic', () => {
  it.each<[BinaryOperator, unknown, unknown, unknown]>([
    ['+', 1, 2, 3],
    ['+', 'a', 'b', 'ab'],
    ['+', 'n=', 5, 'n=5'],
    ['+', 5, '!', '5!'],
    ['+', 'x', null, 'x'],
    ['+', true, 'y', 'truey'],
    ['+', 'list ', [1, 2], 'list [1,2]'],
    ['+', true, 1, 2],
    ['+', '2', 3, '23'],
    ['-', 10, 4, 6],
    ['-', '10', '4', 6],
    ['-', true, false, 1],
    ['*', 2.5, 4, 10],
    ['*', ' 3 ', 2, 6],
    ['/', 9, 4, 2.25],
    ['/', '1e2', 4, 25],
    ['%', 10, 3, 1],
    ['%', -7, 3, -1],
  ])('%s on %j and %j', (op, l, r, expected) => {
    expect(binary(op, l, r)).toEqual(expected);
  });

  it.each<[BinaryOperator, unknown, unknown, string, string]>([
    ['-', null, 1, 'R4002', "Cannot perform '-' on null"],
    ['*', 2, null, 'R4002', "Cannot perform '*' on null"],
    ['+', null, 1, 'R4002', "Cannot perform '+' on null"],
    ['/', 1, 0, 'R4003', 'Division by zero'],
    ['%', 1, 0, 'R4003', 'Division by zero'],
    ['/', 1, '0', 'R4003', 'Division by zero'],
    ['-', 'abc', 1, 'R4001', `Cannot perform '-' on string ("abc")`],
    ['-', '', 1, 'R4001', `Cannot perform '-' on string ("")`],
    ['*', [1], 1, 'R4001', "Cannot perform '*' on array ([1])"],
    ['-', { a: 1 }, 1, 'R4001', `Cannot perform '-' on object ({"a":1})`],
  ])('%s on %j and %j fails with %s', (op, l, r, code, message) => {
    const e = errorOf(() => binary(op, l, r));
    expect(e.code).toBe(code);
    expect(e.message).toBe(message);
  });

  it.each<[unknown, unknown, unknown]>([
    // An ISO instant plus milliseconds (either side) is the instant that much later, as minus is
    // the one earlier; it concatenated ("…Z86400000").
    ['2026-03-01T00:00:00Z', 86_400_000, '2026-03-02T00:00:00.000Z'],
    [3_600_000, '2024-01-01', '2024-01-01T01:00:00.000Z'],
    ['2024-01-01T10:00:00+02:00', -1000, '2024-01-01T07:59:59.000Z'],
    ['0001-01-01T00:00:00Z', 86_400_000, '0001-01-02T00:00:00.000Z'],
    // Anything else with a string still concatenates.
    ['2024', 1, '20241'],
    ['2024-13-01', 1, '2024-13-011'],
    ['2024-01-01', '2024-01-02', '2024-01-012024-01-02'],
    ['2024-01-01', true, '2024-01-01true'],
  ])('%j + %j is %j', (l, r, expected) => {
    expect(binary('+', l, r)).toEqual(expected);
  });

  it('refuses an instant plus milliseconds past what an instant holds', () => {
    const e = errorOf(() => binary('+', '2024-01-01', 8.64e15));
    expect(e.code).toBe('R4014');
    expect(e.message).toContain('past what an instant can hold');
  });

  it('reads years 0000–0099 as written, not as 1900–1999', () => {
    expect(binary('-', '0001-01-01T00:00:00Z', '1901-01-01T00:00:00Z')).toBe(-693_960 * 86_400_000); // 1900 years, 460 of them leap
    expect(binary('<', '0050-01-01', '1949-06-01')).toBe(true);
    expect(binary('-', '0000-03-01', '0000-02-28')).toBe(2 * 86_400_000); // year 0 is a leap year
    expect(binary('-', '0099-12-31T00:00:00Z', 1000)).toBe('0099-12-30T23:59:59.000Z');
  });

  it('says a missing operand is null and that it is missing', () => {
    const e = errorOf(() => ev(bin('-', ref('nope'), num(1))));
    expect(e.code).toBe('R4002');
    expect(e.message).toBe("Cannot perform '-' on null (the value is missing)");
  });

  it('points at the operator expression', () => {
    const expr = { ...bin('/', num(1), num(0)), start: 7, end: 12 };
    expect(errorOf(() => ev(expr)).span).toEqual({ start: 7, end: 12 });
  });

  it('unary minus and plus coerce; not negates truthiness', () => {
    expect(ev(unary('-', str('4')))).toBe(-4);
    expect(ev(unary('+', bool(true)))).toBe(1);
    expect(ev(unary('not', num(0)))).toBe(true);
    expect(ev(unary('not', arr()))).toBe(false);
    expect(errorOf(() => ev(unary('-', nul()))).code).toBe('R4002');
  });
});

describe('equality is strict', () => {
  it.each<[unknown, unknown, boolean]>([
    [1, 1, true],
    [1, '1', false],
    ['a', 'a', true],
    [null, null, true],
    [true, 1, false],
    [[1], [1], false],
    [{}, {}, false],
  ])('%j == %j is %s', (l, r, expected) => {
    expect(binary('==', l, r)).toBe(expected);
    expect(binary('!=', l, r)).toBe(!expected);
  });

  it('null == missing is true (an absent value is null to ==), as is missing == missing; neither equals 0, "" or false', () => {
    expect(ev(bin('==', nul(), ref('missing')))).toBe(true);
    expect(ev(bin('!=', ref('missing'), nul()))).toBe(false);
    expect(ev(bin('==', ref('a'), ref('b')))).toBe(true);
    for (const falsy of [0, '', false]) {
      expect(ev(bin('==', nul(), ref('x')), { vars: { x: falsy } })).toBe(false);
      expect(ev(bin('!=', ref('missing'), ref('x')), { vars: { x: falsy } })).toBe(true);
    }
  });

  it('the same object compares equal to itself', () => {
    const shared = { x: 1 };
    expect(ev(bin('==', ref('a'), ref('b')), { vars: { a: shared, b: shared } })).toBe(true);
  });
});

describe('ordering comparisons (V2)', () => {
  it.each<[BinaryOperator, unknown, unknown, boolean]>([
    ['<', 1, 2, true],
    ['>', 1, 2, false],
    ['<=', 2, 2, true],
    ['>=', 1, 2, false],
    ['<', 'apple', 'banana', true],
    ['<', 'B', 'a', true],
    ['>', true, false, true],
    ['<', null, 5, false],
    ['>=', null, 5, false],
    ['<', 5, null, false],
    ['<=', null, null, false],
    // ISO-8601 strings compare as instants, not as text
    ['<', '2024-01-01T23:00:00Z', '2024-01-02', true],
    ['>', '2024-01-01T10:00:00+02:00', '2024-01-01T09:30:00Z', false],
    ['<', '2024-01-01T10:00:00+02:00', '2024-01-01T09:30:00Z', true],
    ['==', '2024-01-01', '2024-01-01T00:00:00Z', false], // equality stays strict
    ['>=', '2024-01-01', '2024-01-01T00:00:00Z', true],
    ['<', '2024-01-01T00:00:00.5Z', '2024-01-01T00:00:00.25Z', false],
    // not two ISO strings: plain code-unit order
    ['<', '2024-13-01', '2024-02-01', false],
    ['<', '10', '9', true],
  ])('%s with %j and %j is %s', (op, l, r, expected) => {
    expect(binary(op, l, r)).toBe(expected);
  });

  it('NaN on either side is false', () => {
    // No expression computes NaN (R4015), and the log holds none; a host value still compares false.
    expect(ev(bin('<', ref('nan'), num(1)), { vars: { nan: Number.NaN } })).toBe(false);
    expect(ev(bin('>=', num(1), ref('nan')), { vars: { nan: Number.NaN } })).toBe(false);
  });

  it.each([
    ['*', 1e300, 1e300, 'Infinity'],
    ['-', -1e308, 1e308, '-Infinity'],
    ['/', 1e308, 1e-308, 'Infinity'],
  ])('%s of %j and %j, beyond a 64-bit float, is R4015 rather than a null stored or sent', (op, l, r, shown) => {
    const e = errorOf(() => ev(bin(op as '*', ref('l'), ref('r')), { vars: { l, r } }));
    expect(e.code).toBe('R4015');
    expect(e.message).toContain(`gives ${shown}, beyond what a number can hold`);
  });

  it('a string that is no number a run can hold is no number: "Infinity" and "1e999" are text', () => {
    expect(errorOf(() => ev(bin('-', ref('s'), num(1)), { vars: { s: 'Infinity' } })).code).toBe('R4001');
    expect(errorOf(() => ev(bin('*', ref('s'), num(1)), { vars: { s: '1e999' } })).code).toBe('R4001');
  });

  it('a missing field compares false instead of throwing (fix of M10)', () => {
    expect(ev(bin('>=', ref('.age'), num(18)), { current: { name: 'x' } })).toBe(false);
  });

  it.each<[unknown, unknown]>([
    [1, '1'],
    ['a', true],
    [[1], 1],
    [{}, 'x'],
  ])('mixed types %j and %j are an error', (l, r) => {
    const e = errorOf(() => binary('<', l, r));
    expect(e.code).toBe('R4008');
    expect(e.message).toMatch(/^Cannot compare .* using '<'$/);
  });

  it('comparisons chain left-associatively (a < b < c compares a boolean)', () => {
    expect(errorOf(() => ev(bin('<', bin('<', num(1), num(2)), num(3)))).code).toBe('R4008');
  });
});

describe('and / or / ?? return operand values and short-circuit', () => {
  it.each<[BinaryOperator, unknown, unknown, unknown]>([
    ['and', 1, 'x', 'x'],
    ['and', 0, 'x', 0],
    ['and', '', 'x', ''],
    ['or', null, 'default', 'default'],
    ['or', 'set', 'default', 'set'],
    ['or', 0, false, false],
    ['??', null, 'd', 'd'],
    ['??', 0, 'd', 0],
    ['??', '', 'd', ''],
    ['??', false, 'd', false],
  ])('%j %s %j is %j', (op, l, r, expected) => {
    expect(binary(op, l, r)).toEqual(expected);
  });

  it('does not evaluate the right side when the left decides', () => {
    expect(ev(bin('and', bool(false), boom()))).toBe(false);
    expect(ev(bin('or', str('yes'), boom()))).toBe('yes');
    expect(ev(bin('??', num(0), boom()))).toBe(0);
    expect(() => ev(bin('and', bool(true), boom()))).toThrow(EvaluatorError);
    expect(() => ev(bin('or', nul(), boom()))).toThrow(EvaluatorError);
    expect(() => ev(bin('??', ref('missing'), boom()))).toThrow(EvaluatorError);
  });

  it('?? treats a missing value like null', () => {
    expect(ev(bin('??', ref('x.y'), str('none')), { vars: { x: {} } })).toBe('none');
  });
});

describe('in', () => {
  it.each<[unknown, unknown, boolean]>([
    ['vip', ['vip', 'a'], true],
    ['VIP', ['vip'], false],
    [1, ['1'], false],
    [null, [null], true],
    [Number.NaN, [Number.NaN], false],
    ['ell', 'hello', true],
    ['z', 'hello', false],
    ['a', { a: 1 }, true],
    ['b', { a: 1 }, false],
    [1, { '1': true }, true],
    ['toString', {}, false], // own keys only (the original saw inherited ones)
    ['a', null, false],
    ['a', 5, false],
  ])('%j in %j is %s', (l, r, expected) => {
    expect(binary('in', l, r)).toBe(expected);
  });

  it('an absent value is in a list holding null, as `== null` holds for it', () => {
    // Helper 79: `where .status in [null, "draft"]` dropped the records whose API left `status` out.
    const at = { start: 0, end: 0 };
    expect(inOperator(undefined, [null, 'draft'], at)).toBe(true);
    expect(inOperator(null, [undefined], at)).toBe(true);
    expect(inOperator(undefined, ['draft'], at)).toBe(false);
  });

  it('an object, array or date names no field of an object, even one with no string form', () => {
    // A null-prototype object has no toString: String(key) would throw a TypeError, not an R4xxx.
    const keys = [Object.create(null) as object, {}, [], ['a'], new Date(0)];
    const target = { a: 1, '': 2, '[object Object]': 3, '1970-01-01T00:00:00.000Z': 4 };
    for (const key of keys) {
      expect(binary('in', key, target)).toBe(false);
      expect(ev(index(ref('t'), ref('k')), { vars: { t: target, k: key } })).toBeUndefined();
      expect(ev(call('includes', ref('t'), ref('k')), { vars: { t: target, k: key } })).toBe(false);
    }
  });

  it('a non-string in a string is an error', () => {
    const e = errorOf(() => binary('in', 5, '12345'));
    expect(e.code).toBe('R4001');
    expect(e.message).toBe("'in' on a string expected a string but got: number (5)");
  });
});

describe('is T', () => {
  it.each<[unknown, string, boolean]>([
    [[], 'array', true],
    [{}, 'array', false],
    [{}, 'object', true],
    [[], 'object', false],
    [null, 'object', false],
    ['s', 'string', true],
    [1.5, 'number', true],
    [1.5, 'decimal', true],
    ['1', 'number', false],
    [3, 'int', true],
    [3.5, 'integer', false],
    [false, 'boolean', true],
    [null, 'null', true],
    [0, 'null', false],
    ['2024-03-01', 'date', true],
    ['2024-03-01T10:00:00Z', 'Date', true],
    ['Tue, 05 Mar 2024 10:00:00 GMT', 'date', true],
    ['Tue, 05 Mar 2024 10:00:00 +0000', 'date', true],
    ['0050-01-01', 'date', true],
    ['Jan 1, 0050', 'date', false], // Date.parse reads it as 1950
    ['1', 'date', false],
    ['2024-02-31', 'date', false],
    ['hello', 'date', false],
    ['x', 'STRING', true],
  ])('%j is %s → %s', (value, type, expected) => {
    expect(ev(is(lit(value), type))).toBe(expected);
  });

  it('undefined is undefined', () => {
    expect(ev(is(ref('missing'), 'undefined'))).toBe(true);
    expect(ev(is(num(1), 'undefined'))).toBe(false);
    expect(ev(is(nul(), 'undefined'))).toBe(false);
  });

  it('an absent value is null, as it equals null', () => {
    expect(ev(is(ref('missing'), 'null'))).toBe(true);
    expect(ev(is(member(obj(prop('n', nul())), 'nope'), 'null'))).toBe(true);
    expect(ev(bin('==', ref('missing'), nul()))).toBe(true);
  });

  it('an unknown type is an error', () => {
    const e = errorOf(() => ev(is(num(1), 'Widget')));
    expect(e.code).toBe('R4007');
    expect(e.message).toContain('Unknown type `Widget`');
  });
});

describe('conditionals, arrays, objects', () => {
  it('picks a branch by truthiness and evaluates only that branch', () => {
    expect(ev(cond(num(1), str('a'), boom()))).toBe('a');
    expect(ev(cond(str(''), boom(), str('b')))).toBe('b');
    expect(ev(cond(arr(), str('empty arrays are truthy'), boom()))).toBe('empty arrays are truthy');
  });

  it('builds arrays (empty allowed) and objects in order', () => {
    expect(ev(arr())).toEqual([]);
    expect(ev(arr(num(1), str('x'), nul()))).toEqual([1, 'x', null]);
    const value = ev(obj(prop('b', num(1)), prop('a', num(2))));
    expect(Object.keys(value as object)).toEqual(['b', 'a']);
  });

  it('spreads objects; later keys override; non-objects add nothing', () => {
    const value = ev(
      obj(prop('kind', str('old')), spread(ref('m')), prop('id', num(7)), spread(nul()), spread(ref('list')), spread(str('ab'))),
      { vars: { m: { kind: 'card', ref: 'r' }, list: [1, 2] } },
    );
    expect(value).toEqual({ kind: 'card', ref: 'r', id: 7 });
  });

  it('does not mutate a spread source', () => {
    const m = { a: 1 };
    ev(obj(spread(ref('m')), prop('a', num(2))), { vars: { m } });
    expect(m).toEqual({ a: 1 });
  });

  it('a __proto__ key is a plain field, not a prototype change', () => {
    const value = ev(obj(prop('__proto__', obj(prop('polluted', bool(true))))));
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(value, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('unsupported constructs say so', () => {
    for (const [construct, text] of [
      ['range', 'Ranges (`a..b`) are not supported yet'],
      ['superposition', 'Superposition (`a | b`) are not supported yet'],
      ['parent-reference', 'Parent references (`^name`) are not supported yet'],
      ['pipe', 'Pipes (`x | f(...)`) are not supported yet'],
    ] as const) {
      const e = errorOf(() => ev(unsupported(construct)));
      expect(e.code).toBe('R4004');
      expect(e.message).toBe(text);
    }
  });
});
