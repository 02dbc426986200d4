/**
 * Values as the log holds them (engine/log/loggable.ts): a run acts only on what its replay will
 * read back. Property: for any JSON text, the value the door hands the run equals what a
 * round trip through the log's JSON gives — or the door refuses the text, naming where.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonInput } from '../../engine/env/json-input.js';
import { asLogged, jsonTextMayNeedLogging, UnloggableValueError } from '../../engine/log/loggable.js';

const roundTrip = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? 'null');

describe('asLogged', () => {
  it('refuses a number JSON cannot hold, naming where it is', () => {
    const value = { items: [{ total: 1 }, { total: Infinity }] };
    expect(() => asLogged(value, 'the response of GET /x')).toThrow(UnloggableValueError);
    expect(() => asLogged(value, 'the response of GET /x')).toThrow(/the response of GET \/x holds Infinity at \$\.items\[1\]\.total/);
    expect(() => asLogged(NaN, 'x')).toThrow(/NaN at \$/);
  });

  it('hands back the same reference when the value already is as logged', () => {
    const value = { a: [1, 'b', { c: null, d: true }] };
    expect(asLogged(value, 'x')).toBe(value);
  });

  it('turns what JSON cannot say into what the log will hold, without touching the input', () => {
    const date = new Date('2026-01-02T03:04:05.000Z');
    const input = { z: -0, u: undefined, list: [undefined, -0, date], nested: { when: date } };
    const out = asLogged(input, 'x');
    expect(out).toEqual(roundTrip(input));
    expect(Object.is((out as { z: number }).z, 0)).toBe(true);
    expect(Object.is(input.z, -0)).toBe(true);
    expect(input.list[2]).toBe(date);
  });

  it('keeps a __proto__ field an own field', () => {
    const input = JSON.parse('{"__proto__": {"x": -0}, "y": -0}') as Record<string, unknown>;
    const out = asLogged(input, 'x') as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['__proto__', 'y']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  it('equals a round trip through JSON for any JSON value (fast-check)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(asLogged(value, 'x')).toEqual(roundTrip(value));
      }),
      { numRuns: 500 },
    );
  });
});

describe('the door (parseJsonInput)', () => {
  it('refuses 1e400 and hands -0 back as 0', () => {
    expect(() => parseJsonInput('{"amount": 1e400}')).toThrow(/holds Infinity at \$\.amount/);
    expect(() => parseJsonInput(`[${'9'.repeat(400)}]`)).toThrow(UnloggableValueError);
    // A long mantissa with a two-digit exponent (helper 42: it was stored as null, and verify diverged).
    expect(() => parseJsonInput(`[{"id":"a","n":1${'0'.repeat(250)}e99}]`)).toThrow(/holds Infinity at \$\[0\]\.n/);
    expect(Object.is((parseJsonInput('{"a": -0.0}') as { a: number }).a, 0)).toBe(true);
  });

  it('never skips the walk for a text whose value the log would change (fast-check)', () => {
    const numberText = fc.oneof(
      fc.double().map((d) => String(d)),
      // Long mantissas with short exponents, around where a float overflows.
      fc.tuple(fc.integer({ min: 150, max: 330 }), fc.integer({ min: 0, max: 99 })).map(([digits, exp]) => `9${'0'.repeat(digits)}e${exp}`),
      fc.constantFrom('-0', '-0.0', '-0e10', '1e400', '-1E+999', '0.0', '-0.5', `${'1'.repeat(320)}`, `1${'0'.repeat(250)}e99`, `-${'9'.repeat(210)}E+99`),
    );
    fc.assert(
      fc.property(fc.array(numberText, { minLength: 1, maxLength: 4 }), fc.string(), (numbers, text) => {
        const json = `{"s": ${JSON.stringify(text)}, "n": [${numbers.filter((n) => /^-?\d/.test(n)).join(',') || '1'}]}`;
        const parsed = JSON.parse(json) as unknown;
        let changes = false;
        try {
          changes = JSON.stringify(asLogged(parsed, 'x')) !== JSON.stringify(parsed) || !Object.is(asLogged(parsed, 'x'), parsed);
        } catch {
          changes = true;
        }
        if (changes) expect(jsonTextMayNeedLogging(json)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
