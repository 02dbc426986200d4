import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, suggest } from '../../engine/lang/suggest.js';

describe('suggest', () => {
  it('finds a close misspelling', () => {
    expect(suggest('invoces', ['customers', 'invoices', 'orders'])).toBe('invoices');
    expect(suggest('itmes', ['items', 'audit'])).toBe('items');
  });

  it('counts a swap of neighbours as one edit (Damerau)', () => {
    expect(editDistance('itmes', 'items')).toBe(1);
    expect(editDistance('abc', 'abc')).toBe(0);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('limits the distance to max(1, floor(len/3))', () => {
    expect(suggest('ab', ['xy'])).toBeUndefined(); // distance 2 > 1
    expect(suggest('ab', ['ax'])).toBe('ax');
    expect(suggest('orders', ['odrrs'])).toBe('odrrs'); // 2 ≤ floor(6/3)
    expect(suggest('orders', ['o'])).toBeUndefined();
  });

  it('accepts a case-only difference as the closest match', () => {
    expect(suggest('Items', ['itemz', 'items'])).toBe('items');
    expect(suggest('LOAD', ['Load'])).toBe('Load');
  });

  it('is deterministic whatever the candidate order', () => {
    expect(suggest('cat', ['bat', 'hat'])).toBe('bat');
    expect(suggest('cat', ['hat', 'bat'])).toBe('bat');
  });

  it('never suggests the name itself or anything for an empty name', () => {
    expect(suggest('items', ['items'])).toBeUndefined();
    expect(suggest('', ['a'])).toBeUndefined();
  });

  it('phrases help text', () => {
    expect(didYouMean('itmes', ['items'])).toBe('did you mean `items`?');
    expect(didYouMean('zzz', ['items'])).toBeUndefined();
  });
});
