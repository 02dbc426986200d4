import { describe, expect, it } from 'vitest';
import { RunMemory } from '../../engine/stores/run-memory.js';

const rec = (v: number) => ({ v });
const listed = (m: RunMemory, store = 's') => m.list(store).map((r) => [r.key, r.record['v']]);

describe('RunMemory: a run’s memory stores by the log’s order', () => {
  it('replayed writes that come out of seq order list by their inserts’ seqs, and each key keeps its last write', () => {
    const m = new RunMemory();
    m.replay('s', 'c', rec(3), 30);
    m.replay('s', 'a', rec(1), 10);
    m.replay('s', 'b', rec(2), 20);
    m.replay('s', 'a', rec(9), 5); // older than a's write at 10: a keeps 1, inserted at 5
    expect(listed(m)).toEqual([['a', 1], ['b', 2], ['c', 3]]);
    m.replay('s', 'b', rec(22), 40);
    m.write('s', 'd', rec(4)); // live: after every replayed write
    m.replay('s', 'e', rec(5), 35);
    expect(listed(m)).toEqual([['a', 1], ['b', 22], ['c', 3], ['e', 5], ['d', 4]]);
  });

  it('a delete the log holds after a write replayed later keeps the record gone', () => {
    const m = new RunMemory();
    m.replay('s', 'a', null, 20);
    m.replay('s', 'a', rec(1), 10);
    expect(m.get('s', 'a')).toBeUndefined();
    m.replay('s', 'a', rec(2), 30); // written again after the delete
    expect(listed(m)).toEqual([['a', 2]]);
  });

  it('a delete replayed after the key’s later write leaves that write, inserted where it was written again', () => {
    const m = new RunMemory();
    m.replay('s', 'b', rec(0), 5);
    m.replay('s', 'a', rec(1), 10);
    m.replay('s', 'a', rec(2), 30);
    m.replay('s', 'c', rec(3), 25);
    m.replay('s', 'a', null, 20);
    expect(listed(m)).toEqual([['b', 0], ['c', 3], ['a', 2]]);
  });

  it('live writes apply as they come; a delete says whether a record was there', () => {
    const m = new RunMemory();
    m.write('s', 'x', rec(1));
    m.write('s', 'y', rec(2));
    expect(m.write('s', 'x', null)).toBe(true);
    expect(m.write('s', 'x', null)).toBe(false);
    m.write('s', 'x', rec(3));
    expect(listed(m)).toEqual([['y', 2], ['x', 3]]);
    expect(m.list('other')).toEqual([]);
  });
});
