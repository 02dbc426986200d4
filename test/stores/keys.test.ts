import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { assertRecord, contentKey, describeValue, storeKey } from '../../engine/stores/keys.js';
import { StoreError } from '../../engine/stores/store-error.js';

const effect = 'eff-7f3a';
/** sha256 of the record's canonical JSON (keys sorted at every level, no spaces), 16 hex digits. */
const hashKey = (canonical: string): string => createHash('sha256').update(canonical).digest('hex').slice(0, 16);

describe('storeKey', () => {
  const cases: { name: string; record: Record<string, unknown>; index: number; key?: unknown; expected: string }[] = [
    { name: 'key: string', record: { id: 1 }, index: 0, key: 'sku-9', expected: 'sku-9' },
    { name: 'key: number wins over id', record: { id: 1 }, index: 0, key: 42, expected: '42' },
    { name: 'key: boolean', record: {}, index: 0, key: false, expected: 'false' },
    { name: 'key: bigint', record: {}, index: 0, key: 12345678901234567890n, expected: '12345678901234567890' },
    { name: 'record.id string', record: { id: 'inv-1' }, index: 3, expected: 'inv-1' },
    { name: 'record.id number', record: { id: 17 }, index: 3, expected: '17' },
    { name: 'record.id zero is a key', record: { id: 0 }, index: 3, expected: '0' },
    { name: 'record.id at 2^53 - 1, the last safe integer', record: { id: Number.MAX_SAFE_INTEGER }, index: 0, expected: '9007199254740991' },
    { name: 'record.id a large fraction is no integer', record: { id: 1.5 }, index: 0, expected: '1.5' },
    { name: 'no key, no id → hash of the content', record: { name: 'x' }, index: 0, expected: hashKey('{"name":"x"}') },
    { name: 'id null counts as absent', record: { id: null }, index: 5, expected: hashKey('{"id":null}') },
    { name: 'the content is canonical: keys sorted at every level', record: { b: { y: 1, x: [2, { d: 1, c: 0 }] }, a: 1 }, index: 0, expected: hashKey('{"a":1,"b":{"x":[2,{"c":0,"d":1}],"y":1}}') },
    { name: 'id 1 and id "1" are one key', record: { id: '1' }, index: 0, expected: '1' },
    // Stored keys: integer-like keys come first in numeric order, as a JavaScript object lists them
    // (a text sort would give {"10":…,"9":…}: another key, and every keyless record stored twice).
    { name: 'integer-like keys hash in numeric order, then the others sorted', record: { goals: { 10: 2, 9: 1, b: 0, a: 0 } }, index: 0, expected: hashKey('{"goals":{"9":1,"10":2,"a":0,"b":0}}') },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const keyValue = 'key' in c ? { value: c.key, step: 'sync.1' } : undefined;
      expect(storeKey(c.record, c.index, effect, keyValue)).toBe(c.expected);
    });
  }

  it('the fallback key outlives the run: it depends on the content only, never on the effect id or the position', () => {
    const a = storeKey({ name: 'x', n: 1 }, 2, effect);
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    // Another run (another run id, hence another effect id), another position: the same key.
    expect(storeKey({ n: 1, name: 'x' }, 7, 'effect-of-another-run')).toBe(a);
    expect(storeKey({ name: 'x', n: 1, gone: undefined }, 0, effect)).toBe(a);
    expect(contentKey({ name: 'x', n: 1 })).toBe(a);
    expect(storeKey({ name: 'x', n: 2 }, 2, effect)).not.toBe(a);
    expect(storeKey({ id: 1 }, 0, effect)).toBe(storeKey({ id: '1' }, 4, 'other'));
  });

  it('keys by a boolean\'s text, as the reference does (a summary per flag: `key: .active`)', () => {
    expect(storeKey({ active: true }, 0, effect, { value: true, step: 'A/1' })).toBe('true');
    expect(storeKey({ id: false }, 0, effect)).toBe('false');
  });

  const failures: { name: string; record: Record<string, unknown>; key?: unknown; message: RegExp }[] = [
    { name: 'key evaluated to null', record: {}, key: null, message: /^store key evaluated to null for record #3 of step sync\.1/ },
    { name: 'key evaluated to undefined', record: {}, key: undefined, message: /^store key evaluated to null for record #3 of step sync\.1/ },
    { name: 'key is an object', record: {}, key: { a: 1 }, message: /store key must be a string, a number or a boolean \(its text is the key\) but got: object \(\{"a":1\}\)/ },
    { name: 'key is an array', record: {}, key: [1], message: /but got: array \(1 item\)/ },
    { name: 'key is NaN', record: {}, key: Number.NaN, message: /store key evaluated to NaN/ },
    { name: 'key is empty', record: {}, key: '', message: /store key evaluated to an empty string/ },
    { name: 'record id is an object', record: { id: { nested: true } }, message: /record id must be a string, a number or a boolean/ },
    { name: 'key is an integer beyond 2^53', record: {}, key: 2 ** 53, message: /store key 9007199254740992 for record #3 of step sync\.1 is an integer beyond 2\^53/ },
    { name: 'record id is an integer beyond 2^53', record: { id: JSON.parse('9007199254740993') as number }, message: /record id 9007199254740992 .* is an integer beyond 2\^53 .* key by the id as a string/ },
    { name: 'record id is a negative integer beyond 2^53', record: { id: -(2 ** 60) }, message: /record id -1152921504606847000 .* beyond 2\^53/ },
  ];
  for (const f of failures) {
    it(`rejects: ${f.name}`, () => {
      const keyValue = 'key' in f ? { value: f.key, step: 'sync.1' } : undefined;
      let caught: unknown;
      try {
        storeKey(f.record, 3, effect, keyValue);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(StoreError);
      expect((caught as StoreError).code).toBe('store.bad-key');
      expect((caught as StoreError).message).toMatch(f.message);
    });
  }

  it('rejects a negative index', () => {
    expect(() => storeKey({}, -1, effect)).toThrow(RangeError);
  });
});

describe('assertRecord', () => {
  const rejected: [unknown, string][] = [
    [128, 'expected an object but got: number (128)'],
    ['abc', 'expected an object but got: string ("abc")'],
    [null, 'expected an object but got: null'],
    [undefined, 'expected an object but got: absent (no value)'],
    [true, 'expected an object but got: boolean (true)'],
    [[1, 2, 3], 'expected an object but got: array (3 items)'],
  ];
  for (const [value, message] of rejected) {
    it(`rejects ${describeValue(value)}`, () => {
      expect(() => assertRecord(value)).toThrow(message);
    });
  }

  it('accepts objects and prefixes the location when given', () => {
    expect(() => assertRecord({ a: 1 })).not.toThrow();
    expect(() => assertRecord(Object.create(null))).not.toThrow();
    expect(() => assertRecord(5, 'store step sync.2')).toThrow('store step sync.2: expected an object but got: number (5)');
  });

  it('shortens long values in descriptions', () => {
    const text = describeValue('x'.repeat(500));
    expect(text.length).toBeLessThan(80);
    expect(text).toMatch(/^string \("x+…\)$/);
  });
});
