import { describe, expect, it } from 'vitest';
import type { EventType, StoredEvent, EventPayloads } from '../../engine/log/events.js';
import { MemoryStoreState } from '../../engine/stores/memory-fold.js';

let seq = 0;
function event<T extends EventType>(type: T, payload: EventPayloads[T], runId = 'run-1'): StoredEvent<T> {
  seq += 1;
  return { runId, seq, type, stepPath: 'sync.0', payload, recordedAt: 1_700_000_000_000 + seq };
}
const write = (store: string, key: string, record: unknown, op: 'set' | 'upsert' = 'set', runId?: string) =>
  event('store.write', { effectId: `e-${key}`, store, key, record, op }, runId);

describe('MemoryStoreState', () => {
  it('folds store.write events into per-store maps listed by key', () => {
    const state = new MemoryStoreState();
    state.apply(write('orders', 'b', { id: 'b', total: 2 }));
    state.apply(write('orders', 'a', { id: 'a', total: 1 }));
    state.apply(write('customers', 'c1', { name: 'Ada' }));
    state.apply(write('orders', 'b', { id: 'b', total: 2, paid: true }, 'upsert'));

    expect(state.list('orders')).toStrictEqual([
      { key: 'a', record: { id: 'a', total: 1 } },
      { key: 'b', record: { id: 'b', total: 2, paid: true } },
    ]);
    expect(state.get('customers', 'c1')).toStrictEqual({ name: 'Ada' });
    expect(state.get('customers', 'nope')).toBeUndefined();
    expect(state.list('unknown')).toStrictEqual([]);
    expect(state.storeNames()).toStrictEqual(['customers', 'orders']);
    expect(state.size('orders')).toBe(2);
  });

  it('sorts keys by plain string order, not numerically', () => {
    const state = new MemoryStoreState();
    for (const key of ['10', '9', '1', 'B', 'a']) state.apply(write('s', key, { key }));
    expect(state.list('s').map((r) => r.key)).toStrictEqual(['1', '10', '9', 'B', 'a']);
  });

  it('gives the contents at any seq with fromEvents and ignores other event types', () => {
    const events: StoredEvent[] = [
      event('run.started', { mission: 'm', missionHash: 'h' }),
      write('s', 'k1', { v: 1 }),
      event('step.completed', { stepType: 'store' }),
      write('s', 'k2', { v: 2 }),
      write('s', 'k1', { v: 10 }),
    ];
    const [, first, , second, third] = events;
    expect(MemoryStoreState.fromEvents(events, first!.seq).list('s')).toStrictEqual([{ key: 'k1', record: { v: 1 } }]);
    expect(MemoryStoreState.fromEvents(events, second!.seq).list('s').map((r) => r.record)).toStrictEqual([{ v: 1 }, { v: 2 }]);
    expect(MemoryStoreState.fromEvents(events, third!.seq).get('s', 'k1')).toStrictEqual({ v: 10 });
    expect(MemoryStoreState.fromEvents(events, first!.seq - 1).storeNames()).toStrictEqual([]);
  });

  it('clone() is independent in both directions', () => {
    const original = new MemoryStoreState();
    original.apply(write('s', 'a', { v: 1 }));
    const copy = original.clone();
    copy.apply(write('s', 'b', { v: 2 }));
    original.apply(write('s', 'a', { v: 3 }));
    expect(original.list('s')).toStrictEqual([{ key: 'a', record: { v: 3 } }]);
    expect(copy.list('s')).toStrictEqual([
      { key: 'a', record: { v: 1 } },
      { key: 'b', record: { v: 2 } },
    ]);
  });

  it('holds frozen copies: neither the event payload nor a result can change a past state', () => {
    const state = new MemoryStoreState();
    const payload = { v: 1, nested: { x: 1 } };
    state.apply(write('s', 'a', payload));
    payload.nested.x = 99;
    const got = state.get('s', 'a') as { nested: { x: number } };
    expect(got.nested.x).toBe(1);
    expect(() => {
      got.nested.x = 5;
    }).toThrow(TypeError);
  });

  it('rejects events out of log order and non-object records, naming the seq', () => {
    const state = new MemoryStoreState();
    const later = write('s', 'a', { v: 1 });
    const earlier = { ...later, seq: later.seq - 1 };
    state.apply(later);
    expect(() => state.apply(earlier)).toThrow(/seq \d+ of run run-1 arrived after seq \d+/);
    // Another run has its own order.
    expect(() => state.apply({ ...earlier, runId: 'run-2' })).not.toThrow();
    const bad = write('s', 'x', 128);
    expect(() => state.apply(bad)).toThrow(`store.write at seq ${bad.seq} of run run-1 (store "s", key "x"): expected an object but got: number (128)`);
  });
});

describe('MemoryStoreState: deletes', () => {
  const remove = (store: string, key: string, removed: boolean) =>
    event('store.write', { effectId: `d-${key}`, store, key, record: null, op: 'delete', removed });

  it('a delete drops the record from its seq on; an earlier seq and a clone taken before still hold it', () => {
    const events = [write('orders', 'a', { id: 'a' }), write('orders', 'b', { id: 'b' }), remove('orders', 'a', true), remove('orders', 'zz', false)];
    const before = MemoryStoreState.fromEvents(events, events[1]!.seq);
    const copy = before.clone();
    before.apply(events[2] as StoredEvent<'store.write'>);
    expect(before.get('orders', 'a')).toBeUndefined();
    expect(copy.get('orders', 'a')).toStrictEqual({ id: 'a' });
    const all = MemoryStoreState.fromEvents(events);
    expect(all.list('orders')).toStrictEqual([{ key: 'b', record: { id: 'b' } }]);
    expect(all.size('orders')).toBe(1);
  });

  it('a write (not a delete) with a null record is still refused, naming the seq', () => {
    const bad = event('store.write', { effectId: 'x', store: 'orders', key: 'k', record: null, op: 'set' });
    expect(() => new MemoryStoreState().apply(bad)).toThrow(/store\.write at seq \d+ of run run-1 \(store "orders", key "k"\)/);
  });
});
