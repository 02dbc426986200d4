/**
 * Source text → value, through the real parser: the most readable statement of the semantics.
 * Each row: expression text, the variables / response / current record, and the expected value
 * (or, in the error table, the error code and message).
 */
import { describe, expect, it } from 'vitest';
import { EvaluatorError } from '../../engine/eval/eval-errors.js';
import { parseExpression } from '../../engine/lang/parser.js';
import { ev, type EvOptions } from './ast-builders.js';

function run(text: string, options: EvOptions = {}): unknown {
  const { expr, diagnostics } = parseExpression(text);
  expect(diagnostics.filter((d) => d.severity === 'error'), text).toEqual([]);
  return ev(expr, options);
}

const person = { id: 1, first: 'Ada', last: 'L', age: 36 };
const old = { id: 3, first: 'Old', last: 'Timer', age: 70 };

describe('expressions from source text', () => {
  it.each<[string, EvOptions, unknown]>([
    ['1 + 2 * 3', {}, 7],
    ['(1 + 2) * 3', {}, 9],
    ['10 - 4 - 3', {}, 3],
    ['7 % 4', {}, 3],
    ['-2 * -3', {}, 6],
    ['"a" + 1 + 2', {}, 'a12'],
    ['1 + 2 + "a"', {}, '3a'],
    ['"say \\"hi\\""', {}, 'say "hi"'],
    ['x or "default"', {}, 'default'],
    ['x or "default"', { vars: { x: 'set' } }, 'set'],
    ['a and b', { vars: { a: 1, b: 2 } }, 2],
    ['not (1 > 2)', {}, true],
    ['x ?? y ?? 3', { vars: { y: 0 } }, 0],
    ['n > 3 ? "big" : "small"', { vars: { n: 5 } }, 'big'],
    ['if n > 3 then "big" else "small"', { vars: { n: 1 } }, 'small'],
    ['[]', {}, []],
    ['[1, "two", null]', {}, [1, 'two', null]],
    ['{ a: 1, "b c": 2 }', {}, { a: 1, 'b c': 2 }],
    ['{ ...base, b: 3, ...over }', { vars: { base: { a: 1, b: 2 }, over: { a: 9 } } }, { a: 9, b: 3 }],
    ['response.items[0].id', { response: { items: [{ id: 'i1' }] } }, 'i1'],
    ['items[-1]', { vars: { items: [1, 2, 3] } }, 3],
    ['first(list).name', { vars: { list: [{ name: 'n' }] } }, 'n'],
    ['"vip" in tags', { vars: { tags: ['vip'] } }, true],
    ['"k" in obj', { vars: { obj: { k: null } } }, true],
    ['x is number', { vars: { x: 1 } }, true],
    ['x is decimal', { vars: { x: 1.5 } }, true],
    ['.updated > "2024-01-01"', { current: { updated: '2024-01-01T00:00:01Z' } }, true],
    ['.updated > since', { current: { updated: null }, vars: { since: '2024-01-01' } }, false],
    ['length(.iban) > 4', { current: { iban: 'GB00BANK' } }, true],
    ['match .last { "L" => "l-team", _ => "other" }', { current: person }, 'l-team'],
    ['match .last { "L" => "l-team", _ => "other" }', { current: old }, 'other'],
    ['match status { 200 => "ok", 404 => "missing" }', { vars: { status: 500 } }, undefined],
    ['match true { (n > 3) => "big", _ => "small" }', { vars: { n: 4 } }, 'big'],
    ['any of list where .ok', { vars: { list: [{ ok: false, i: 1 }, { ok: true, i: 2 }] } }, { ok: true, i: 2 }],
    ['any of list', { vars: { list: ['a', 'b', 'c', 'd'] }, inputs: { random: 0.6 } }, 'c'],
    ['round(2.345, 2)', {}, 2.35],
    ['concat("#", id, "/", length(list))', { vars: { id: 'p1', list: [1, 2, 3] } }, '#p1/3'],
    ['env("REGION")', { inputs: { env: { REGION: 'eu' } } }, 'eu'],
    ['now()', { inputs: { now: 0 } }, '1970-01-01T00:00:00.000Z'],
    ['lowercase(trim("  HeLLo "))', {}, 'hello'],
    ['join(sort(unique(split("b,a,b,c", ","))), "|")', {}, 'a|b|c'],
    ['replace(path, "/", "_")', { vars: { path: '/a/b' } }, '_a_b'],
    ['addDays("2024-12-31", 1)', {}, '2025-01-01'],
    ['keys(response)', { response: { z: 1, a: 2 } }, ['z', 'a']],
    // Functions of a list and a function: a lambda, or an expression with the item as the current record
    ['map([1, 2, 3], x => x * 2)', {}, [2, 4, 6]],
    ['map(people, .first)', { vars: { people: [person, old] } }, ['Ada', 'Old']],
    ['map(people, p => p.first + "/" + .last)', { vars: { people: [person, old] } }, ['Ada/L', 'Old/Timer']],
    ['filter([1, 2, 3], x => x > 1)', {}, [2, 3]],
    ['filter(people, .age > 64)', { vars: { people: [person, old] } }, [old]],
    ['filter(missing, .age > 64)', {}, []],
    ['reduce([1, 2, 3], (a, b) => a + b, 0)', {}, 6],
    ['reduce([1, 2, 3], (a, b) => a * b)', {}, 6],
    ['reduce([], (a, b) => a + b, 10)', {}, 10],
    ['reduce(people, (total, p) => total + .age, 0)', { vars: { people: [person, old] } }, 106],
    ['sortBy(people, .first)', { vars: { people: [old, person] } }, [person, old]],
    ['sortBy(people, p => 0 - p.age)', { vars: { people: [person, old] } }, [old, person]],
    // Stable, ISO instants by instant, null keys last in their order.
    ['map(sortBy(xs, .at), .id)', { vars: { xs: [{ id: 1, at: null }, { id: 2, at: '2024-03-10T01:30:00-08:00' }, { id: 3 }, { id: 4, at: '2024-03-10T05:00:00Z' }, { id: 5, at: '2024-03-10T05:00:00Z' }] } }, [4, 5, 2, 1, 3]],
    ['find(people, .id == 3)', { vars: { people: [person, old] } }, old],
    ['find(people, .id == 9)', { vars: { people: [person, old] } }, undefined],
    ['findIndex(people, p => p.id == 3)', { vars: { people: [person, old] } }, 1],
    ['findIndex(people, .id == 9)', { vars: { people: [person, old] } }, -1],
    // A parameter shadows a variable of that name only inside its lambda.
    ['map([1, 2], x => x + 10)', { vars: { x: 5 } }, [11, 12]],
    ['length(map([1, 2], x => x + 10)) + x', { vars: { x: 5 } }, 7],
    // An absent item is the parameter's value: not the outer `x`, nor the response's `x` (§D.2).
    ['map(map(xs, .a), x => x ?? "none")', { vars: { x: 'OUTER', xs: [{ a: 1 }, { b: 2 }] } }, [1, 'none']],
    ['map(map(xs, .a), x => x ?? "none")', { vars: { xs: [{ a: 1 }, { b: 2 }] }, response: { x: 'FROM_RESPONSE' } }, [1, 'none']],
    ['reduce([null, 2], (t, v) => (t ?? 0) + (v ?? 0))', { vars: { t: 100 } }, 2],
  ])('%s', (text, options, expected) => {
    expect(run(text, options)).toEqual(expected);
  });

  // §H1's map fields, each evaluated with the person as the current record
  it.each<[string, unknown, unknown]>([
    ['.first + " " + .last', person, 'Ada L'],
    ['100 - .age', person, 64],
    ['.age / 4', old, 17.5],
    ['.age * 0.5', person, 18],
    ['.age >= 18 and not (.age > 64)', person, true],
    ['.age >= 18 and not (.age > 64)', old, false],
    ['.age > 64 ? "senior" : "adult"', old, 'senior'],
  ])('H1 map field %s on %j', (text, current, expected) => {
    expect(run(text, { current, vars: { p: current, all: [person, old] } })).toEqual(expected);
  });
});

