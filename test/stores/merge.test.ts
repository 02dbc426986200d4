import { describe, expect, it } from 'vitest';
import { mergeUpsert, prepareRecord, resolveStoredRecord, stripUndefined } from '../../engine/stores/merge.js';

describe('resolveStoredRecord', () => {
  const cases: {
    name: string;
    op: 'set' | 'upsert';
    existing?: Record<string, unknown>;
    incoming: Record<string, unknown>;
    expected: Record<string, unknown>;
  }[] = [
    { name: 'set on empty', op: 'set', incoming: { a: 1 }, expected: { a: 1 } },
    { name: 'set replaces the whole record', op: 'set', existing: { a: 1, b: 2 }, incoming: { a: 3 }, expected: { a: 3 } },
    { name: 'set drops undefined fields', op: 'set', incoming: { a: 1, b: undefined }, expected: { a: 1 } },
    { name: 'upsert on empty', op: 'upsert', incoming: { a: 1 }, expected: { a: 1 } },
    { name: 'upsert keeps fields it does not mention', op: 'upsert', existing: { a: 1, b: 2 }, incoming: { b: 3, c: 4 }, expected: { a: 1, b: 3, c: 4 } },
    { name: 'upsert: undefined does not erase', op: 'upsert', existing: { a: 1, b: 2 }, incoming: { b: undefined }, expected: { a: 1, b: 2 } },
    { name: 'upsert: null deletes the field (RFC 7386)', op: 'upsert', existing: { a: 1, b: 2 }, incoming: { b: null }, expected: { a: 1 } },
    { name: 'upsert merges nested objects key by key', op: 'upsert', existing: { n: { x: 1, y: 2 } }, incoming: { n: { x: 5 } }, expected: { n: { x: 5, y: 2 } } },
    { name: 'upsert: null deletes a nested field', op: 'upsert', existing: { p: { email: 'e', phone: 't' } }, incoming: { p: { phone: null } }, expected: { p: { email: 'e' } } },
    { name: 'upsert: an object replaces a scalar, a scalar an object', op: 'upsert', existing: { a: 1, b: { c: 1 } }, incoming: { a: { x: 1 }, b: 2 }, expected: { a: { x: 1 }, b: 2 } },
    { name: 'upsert: nulls inside a new nested object are dropped', op: 'upsert', existing: {}, incoming: { p: { a: null, b: 1 } }, expected: { p: { b: 1 } } },
    { name: 'upsert replaces arrays', op: 'upsert', existing: { tags: [1, 2] }, incoming: { tags: [3] }, expected: { tags: [3] } },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const existingCopy = structuredClone(c.existing);
      const incomingKeys = Object.keys(c.incoming);
      const result = resolveStoredRecord(c.op, c.existing, c.incoming);
      expect(result).toStrictEqual(c.expected);
      // Inputs are never mutated.
      expect(c.existing).toStrictEqual(existingCopy);
      expect(Object.keys(c.incoming)).toStrictEqual(incomingKeys);
    });
  }

  it('is idempotent: applying the same write twice equals applying it once', () => {
    const existing = { a: 1, b: 2 };
    for (const op of ['set', 'upsert'] as const) {
      const once = resolveStoredRecord(op, existing, { b: 9, c: 3 });
      expect(resolveStoredRecord(op, once, { b: 9, c: 3 })).toStrictEqual(once);
    }
  });

  it('rejects an unknown op', () => {
    expect(() => resolveStoredRecord('delete' as 'set', undefined, {})).toThrow('unknown store op "delete"');
  });
});

describe('prepareRecord and the partial flag', () => {
  const cases: { partial: boolean | undefined; expected: Record<string, unknown> }[] = [
    { partial: true, expected: { id: 1, _partial: true } },
    { partial: false, expected: { id: 1, _partial: false } },
    { partial: undefined, expected: { id: 1 } },
  ];
  for (const c of cases) {
    it(`partial: ${String(c.partial)}`, () => {
      const source = { id: 1, gone: undefined };
      expect(prepareRecord(source, c.partial)).toStrictEqual(c.expected);
      expect(source).not.toHaveProperty('_partial');
    });
  }

  it('a later partial write overrides the flag through upsert', () => {
    const first = prepareRecord({ id: 1, name: 'a' }, true);
    const second = prepareRecord({ id: 1, total: 5 }, false);
    expect(mergeUpsert(first, second)).toStrictEqual({ id: 1, name: 'a', total: 5, _partial: false });
  });

  it('keeps a field named __proto__ as data', () => {
    const record = JSON.parse('{"__proto__": {"x": 1}, "a": 1}') as Record<string, unknown>;
    const out = stripUndefined(record);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toStrictEqual(['__proto__', 'a']);
  });
});
