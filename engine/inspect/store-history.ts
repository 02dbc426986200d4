/**
 * Every store's records as a history of writes by seq: the store part of the state-at fold.
 *
 * A `store.write` appends (seq, record) to its key's history — a delete appends (seq, null) — and
 * "the store at seq S" is, per key, its last entry at or below S. Because a history only grows, a
 * fold and all its snapshots share one (fold-cache.ts): a snapshot of a 25k-record store costs
 * nothing, where copying the records every snapshot was most of the first build of a big run's
 * fold cache (16 copies of 25k entries on the 100k-event bench run, with GC, by CPU profile).
 * A fold restored from a snapshot re-reads events the history holds already: an event at or
 * below the history's last seq is skipped, so every fold sharing a history must read the same
 * run's events in log order (the fold cache guarantees it).
 *
 * Invariant: records are the events' own, deep-frozen in place (not copied), so `listAt` hands them
 * out as they are and nobody can change a past state — or the event — by mutating a result.
 */
import type { StoredEvent } from '../log/events.js';
import { assertRecord } from '../stores/keys.js';
import { compareKeys, type StoredRecord } from '../stores/store-adapter.js';
import { lastAtOrBelow } from './sorted-search.js';

type Entry = Readonly<Record<string, unknown>> | null;

interface KeyHistory {
  seqs: number[];
  records: Entry[];
}

interface StoreKeys {
  /** Seq of the store's first write: a store shows from then on, even once emptied. */
  firstSeq: number;
  keys: Map<string, KeyHistory>;
  /** The keys' histories in compareKeys order; null when a key came since it was sorted. */
  sorted: [string, KeyHistory][] | null;
}

export class StoreHistory {
  private readonly stores = new Map<string, StoreKeys>();
  private last = 0;

  get lastSeq(): number {
    return this.last;
  }

  /** Records a write; one at or below the last seq recorded is there already and is skipped. */
  apply(event: StoredEvent<'store.write'>): void {
    const { runId, seq, payload } = event;
    if (seq <= this.last) return;
    let store = this.stores.get(payload.store);
    if (store === undefined) {
      store = { firstSeq: seq, keys: new Map(), sorted: null };
      this.stores.set(payload.store, store);
    }
    let history = store.keys.get(payload.key);
    if (history === undefined) {
      if (payload.op === 'delete') {
        // Deleting a key never written: nothing changes (the store itself now shows).
        this.last = seq;
        return;
      }
      history = { seqs: [], records: [] };
      store.keys.set(payload.key, history);
      store.sorted = null;
    }
    if (payload.op === 'delete') {
      history.seqs.push(seq);
      history.records.push(null);
    } else {
      assertRecord(payload.record, `store.write at seq ${seq} of run ${runId} (store "${payload.store}", key "${payload.key}")`);
      history.seqs.push(seq);
      history.records.push(deepFreeze(payload.record));
    }
    this.last = seq;
  }

  /** Names of the stores written at or before `seq`. */
  storeNamesAt(seq: number): string[] {
    return [...this.stores].filter(([, store]) => store.firstSeq <= seq).map(([name]) => name);
  }

  /** The store's records at `seq`, sorted by key; an unknown store is empty. */
  listAt(name: string, seq: number): StoredRecord[] {
    const store = this.stores.get(name);
    if (store === undefined) return [];
    store.sorted ??= [...store.keys].sort(([a], [b]) => compareKeys(a, b));
    const out: StoredRecord[] = [];
    for (const [key, history] of store.sorted) {
      if (history.seqs[0]! > seq) continue; // written later: early in a run, most keys
      const at = lastAtOrBelow(history.seqs, seq);
      const record = at < 0 ? null : history.records[at]!;
      if (record !== null) out.push({ key, record });
    }
    return out;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
