import { describe, expect, it } from 'vitest';
import { BUILTIN_ARITY, BUILTIN_NAMES, NONDETERMINISTIC_BUILTINS } from '../../engine/lang/builtin-names.js';
import { IMPLEMENTED_BUILTINS, RANGE_CAP } from '../../engine/eval/builtins.js';
import { EvaluatorError } from '../../engine/eval/eval-errors.js';
import type { Expr } from '../../engine/lang/ast.js';
import { call, ev, lit, ref, str, type EvOptions } from './ast-builders.js';

/** Calls a built-in with literal arguments. */
function fn(name: string, ...args: unknown[]): unknown {
  return ev(call(name, ...args.map(lit)));
}

function errorOf(run: () => unknown): EvaluatorError {
  try {
    run();
  } catch (e) {
    if (e instanceof EvaluatorError) return e;
    throw e;
  }
  throw new Error('expected an EvaluatorError');
}

describe('the name table', () => {
  it('lists exactly the implemented built-ins, each with an arity', () => {
    expect([...IMPLEMENTED_BUILTINS].sort()).toEqual([...BUILTIN_NAMES].sort());
    for (const name of BUILTIN_NAMES) {
      const arity = BUILTIN_ARITY[name]!;
      expect(arity.min).toBeLessThanOrEqual(arity.max);
    }
    for (const name of NONDETERMINISTIC_BUILTINS) expect(BUILTIN_NAMES.has(name)).toBe(true);
  });
});

type Case = [string, unknown[], unknown];

