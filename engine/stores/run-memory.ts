/**
 * A run's `memory` stores as its steps see them: insertion order kept (`for x in store` iterates
 * it) and each key holding its last write — both by the order of the writes in the LOG.
 *
 * A live write is the newest there is, so live writes apply as they come. A replayed write comes
 * in walk order, which is the log's order in sequential code but not across concurrent branches (a
 * concurrent loop's iterations, a parallel stage's actions): their answers come from the log at
 * once, so a branch whose writes were logged last may replay first. Applied as they came, an
 * iteration finished first live came after one finished later in `for x in store`, and a key
 * written by two branches kept the wrong record. So each write carries its seq (live writes one
 * above every seq replayed), a write older than the key's last is ignored, and a store whose
 * inserts came out of order is listed by the seq of each record's insert.
 *
 * Deletes leave a tombstone (the seq of the key's last delete), so a write replayed after a
 * delete that the log holds after it does not bring the record back. One case is approximate: a
 * key deleted and written again whose writes replay before the delete — its insert is then taken
 * to be its last write (the log's order of the writes between is not kept per key).
 */
import type { StoredRecord } from './store-adapter.js';

interface Entry {
  record: Record<string, unknown>;
  /** The seq of the write that inserted the key (the first after its last delete). */
  insertedAt: number;
  /** The seq of the key's last write: what it holds. */
  writtenAt: number;
}

interface Table {
  entries: Map<string, Entry>;
  deletedAt: Map<string, number>;
  /** The highest insert seq so far; an insert below it puts the map's order out of log order. */
  lastInsert: number;
  ordered: boolean;
}

/** Live writes are ordered after every replayed one (a seq is below 2^53). */
const LIVE = Number.MAX_SAFE_INTEGER / 2;

export class RunMemory {
  private readonly tables = new Map<string, Table>();
  private live = LIVE;

  get(store: string, key: string): Record<string, unknown> | undefined {
    return this.tables.get(store)?.entries.get(key)?.record;
  }

  /** A live write: the newest. Returns whether a record was there (for a delete's `removed`). */
  write(store: string, key: string, record: Record<string, unknown> | null): boolean {
    return this.apply(store, key, record, ++this.live);
  }

  /** A write the log holds at `seq`, replayed: it counts where the log has it. */
  replay(store: string, key: string, record: Record<string, unknown> | null, seq: number): void {
    this.apply(store, key, record, seq);
  }

  /** The records in insertion order (by the log's order). */
  list(store: string): StoredRecord[] {
    const table = this.tables.get(store);
    if (!table) return [];
    if (!table.ordered) {
      // Put the map itself in log order, so later writes in order keep it so.
      const sorted = [...table.entries].sort(([, a], [, b]) => a.insertedAt - b.insertedAt);
      table.entries.clear();
      for (const [key, entry] of sorted) table.entries.set(key, entry);
      table.lastInsert = sorted.length > 0 ? sorted[sorted.length - 1]![1].insertedAt : 0;
      table.ordered = true;
    }
    return [...table.entries].map(([key, entry]) => ({ key, record: entry.record }));
  }

  private apply(store: string, key: string, record: Record<string, unknown> | null, seq: number): boolean {
    let table = this.tables.get(store);
    if (!table) this.tables.set(store, (table = { entries: new Map(), deletedAt: new Map(), lastInsert: 0, ordered: true }));
    const entry = table.entries.get(key);
    const deleted = table.deletedAt.get(key);
    if (record === null) {
      if (deleted === undefined || deleted < seq) table.deletedAt.set(key, seq);
      if (!entry) return false;
      if (entry.writtenAt < seq) {
        table.entries.delete(key);
        return true;
      }
      // A later write stands. If its insert came before this delete, it was written again after it.
      if (entry.insertedAt < seq) this.moveInsert(table, entry, entry.writtenAt);
      return true;
    }
    // A write the log holds before the key's last delete is gone, unless nothing was written since.
    if (deleted !== undefined && deleted > seq) return entry !== undefined;
    if (!entry) {
      table.entries.set(key, { record, insertedAt: seq, writtenAt: seq });
      this.noteInsert(table, seq);
      return false;
    }
    if (seq > entry.writtenAt) {
      entry.record = record;
      entry.writtenAt = seq;
    }
    if (seq < entry.insertedAt) this.moveInsert(table, entry, seq);
    return true;
  }

  private moveInsert(table: Table, entry: Entry, seq: number): void {
    entry.insertedAt = seq;
    table.ordered = false;
  }

  private noteInsert(table: Table, seq: number): void {
    if (seq < table.lastInsert) table.ordered = false;
    else table.lastInsert = seq;
  }
}
