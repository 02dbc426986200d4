/**
 * The contract for stores that live outside the log database: `file(...)` and `postgrest(...)`.
 *
 * `memory` stores are folded from the log's `store.write` events (memory-fold.ts) and `sql`/`nosql`
 * stores are tables written inside the log transaction; neither goes through this interface.
 * External writes cannot share the log's transaction, so the guarantee is idempotence instead:
 * every write names its key, and applying the same batch twice (a replay after a crash between
 * the write and its `store.write` events) leaves the same state as applying it once.
 */

export interface StoredRecord {
  key: string;
  record: Record<string, unknown>;
}

export interface StoreWrite {
  key: string;
  /** Ignored by a 'delete'. */
  record: Record<string, unknown>;
  /** 'set' replaces the record under `key`; 'upsert' shallow-merges into it (merge.ts); 'delete' removes it. */
  op: 'set' | 'upsert' | 'delete';
}

/** What one write did: the record as stored, or for a delete null and whether there was one (unknown: absent). */
export type StoreWriteResult = StoredRecord | { key: string; record: null; removed?: boolean };

export interface ExternalStore {
  readonly kind: 'file' | 'postgrest';
  /**
   * Idempotent by key: writing the same batch twice leaves the same state. Returns one entry per
   * write, in order: the record as stored right after that write (after upsert merges). On a
   * replay, an upsert's result may already include fields a later write of the same key added;
   * the final state is what idempotence promises. A delete of an absent key removes nothing and
   * is no error (`removed: false`), so a replayed delete is harmless too.
   */
  write(writes: StoreWrite[]): Promise<StoreWriteResult[]>;
  /**
   * Every record: a file store's in insertion order (the order of the file), a postgrest store's
   * sorted by key, since its table is the user's and holds no order of ours.
   */
  list(): Promise<StoredRecord[]>;
  get(key: string): Promise<Record<string, unknown> | undefined>;
}

/** Plain string order on keys: how displays (`reqon store`, the inspector) and postgrest listings sort. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