const cases: Case[] = [
  // §D.6
  ['length', [[1, 2, 3]], 3],
  ['length', ['héllo'], 5],
  ['length', [{ a: 1 }], 0],
  ['length', [null], 0],
  ['count', [[1, 2]], 2],
  ['count', ['abc'], 0],
  ['sum', [[1, 2, 3.5]], 6.5],
  ['sum', [['1', 2, true]], 4],
  ['sum', [[]], 0],
  ['first', [[1, 2]], 1],
  ['first', [[]], undefined],
  ['first', [null], undefined],
  ['last', [[1, 2]], 2],
  ['last', [[]], undefined],
  ['round', [2.5], 3],
  // Halves away from zero, symmetric for negatives (Math.round gave -2 and -1), decided on the
  // decimal digits as written (1.005 is 1.00499… as a double).
  ['round', [-2.5], -3],
  ['round', [-0.5], -1],
  ['round', [-0.4], 0],
  ['round', [-2.4], -2],
  ['round', [-1.005, 2], -1.01],
  ['round', [1.45, 1], 1.5],
  ['round', [-1.45, 1], -1.5],
  ['round', [-1234.5, -2], -1200],
  ['round', [-1250, -2], -1300],
  ['round', [-1e-7, 2], 0],
  ['round', ['2.4'], 2],
  ['round', [1.005, 2], 1.01],
  ['round', [3.14159, 3], 3.142],
  ['round', [1234.5, -2], 1200],
  ['round', [1e-7, 2], 0],
  ['floor', [2.7], 2],
  ['floor', [-2.1], -3],
  ['ceil', [2.1], 3],
  ['abs', [-4], 4],
  ['abs', ['-4.5'], 4.5],
  ['max', [1, 5, 3], 5],
  ['max', [[3, 9]], 9],
  ['min', [1, 5], 1],
  ['min', [['4', 2]], 2],
  ['max', [7], 7],
  // ISO instants (every item one): the latest / earliest, as given; ordered as instants, offsets included.
  ['max', [['2024-01-02T00:00:00Z', '2024-03-01', '2024-02-10T10:00:00+05:00']], '2024-03-01'],
  ['min', ['2024-01-02T00:00:00Z', '2024-01-02T01:00:00+02:00'], '2024-01-02T01:00:00+02:00'],
  ['max', ['10', '9'], 10],
  ['concat', ['#', 'p1', '/', 3], '#p1/3'],
  ['concat', ['a', null, 'b'], 'ab'],
  ['concat', [], ''],
  ['concat', [true, [1], { a: 1 }], 'true[1]{"a":1}'],
  // Arrays only: one array (upstream's docs), not "[1,2][3,4]".
  ['concat', [[1, 2], [3, 4]], [1, 2, 3, 4]],
  ['concat', [[1], [], [[2]]], [1, [2]]],
  ['concat', [[1], 'x'], '[1]x'],
  ['parseNumber', ['7.5'], 7.5],
  ['parseNumber', [' 12 '], 12],
  ['parseNumber', ['abc'], null],
  ['parseNumber', ['1e999'], null],
  ['parseNumber', ['Infinity'], null],
  ['parseNumber', [''], null],
  ['parseNumber', [null], null],
  ['parseNumber', [true], 1],
  ['parseNumber', [[5]], null],
  ['fromUnix', [0], '1970-01-01T00:00:00.000Z'],
  ['fromUnix', [1700000000], '2023-11-14T22:13:20.000Z'],
  ['fromUnix', ['1700000000'], '2023-11-14T22:13:20.000Z'],
  ['fromUnix', [null], null],
  ['fromUnix', ['soon'], null],
  ['fromUnix', [1e20], null],
  ['range', [3], [0, 1, 2]],
  ['range', [2, 5], [2, 3, 4]],
  ['range', [5, 2], []],
  ['range', [0], []],
  // doc-only helpers we implement
  ['lowercase', ['AbC'], 'abc'],
  ['lowercase', [null], null],
  ['uppercase', ['abc'], 'ABC'],
  ['trim', ['  x  '], 'x'],
  ['substring', ['hello', 1, 3], 'el'],
  ['substring', ['hello', 2], 'llo'],
  ['substring', ['hello', -3], 'llo'],
  ['substring', ['hello', 3, 1], ''],
  ['substring', ['hello', 0, 99], 'hello'],
  ['split', ['a,b,,c', ','], ['a', 'b', '', 'c']],
  ['split', ['abc', ''], ['a', 'b', 'c']],
  ['join', [['a', 1, null]], 'a,1,'],
  ['join', [['a', 'b'], ' - '], 'a - b'],
  ['replace', ['a.b.c', '.', '/'], 'a/b/c'],
  ['replace', ['cost: X', 'X', '$&1'], 'cost: $&1'],
  ['replace', ['aaa', 'aa', 'b'], 'ba'],
  ['includes', [[1, 2], 2], true],
  ['includes', [[1, 2], '2'], false],
  ['includes', ['hello', 'ell'], true],
  ['includes', [{ k: 1 }, 'k'], true],
  ['includes', [null, 'k'], false],
  ['includes', [['draft'], null], false],
  ['contains', ['hello', 'xyz'], false],
  ['startsWith', ['hello', 'he'], true],
  ['startsWith', [null, 'he'], false],
  ['endsWith', ['hello', 'lo'], true],
  ['endsWith', ['hello', 'he'], false],
  ['isEmpty', [null], true],
  ['isEmpty', [''], true],
  ['isEmpty', [[]], true],
  ['isEmpty', [{}], true],
  ['isEmpty', [0], false],
  ['isEmpty', [' '], false],
  ['isEmpty', [[0]], false],
  ['keys', [{ b: 1, a: 2 }], ['b', 'a']],
  ['values', [{ b: 1, a: 2 }], [1, 2]],
  ['flatten', [[[1], 2, [3, [4]]]], [1, 2, 3, [4]]],
  ['unique', [[1, 2, 1, '1', 3, 2]], [1, 2, '1', 3]],
  ['unique', [[{ a: 1, b: 2 }, { b: 2, a: 1 }, [1], [1]]], [{ a: 1, b: 2 }, [1]]],
  ['sort', [[3, 1, 2, 10]], [1, 2, 3, 10]],
  ['sort', [['b', 'a', 'B', 'aa']], ['B', 'a', 'aa', 'b']],
  ['sort', [[]], []],
  // ISO instants sort as instants, as `<` compares them: 01:30-08:00 is 09:30Z, after 05:00Z; a
  // date-only string is its UTC midnight; equal instants keep code-unit order.
  ['sort', [['2024-03-10T01:30:00-08:00', '2024-03-10T05:00:00Z', '2024-03-10']], ['2024-03-10', '2024-03-10T05:00:00Z', '2024-03-10T01:30:00-08:00']],
  ['sort', [['2024-03-10T10:00:00+01:00', '2024-03-10T09:00:00Z']], ['2024-03-10T09:00:00Z', '2024-03-10T10:00:00+01:00']],
  // One string that is no instant: code units for all, as before.
  ['sort', [['2024-03-10T01:30:00-08:00', '2024-03-10T05:00:00Z', 'soon']], ['2024-03-10T01:30:00-08:00', '2024-03-10T05:00:00Z', 'soon']],
  ['pow', [2, 10], 1024],
  ['pow', ['3', 2], 9],
  ['sqrt', [16], 4],
  ['toNumber', ['42'], 42],
  ['toNumber', [true], 1],
  ['toNumber', [null], null],
  ['toString', [42], '42'],
  ['toString', [null], ''],
  ['toString', [{ a: [1] }], '{"a":[1]}'],
  ['toBoolean', ['false'], false],
  ['toBoolean', [' No '], false],
  ['toBoolean', ['0'], false],
  ['toBoolean', ['yes'], true],
  ['toBoolean', [0], false],
  ['toBoolean', [[]], true],
  ['avg', [[1, 2, 3, 4]], 2.5],
  ['avg', [2, '4'], 3],
  ['addDays', ['2024-02-28', 2], '2024-03-01'],
  ['addDays', ['2024-03-01', -1], '2024-02-29'],
  ['addDays', ['2024-01-01T10:30:00+01:00', 1], '2024-01-02T09:30:00.000Z'],
  ['diffDays', ['2024-03-02', '2024-03-01'], 1],
  ['diffDays', ['2024-03-01', '2024-03-02'], -1],
  ['diffDays', ['2024-03-02T12:00:00Z', '2024-03-01T13:00:00Z'], 0],
  ['diffDays', ['2025-01-01', '2024-01-01'], 366],
  // Forms upstream's examples use (docs/language.md)
  ['generateId', [], 'id-fixed-0'],
  ['generateId', ['inv'], 'inv_id-fixed-0'],
  ['exists', [0], true],
  ['exists', [''], true],
  ['exists', [null], false],
  ['parseDecimal', ['19.99'], 19.99],
  ['parseDecimal', [' 7 '], 7],
  ['parseDecimal', ['12abc'], null],
  ['parseDecimal', [null], null],
  // A decimal string only (docs/language.md): Number() also reads hex, binary, octal and Infinity.
  ['parseDecimal', ['0x10'], null],
  ['parseDecimal', ['0b101'], null],
  ['parseDecimal', ['0o17'], null],
  ['parseDecimal', ['Infinity'], null],
  ['parseDecimal', ['-0.50'], -0.5],
  ['parseDecimal', ['+3'], 3],
  ['parseDecimal', ['.5'], 0.5],
  ['parseDecimal', ['5.'], 5],
  ['parseDecimal', ['1e3'], 1000],
  ['parseDecimal', ['2.5E-1'], 0.25],
  ['parseDecimal', ['1,000'], null],
  ['parseDecimal', ['-'], null],
  ['parseDate', ['2024-03-01'], '2024-03-01T00:00:00.000Z'],
  ['parseDate', ['2024-03-01T10:00:00+02:00'], '2024-03-01T08:00:00.000Z'],
  ['parseDate', ['2024-03-01 10:00'], '2024-03-01T10:00:00.000Z'],
  ['parseDate', ['yesterday'], null],
  ['parseDate', [0], '1970-01-01T00:00:00.000Z'],
  // Years 0000–0099 as written (Date.UTC read them as 1900–1999).
  ['parseDate', ['0001-01-01T00:00:00'], '0001-01-01T00:00:00.000Z'],
  ['parseDate', ['0099-12-31'], '0099-12-31T00:00:00.000Z'],
  ['parseDate', ['0000-02-29'], '0000-02-29T00:00:00.000Z'],
  ['parseDate', ['0100-02-29'], null],
  ['addDays', ['0001-01-01', 1], '0001-01-02'],
  ['addDays', ['0050-12-31T12:00:00Z', 1], '0051-01-01T12:00:00.000Z'],
  ['diffDays', ['0001-01-02', '0001-01-01'], 1],
  ['days', [7], 604_800_000],
  ['days', ['1'], 86_400_000],
  ['hours', [1.5], 5_400_000],
  ['minutes', [2], 120_000],
  ['seconds', [30], 30_000],
  ['sync_state.get', ['orders'], null],
  // The rest of §D.6's doc-only list (docs/language.md)
  ['trimStart', ['  a b  '], 'a b  '],
  ['trimEnd', ['  a b  '], '  a b'],
  ['trimEnd', [null], null],
  ['slugify', ['  Café Déjà Vu! 2024 '], 'cafe-deja-vu-2024'],
  ['slugify', ['---'], ''],
  ['entries', [{ a: 1, b: [2] }], [['a', 1], ['b', [2]]]],
  ['hasKey', [{ a: 1, n: null }, 'n'], true],
  ['hasKey', [{ a: 1 }, 'b'], false],
  ['hasKey', [{ a: 1 }, 'toString'], false],
  ['hasKey', [null, 'a'], false],
  ['pick', [{ a: 1, b: 2, c: 3 }, ['c', 'a', 'z']], { c: 3, a: 1 }],
  ['pick', [{ a: 1, b: 2 }, 'b'], { b: 2 }],
  ['omit', [{ a: 1, b: 2, c: 3 }, ['b']], { a: 1, c: 3 }],
  ['merge', [{ a: 1, b: { x: 1 } }, { b: { y: 2 } }, null, { c: 3 }], { a: 1, b: { y: 2 }, c: 3 }],
  ['toArray', ['a'], ['a']],
  ['toArray', [[1, 2]], [1, 2]],
  ['toArray', [null], []],
  ['toArray', [0], [0]],
  ['year', ['2024-01-20T10:30:00Z'], 2024],
  ['year', ['0050-06-01'], 50],
  ['month', ['2024-01-20T10:30:00Z'], 1],
  ['day', ['2024-01-20T23:30:00-05:00'], 21],
  ['hour', ['2024-01-20T10:30:00+02:00'], 8],
  ['minute', ['2024-01-20T10:30:00Z'], 30],
  ['addMonths', ['2024-01-31', 1], '2024-02-29'],
  ['addMonths', ['2024-03-31T08:00:00Z', -1], '2024-02-29T08:00:00.000Z'],
  ['addMonths', ['2024-11-15', 3], '2025-02-15'],
  ['addMonths', ['2024-01-15', -13], '2022-12-15'],
  ['addMonths', ['0099-12-31', 2], '0100-02-28'],
  ['subtractDays', ['2024-03-01', 1], '2024-02-29'],
  ['subtractDays', ['2024-01-20T10:30:00Z', 30], '2023-12-21T10:30:00.000Z'],
  ['isBefore', ['2024-01-20', '2024-01-27'], true],
  ['isBefore', ['2024-01-20T10:00:00+01:00', '2024-01-20T09:30:00Z'], true],
  ['isBefore', ['2024-01-20', '2024-01-20'], false],
  ['isAfter', ['2024-01-20', '2024-01-27'], false],
  ['isAfter', ['2024-03-10T01:30:00-08:00', '2024-03-10T05:00:00Z'], true],
  ['formatDate', ['2024-01-05T14:07:09.042Z', 'YYYY-MM-DD HH:mm:ss.SSS'], '2024-01-05 14:07:09.042'],
  ['formatDate', ['2024-01-05', 'MMM D, YYYY'], 'Jan 5, 2024'],
  ['formatDate', ['2024-01-05T14:07:00+02:00', 'dddd D MMMM YY, h:mm A [at] Z'], 'Friday 5 January 24, 12:07 PM at +00:00'],
  ['formatDate', ['0007-03-04', 'YYYY/M/D'], '0007/3/4'],
];

