/**
 * The rows of the State tab's JSON tree (renderer/src/lib/json-rows.ts): built lazily — a big
 * container's closed children are one range, made row by row when drawn — and equal, row for
 * row, to walking the open nodes one by one, whatever the user opened.
 */
import { describe, expect, it } from 'vitest';
import { childPath, defaultOpen, JsonRows, preview, type JsonRow } from '../../renderer/src/lib/json-rows.js';

/** The rows a plain depth-first walk of the open nodes gives: the reference for JsonRows. */
function walk(value: unknown, expanded: ReadonlyMap<string, boolean>, all = false): JsonRow[] {
  const out: JsonRow[] = [];
  const visit = (path: string, depth: number, label: string | null, v: unknown, parentSize: number) => {
    const size = Array.isArray(v) ? v.length : typeof v === 'object' && v !== null ? Object.keys(v).length : null;
    const open = size !== null && (expanded.get(path) ?? defaultOpen(depth, parentSize, all));
    out.push({ path, depth, label, value: v, size, open });
    if (!open) return;
    if (Array.isArray(v)) v.forEach((c, i) => visit(childPath(path, i), depth + 1, String(i), c, size!));
    else for (const [k, c] of Object.entries(v as object)) visit(childPath(path, k), depth + 1, k, c, size!);
  };
  visit('$', 0, null, value, 1);
  return out;
}

const all = (rows: JsonRows) => Array.from({ length: rows.count }, (_, i) => rows.at(i));

const records = Array.from({ length: 5000 }, (_, i) => ({ id: `r${i}`, n: i, tags: ['x', i % 3], nested: { deep: { v: i } } }));

describe('JsonRows', () => {
  it('shows a 5k-record array as one row per record, each closed', () => {
    const rows = new JsonRows(records, new Map());
    expect(rows.count).toBe(records.length + 1);
    expect(rows.at(0)).toMatchObject({ path: '$', open: true, size: 5000 });
    expect(rows.at(4321)).toMatchObject({ path: '$[4320]', label: '4320', open: false, size: 4, value: records[4320] });
    expect(all(rows)).toEqual(walk(records, new Map()));
  });

  it('matches a plain walk of the open nodes whatever was opened or closed', () => {
    const cases: Map<string, boolean>[] = [
      new Map([['$[0]', true], ['$[17].nested', true], ['$[17]', true], ['$[4999]', true], ['$[4999].tags', true]]),
      new Map([['$', false]]),
      new Map([['$[3]', true], ['$[3]', false], ['$[2500]', true], ['$[2500].nested', true], ['$[2500].nested.deep', true]]),
    ];
    for (const expanded of cases) expect(all(new JsonRows(records, expanded))).toEqual(walk(records, expanded));
    const small = { a: 1, list: [1, 2, { b: [3] }], o: { 'odd key': null, e: [] } };
    expect(all(new JsonRows(small, new Map(), true))).toEqual(walk(small, new Map(), true));
    expect(all(new JsonRows(small, new Map([['$.o["odd key"]', true]])))).toEqual(walk(small, new Map()));
    const wide = Object.fromEntries(records.slice(0, 300).map((r) => [r.id, r]));
    const opened = new Map([['$.r7', true], ['$.r250', true]]);
    expect(all(new JsonRows(wide, opened))).toEqual(walk(wide, opened));
  });

  it('previews a closed container within its budget', () => {
    expect(preview({ id: 'a', qty: 2, tags: [1, 2], o: {} })).toBe('{id: "a", qty: 2, tags: […2], o: {…}}');
    const long = preview(records);
    expect(long.length).toBeLessThanOrEqual(125);
    expect(long.endsWith('…]')).toBe(true);
    expect(preview(null)).toBe('null');
  });
});
