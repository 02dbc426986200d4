/**
 * Store contents as a fold over a run's `store.write` events (a write sets a record, a delete —
 * `op: 'delete'` — removes it).
 *
 * Used by the executor for run-local `memory` stores (their contents are part of the run's state,
 * rebuilt from the log on resume) and by the inspector for any store's contents at a given seq.
 * Each `store.write` carries the record *as stored* (after the upsert merge), so applying an event
 * is a plain replace and the fold never depends on how the write was computed.
 *
 * Invariant: records held here are deep-frozen copies, so `list`/`get` can hand them out without
 * copying and `clone()` can share them: nobody can change a past state by mutating a result.
 */
import type { StoredEvent } from '../log/events.js';
import { assertRecord } from './keys.js';
import { compareKeys, type StoredRecord } from './store-adapter.js';

export class MemoryStoreState {
  private readonly stores = new Map<string, Map<string, Record<string, unknown>>>();
  /** Highest seq applied per run: events must arrive in log order. */
  private readonly lastSeq = new Map<string, number>();

  /** Folds `events` (any types; only `store.write` counts) up to and including `atSeq`. */
  static fromEvents(events: Iterable<StoredEvent>, atSeq = Number.POSITIVE_INFINITY): MemoryStoreState {
    const state = new MemoryStoreState();
    for (const event of events) {
      if (event.seq > atSeq) break;
      state.handleEvent(event);
    }
    return state;
  }

  /** Applies `store.write` events and ignores every other type, for folds over a whole log. */
  handleEvent(event: StoredEvent): void {
    if (isStoreWrite(event)) this.apply(event);
  }

  apply(event: StoredEvent<'store.write'>): void {
    const { runId, seq, payload } = event;
    const last = this.lastSeq.get(runId);
    if (last !== undefined && seq <= last) {
      throw new Error(`store fold: event seq ${seq} of run ${runId} arrived after seq ${last}; events must be applied in log order`);
    }
    let records = this.stores.get(payload.store);
    if (records === undefined) {
      records = new Map();
      this.stores.set(payload.store, records);
    }
    if (payload.op === 'delete') {
      // `delete S[k]`: the record is gone from this seq on (absent already: nothing changes).
      records.delete(payload.key);
    } else {
      assertRecord(payload.record, `store.write at seq ${seq} of run ${runId} (store "${payload.store}", key "${payload.key}")`);
      records.set(payload.key, deepFreeze(structuredClone(payload.record)));
    }
    this.lastSeq.set(runId, seq);
  }

  /** The store's records sorted by key; an unknown or never-written store is empty. */
  list(store: string): StoredRecord[] {
    const records = this.stores.get(store);
    if (records === undefined) return [];
    return [...records.entries()]
      .sort(([a], [b]) => compareKeys(a, b))
      .map(([key, record]) => ({ key, record }));
  }

  get(store: string, key: string): Readonly<Record<string, unknown>> | undefined {
    return this.stores.get(store)?.get(key);
  }

  /** Names of the stores written so far, sorted. */
  storeNames(): string[] {
    return [...this.stores.keys()].sort(compareKeys);
  }

  size(store: string): number {
    return this.stores.get(store)?.size ?? 0;
  }

  /** An independent copy: applying to either one leaves the other unchanged. */
  clone(): MemoryStoreState {
    const copy = new MemoryStoreState();
    for (const [store, records] of this.stores) copy.stores.set(store, new Map(records));
    for (const [runId, seq] of this.lastSeq) copy.lastSeq.set(runId, seq);
    return copy;
  }
}

function isStoreWrite(event: StoredEvent): event is StoredEvent<'store.write'> {
  return event.type === 'store.write';
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