describe('built-ins', () => {
  it.each(cases)('%s(%j) is %j', (name, args, expected) => {
    expect(fn(name, ...args)).toEqual(expected);
  });

  it('every implemented built-in has at least one case above', () => {
    const covered = new Set(cases.map(([name]) => name));
    // now, timestamp, env: their own tests below; the functions of a function: test/eval/parsed.test.ts
    const extra = new Set(['now', 'timestamp', 'env', 'map', 'filter', 'reduce', 'sortBy', 'find', 'findIndex']);
    for (const name of BUILTIN_NAMES) expect(covered.has(name) || extra.has(name), name).toBe(true);
  });

  it('does not mutate its inputs', () => {
    const list = [3, 1, 2];
    expect(ev(call('sort', ref('list')), { vars: { list } })).toEqual([1, 2, 3]);
    expect(list).toEqual([3, 1, 2]);
  });

  it('sort is stable for equal numbers and -0/0', () => {
    expect(fn('sort', [2, 1, 2, 0, -1])).toEqual([-1, 0, 1, 2, 2]);
  });
});

describe('built-in errors', () => {
  it.each<[string, unknown[], string, string | RegExp]>([
    ['sum', [128], 'R4001', 'sum() expected an array but got: number (128)'],
    ['sum', [[1, null]], 'R4002', "Cannot perform 'sum' on null"],
    ['sum', [['x']], 'R4001', `Cannot perform 'sum' on string ("x")`],
    ['first', ['abc'], 'R4001', 'first() expected an array but got: string ("abc")'],
    ['round', [null], 'R4002', "Cannot perform 'round' on null"],
    ['round', [1.5, 1.5], 'R4014', 'round() expected an integer but got: number (1.5)'],
    ['round', [1.5, 16], 'R4014', 'round() expected 0 to 15 digits but got: number (16)'],
    ['max', [[]], 'R4012', 'max() of an empty list has no value'],
    ['min', [[1, null]], 'R4002', "Cannot perform 'min' on null"],
    ['avg', [[]], 'R4012', 'avg() of an empty list has no value'],
    ['sum', [[1e308, 1e308]], 'R4015', 'sum() gives Infinity, beyond what a number can hold (a 64-bit float); a run cannot store, send or log it'],
    ['range', [0, RANGE_CAP + 1], 'R4013', `range() would produce ${RANGE_CAP + 1} items; the limit is ${RANGE_CAP}`],
    ['range', ['x'], 'R4001', `Cannot perform 'range' on string ("x")`],
    ['lowercase', [5], 'R4001', 'lowercase() expected a string but got: number (5)'],
    ['split', ['a', 1], 'R4001', 'split() expected a string but got: number (1)'],
    ['join', ['ab'], 'R4001', 'join() expected an array but got: string ("ab")'],
    ['keys', [[1]], 'R4001', 'keys() expected an object but got: array ([1])'],
    ['values', [null], 'R4001', 'values() expected an object but got: null'],
    ['flatten', [{}], 'R4001', 'flatten() expected an array but got: object ({})'],
    ['sort', [[1, 'a']], 'R4001', 'sort() expected all numbers or all strings but got: string ("a")'],
    ['sort', [[null, 1]], 'R4001', 'sort() expected all numbers or all strings but got: null'],
    ['sort', [['a', 'b', 5]], 'R4001', 'sort() expected all numbers or all strings but got: number (5)'],
    ['includes', [5, 1], 'R4001', 'includes() expected an array, a string or an object but got: number (5)'],
    ['sqrt', [-1], 'R4014', 'sqrt() has no numeric result for these arguments'],
    ['pow', [-8, 0.5], 'R4014', 'pow() has no numeric result for these arguments'],
    ['toNumber', ['abc'], 'R4001', `Cannot perform 'toNumber' on string ("abc")`],
    ['addDays', ['someday', 1], 'R4014', 'addDays() expected a date but got: string ("someday")'],
    ['addDays', ['2024-01-01', 1.5], 'R4014', 'addDays() expected an integer but got: number (1.5)'],
    ['diffDays', [5, '2024-01-01'], 'R4001', 'diffDays() expected a date but got: number (5)'],
    ['length', [], 'R4006', 'length() expects 1 argument but got 0'],
    ['round', [1, 2, 3], 'R4006', 'round() expects 1 to 2 arguments but got 3'],
    ['max', [], 'R4006', 'max() expects at least 1 argument but got 0'],
    ['now', [1], 'R4006', 'now() expects 0 arguments but got 1'],
  ])('%s(%j) fails with %s', (name, args, code, message) => {
    const e = errorOf(() => fn(name, ...args));
    expect(e.code).toBe(code);
    expect(e.message).toEqual(message);
  });

  it('checks arity before evaluating arguments', () => {
    const e = errorOf(() => ev(call('length', ref('a'), { kind: 'Unsupported', construct: 'range', start: 0, end: 0 })));
    expect(e.code).toBe('R4006');
  });

  it('an unknown function is an error with a suggestion', () => {
    const e = errorOf(() => ev(call('lenght', ref('x'))));
    expect(e.code).toBe('R4005');
    expect(e.message).toBe('Unknown function `lenght`; did you mean `length`?');
    expect(errorOf(() => ev(call('frobnicate'))).message).toBe('Unknown function `frobnicate`');
    expect(errorOf(() => ev(call('a.b', ref('x')))).message).toBe('Unknown function `a.b`');
    expect(errorOf(() => ev(call('Length', ref('x')))).message).toBe('Unknown function `Length`; did you mean `length`?');
  });

  it('inherited JavaScript names are not built-ins', () => {
    expect(errorOf(() => ev(call('constructor', ref('x')))).code).toBe('R4005');
    expect(errorOf(() => ev(call('hasOwnProperty', ref('x')))).code).toBe('R4005');
  });

  it('date helpers fail on what is no date, naming the function', () => {
    expect(errorOf(() => fn('year', 'soon')).message).toBe('year() expected a date but got: string ("soon")');
    expect(errorOf(() => fn('isAfter', '2024-01-01', 5)).message).toBe('isAfter() expected a date but got: number (5)');
    expect(errorOf(() => fn('pick', [1], ['a'])).message).toBe('pick() expected an object but got: array ([1])');
  });
});

