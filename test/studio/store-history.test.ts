/**
 * The state-at fold's store part (engine/inspect/store-history.ts): a history of writes read at
 * any seq, skipping writes it holds already (a fold restored from a snapshot re-reads them), its
 * records frozen in place, and a bad record refused with where it came from. Checked against
 * MemoryStoreState, the executor's store fold, at every seq of a run with rewrites and deletes.
 */
import { describe, expect, it } from 'vitest';
import { StoreHistory } from '../../engine/inspect/store-history.js';
import type { StoredEvent } from '../../engine/log/events.js';
import { MemoryStoreState } from '../../engine/stores/memory-fold.js';
import { EventBuilder } from './event-builder.js';

function writes(): EventBuilder {
  const log = new EventBuilder('run-sh');
  for (let i = 0; i < 400; i += 1) {
    const store = `s${i % 3}`;
    if (i % 5 === 4) log.add('store.write', 'A/0', { effectId: `e${i}`, store, key: `k${(i * 7) % 23}`, record: null, op: 'delete' });
    else log.add('store.write', 'A/0', { effectId: `e${i}`, store, key: `k${(i * 7) % 23}`, record: { i, deep: { list: [i] } }, op: 'set' });
  }
  return log;
}

const asWrite = (e: StoredEvent) => e as StoredEvent<'store.write'>;

describe('StoreHistory', () => {
  it('at every seq, holds what the executor store fold holds', () => {
    const log = writes();
    const history = new StoreHistory();
    for (const e of log.events) history.apply(asWrite(e));
    for (let seq = 0; seq <= log.lastSeq; seq += 1) {
      const expected = MemoryStoreState.fromEvents(log.events, seq);
      expect(history.storeNamesAt(seq).sort(), `names at ${seq}`).toEqual(expected.storeNames());
      for (const name of ['s0', 's1', 's2', 'absent']) expect(history.listAt(name, seq), `${name} at ${seq}`).toEqual(expected.list(name));
    }
  });

  it('skips a write it holds already, and freezes the records it hands out', () => {
    const log = writes();
    const history = new StoreHistory();
    for (const e of log.events.slice(0, 100)) history.apply(asWrite(e));
    const before = history.listAt('s1', 100);
    for (const e of log.events.slice(50, 100)) history.apply(asWrite(e)); // a restored fold re-reading
    expect(history.listAt('s1', 100)).toEqual(before);
    expect(history.lastSeq).toBe(100);
    const record = before[0]!.record as { deep: { list: number[] } };
    expect(() => record.deep.list.push(1)).toThrow(TypeError);
  });

  it('refuses a record that is not an object, naming the store, key and seq', () => {
    const log = new EventBuilder('run-bad');
    const bad = log.add('store.write', 'A/0', { effectId: 'e', store: 'orders', key: 'o1', record: 42, op: 'set' });
    expect(() => new StoreHistory().apply(bad)).toThrow(/seq 1 of run run-bad \(store "orders", key "o1"\): expected an object but got: number/);
  });
});
