import { describe, expect, it } from 'vitest';
import { fixedInputs } from '../../engine/eval/inputs.js';
import { Scope } from '../../engine/eval/scope.js';
import { canonicalJson, describeValue, displayString, isTruthy, typeName } from '../../engine/eval/values.js';
import { parseIsoInstant } from '../../engine/eval/iso-dates.js';

describe('Scope', () => {
  it('set writes to this scope only; get finds the nearest binding', () => {
    const root = new Scope();
    root.set('a', 1);
    const child = root.child();
    child.set('a', 2);
    child.set('b', 3);
    expect(child.get('a')).toBe(2);
    expect(root.get('a')).toBe(1);
    expect(root.has('b')).toBe(false);
    expect(child.has('b')).toBe(true);
    expect(child.get('zzz')).toBeUndefined();
  });

  it('undefined counts as absent in get, has and snapshot', () => {
    const root = new Scope();
    root.set('a', 1);
    const child = root.child();
    child.set('a', undefined);
    child.set('u', undefined);
    expect(child.get('a')).toBe(1);
    expect(child.has('u')).toBe(false);
    expect(child.snapshot()).toEqual({ a: 1 });
  });

  it('a let of an absent value binds absence: no outer variable shows through, and a later let sets it there', () => {
    const root = new Scope();
    root.set('note', 'outer');
    const iteration = root.child(true); // a concurrent loop's: its lets stay in it
    iteration.let('note', undefined);
    expect(iteration.get('note')).toBeUndefined();
    expect(iteration.boundAbsent('note')).toBe(true);
    expect(root.get('note')).toBe('outer');
    iteration.let('note', 'inner');
    expect(iteration.get('note')).toBe('inner');
    expect(iteration.boundAbsent('note')).toBe(false);
    // In a sequential loop a let sets the nearest binding, an absent one too.
    const seq = iteration.child();
    seq.let('note', undefined);
    expect(iteration.boundAbsent('note')).toBe(true);
    seq.let('note', 'again');
    expect(iteration.get('note')).toBe('again');
  });

  it('null is a value', () => {
    const s = new Scope();
    s.set('n', null);
    expect(s.has('n')).toBe(true);
    expect(s.get('n')).toBeNull();
  });

  it('snapshot shows every visible variable, nearest wins', () => {
    const root = new Scope();
    root.set('x', 'root');
    root.set('y', 'root');
    const child = root.child();
    child.set('x', 'child');
    child.set('__proto__', 'odd name');
    const snap = child.snapshot();
    expect(snap).toEqual({ x: 'child', y: 'root', ['__proto__']: 'odd name' });
    expect(Object.getPrototypeOf(snap)).toBe(Object.prototype);
  });
});

describe('fixedInputs', () => {
  it('defaults to the epoch, 0 and no environment', () => {
    const inputs = fixedInputs();
    expect(inputs.now()).toBe(0);
    expect(inputs.random()).toBe(0);
    expect(inputs.env('HOME')).toBeUndefined();
  });

  it('plays a random sequence in turn, repeating the last', () => {
    const inputs = fixedInputs({ random: [0.1, 0.2] });
    expect([inputs.random(), inputs.random(), inputs.random()]).toEqual([0.1, 0.2, 0.2]);
  });

  it('does not see inherited keys of the env table', () => {
    expect(fixedInputs({ env: { A: 'x' } }).env('toString')).toBeUndefined();
    expect(fixedInputs({ env: { A: 'x' } }).env('A')).toBe('x');
  });
});

describe('values', () => {
  it.each<[unknown, string]>([
    [128, 'number (128)'],
    ['abc', 'string ("abc")'],
    [null, 'null'],
    [undefined, 'absent (no value)'],
    [true, 'boolean (true)'],
    [[1, 2], 'array ([1,2])'],
    [{ a: 1 }, 'object ({"a":1})'],
    ['x'.repeat(100), `string ("${'x'.repeat(38)}…)`],
  ])('describeValue(%j) is %s', (value, expected) => {
    expect(describeValue(value)).toBe(expected);
  });

  it('typeName', () => {
    expect([null, undefined, [], {}, '', 0, false, new Date(0)].map(typeName)).toEqual([
      'null', 'undefined', 'array', 'object', 'string', 'number', 'boolean', 'date',
    ]);
  });

  it('truthiness is JavaScript’s', () => {
    expect([0, '', null, undefined, false, Number.NaN].map(isTruthy)).toEqual([false, false, false, false, false, false]);
    expect([[], {}, '0', -1, 'false'].map(isTruthy)).toEqual([true, true, true, true, true]);
  });

  it('displayString', () => {
    expect([null, undefined, 'a', 1, true, [1, 'b'], { k: null }].map(displayString)).toEqual(['', '', 'a', '1', 'true', '[1,"b"]', '{"k":null}']);
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every depth, independent of insertion order', () => {
    const a = { b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } };
    const b = { a: { c: null, d: [1, { y: 2, z: 1 }] }, b: 1 };
    expect(canonicalJson(a)).toBe('{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson(b)).toBe(canonicalJson(a));
  });

  it('follows JSON for undefined, non-finite numbers and dates', () => {
    expect(canonicalJson({ u: undefined, n: Number.NaN, i: Infinity, d: new Date(0), l: [undefined] })).toBe(
      '{"d":"1970-01-01T00:00:00.000Z","i":null,"l":[null],"n":null}',
    );
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson('x"y')).toBe('"x\\"y"');
    expect(canonicalJson(-0)).toBe('0');
  });

  it('orders keys by code unit, not locale', () => {
    expect(canonicalJson({ b: 1, B: 2, á: 3, a: 4 })).toBe('{"B":2,"a":4,"b":1,"á":3}');
  });

  it('refuses cycles and bigints; shared (non-cyclic) references are fine', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/cyclic/);
    expect(() => canonicalJson({ n: 1n })).toThrow(/bigint/);
    const shared = { x: 1 };
    expect(canonicalJson([shared, shared])).toBe('[{"x":1},{"x":1}]');
  });
});

describe('ISO instants', () => {
  it.each<[string, number | undefined]>([
    ['2024-01-01', Date.UTC(2024, 0, 1)],
    ['2024-01-01T10:00:00Z', Date.UTC(2024, 0, 1, 10)],
    ['2024-01-01T10:00:00', Date.UTC(2024, 0, 1, 10)], // no offset → UTC, never the machine's zone
    ['2024-01-01T10:00+0130', Date.UTC(2024, 0, 1, 8, 30)],
    ['2024-01-01T10:00:00.123456Z', Date.UTC(2024, 0, 1, 10, 0, 0, 123)],
    ['2024-02-30', undefined],
    ['2024-1-1', undefined],
    ['not a date', undefined],
  ])('%s → %s', (text, ms) => {
    expect(parseIsoInstant(text)?.ms).toBe(ms);
  });
});