describe('errors from source text', () => {
  it.each<[string, EvOptions, string, string]>([
    ['1 / 0', {}, 'R4003', 'Division by zero'],
    ['x - 1', { vars: { x: null } }, 'R4002', "Cannot perform '-' on null"],
    ['sum(x)', { vars: { x: 128 } }, 'R4001', 'sum() expected an array but got: number (128)'],
    ['1 < "2"', {}, 'R4008', `Cannot compare number (1) with string ("2") using '<'`],
    ['x is widget', {}, 'R4007', 'Unknown type `widget` after \'is\'; expected one of array, object, string, number, decimal, int, integer, boolean, null, undefined, date'],
    ['env(name)', { vars: { name: 'HOME' } }, 'R4011', 'env() needs a string-literal variable name, e.g. env("API_TOKEN"); a computed name is not allowed'],
    ['max([])', {}, 'R4012', 'max() of an empty list has no value'],
    ['range(0, 30000000)', {}, 'R4013', 'range() would produce 30000000 items; the limit is 20000000'],
    ['lenght(x)', {}, 'R4005', 'Unknown function `lenght`; did you mean `length`?'],
    ['map(x, .id)', { vars: { x: 'abc' } }, 'R4001', 'map() expected an array but got: string ("abc")'],
    ['reduce([], (a, b) => a + b)', {}, 'R4012', 'reduce() of an empty list with no initial value has no value'],
    ['sortBy(xs, .n)', { vars: { xs: [{ n: 1 }, { n: 'two' }] } }, 'R4001', 'sortBy() expected keys that are all numbers or all strings but got: string ("two")'],
  ])('%s', (text, options, code, message) => {
    let error: unknown;
    try {
      run(text, options);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EvaluatorError);
    expect((error as EvaluatorError).code).toBe(code);
    expect((error as EvaluatorError).message).toBe(message);
  });

  it('errors point at the source of the failing expression', () => {
    const text = 'a + (b / 0)';
    let error: EvaluatorError | undefined;
    try {
      run(text, { vars: { a: 1, b: 2 } });
    } catch (e) {
      error = e as EvaluatorError;
    }
    expect(text.slice(error!.span.start, error!.span.end)).toMatch(/^\(?b \/ 0\)?$/);
  });

  it('an unsupported construct the parser accepts fails at run time with a clear message', () => {
    const { expr } = parseExpression('1..5');
    expect(() => ev(expr)).toThrow('Ranges (`a..b`) are not supported yet');
  });
});
