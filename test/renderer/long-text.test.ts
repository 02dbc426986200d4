/**
 * Long strings in the JSON views (lib/json-rows.ts): a row drew its string whole — 20 MB in one
 * DOM text node froze the page. A row now draws ROW_TEXT characters and counts the rest; a
 * container's one-line preview cuts a long child before quoting it; a string the engine sent a
 * window of carries that window to its row (for the "characters a–b of N" pager).
 */
import { describe, expect, it } from 'vitest';
import { cutText, JsonRows, preview, ROW_TEXT } from '../../renderer/src/lib/json-rows.js';

const big = 'y'.repeat(20 * 1024 * 1024);

describe('long strings in the JSON tree', () => {
  it('cuts a long string to ROW_TEXT characters and counts the rest, never inside a surrogate pair', () => {
    expect(cutText('short')).toEqual({ shown: 'short', more: 0 });
    const { shown, more } = cutText(big);
    expect(shown).toHaveLength(ROW_TEXT);
    expect(more).toBe(big.length - ROW_TEXT);
    const pair = cutText('a'.repeat(ROW_TEXT - 1) + '😀😀');
    expect(pair.shown).toBe('a'.repeat(ROW_TEXT - 1));
    expect(pair.more).toBe(4);
  });

  it('previews a long string, alone or as a child, without quoting it whole', () => {
    const p = preview(big);
    expect(p.length).toBeLessThanOrEqual(ROW_TEXT + 2);
    expect(p.startsWith('"yyy')).toBe(true);
    expect(p.endsWith('…')).toBe(true);
    expect(preview({ id: 'one', s: big }).length).toBeLessThanOrEqual(121);
    expect(preview('ok')).toBe('"ok"');
  });

  it('gives a string row the character window the engine sent, and keeps it a primitive', () => {
    const rows = new JsonRows({ s: 'y'.repeat(4096) }, new Map(), false, new Map([['$.s', { from: 0, count: 4096, total: big.length, unit: 'chars' as const }]]));
    const row = rows.at(1);
    expect(row.path).toBe('$.s');
    expect(row.size).toBeNull();
    expect(row.window).toEqual({ from: 0, count: 4096, total: big.length, unit: 'chars' });
  });
});
