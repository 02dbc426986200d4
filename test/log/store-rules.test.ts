/**
 * Which sql/nosql writes the log's database may refuse however its table is, and so commit on
 * their own rather than ride on a later step's commit (GUARANTEES 5, "On PostgreSQL"): a key
 * PostgreSQL's text cannot hold (a NUL, a lone surrogate), a key past what its primary-key index
 * always holds (2 kB), a record of more than 256 fields.
 */
import { describe, expect, it } from 'vitest';
import { mayBeRefused } from '../../engine/log/store-rules.js';

const wide = (fields: number) => Object.fromEntries(Array.from({ length: fields }, (_, i) => [`f${i}`, i]));

describe('mayBeRefused', () => {
  it('a record of more than 256 fields, and not one of 256', () => {
    expect(mayBeRefused('k', wide(256))).toBe(false);
    expect(mayBeRefused('k', wide(257))).toBe(true);
    // Inherited fields are no columns.
    expect(mayBeRefused('k', Object.create(wide(300)) as object)).toBe(false);
  });

  it('a key over 2 kB of UTF-8, a NUL or a lone surrogate; not an ordinary or a paired-surrogate one', () => {
    expect(mayBeRefused('x'.repeat(2048), {})).toBe(false);
    expect(mayBeRefused('x'.repeat(2049), {})).toBe(true);
    expect(mayBeRefused('é'.repeat(1025), {})).toBe(true); // 2,050 bytes in 1,025 characters
    expect(mayBeRefused('a\u0000b', {})).toBe(true);
    expect(mayBeRefused('a\ud800b', {})).toBe(true);
    expect(mayBeRefused('a\udc00', {})).toBe(true);
    expect(mayBeRefused('a\u{1F600}b', {})).toBe(false);
    expect(mayBeRefused('order-17', { id: 'order-17', total: 3 })).toBe(false);
  });
});