describe('non-deterministic built-ins read only the recorded inputs', () => {
  const at = (expr: Expr, options: EvOptions): unknown => ev(expr, options);

  it('now() formats inputs.now() as ISO-8601; timestamp() returns it', () => {
    const inputs = { now: Date.UTC(2024, 4, 17, 8, 30) };
    expect(at(call('now'), { inputs })).toBe('2024-05-17T08:30:00.000Z');
    expect(at(call('timestamp'), { inputs })).toBe(Date.UTC(2024, 4, 17, 8, 30));
  });

  it('each call asks the inputs again (so the journal records each)', () => {
    let t = 1000;
    const inputs = { now: () => (t += 1000) };
    expect(at(call('timestamp'), { inputs })).toBe(2000);
    expect(at(call('timestamp'), { inputs })).toBe(3000);
  });

  it('an invalid clock value is an error, not a crash', () => {
    expect(errorOf(() => at(call('now'), { inputs: { now: Number.NaN } })).code).toBe('R4014');
  });

  it('env("NAME") reads inputs.env, "" when unset', () => {
    expect(at(call('env', str('TOKEN')), { inputs: { env: { TOKEN: 'abc' } } })).toBe('abc');
    expect(at(call('env', str('NOPE')), { inputs: { env: {} } })).toBe('');
  });

  it('env with a computed name is an error (fix of M11)', () => {
    const e = errorOf(() => at(call('env', ref('name')), { vars: { name: 'TOKEN' }, inputs: { env: { TOKEN: 'abc' } } }));
    expect(e.code).toBe('R4011');
    expect(e.message).toContain('string-literal');
  });
});

describe('sort with a missing element', () => {
  it('is an error naming the missing value as absent (never the word undefined)', () => {
    expect(() => ev(call('sort', ref('xs')), { vars: { xs: ['a', undefined] } })).toThrow(
      'sort() expected all numbers or all strings but got: absent (no value)',
    );
    expect(() => ev(call('sort', ref('xs')), { vars: { xs: [undefined, 1] } })).toThrow(
      'sort() expected all numbers or all strings but got: absent (no value)',
    );
  });
});

describe('a missing value in messages', () => {
  // A user never wrote `undefined` (the language has no such value): a missing field or an unbound
  // name is "absent", in every message that describes a value.
  it('is described as absent', async () => {
    const { describeValue } = await import('../../engine/eval/values.js');
    expect(describeValue(undefined)).toBe('absent (no value)');
    expect(() => ev(call('keys', ref('nothing')))).toThrow(/keys\(\) expected an object but got: absent \(no value\)$/);
  });
});
