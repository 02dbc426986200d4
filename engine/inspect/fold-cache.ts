/**
 * Snapshots of the state-at fold every N events, so "state at seq" on a long run folds at most
 * N events instead of the whole prefix.
 *
 * A `RunFoldCache` holds one run's events in log order (appended as they arrive) and a snapshot
 * of the fold every `interval` events. A snapshot copies the fold's small parts (frames, open
 * steps, waits) and shares its store history (store-history.ts), so its cost does not grow with
 * the stores: on the 100k-event bench run storing 25k records, copying the stores into every
 * snapshot was about a third of the first build. The head fold is the state at the last event,
 * so the end of a run (where State opens) folds nothing; any other seq restores the nearest
 * snapshot at or below it and folds at most `interval` events forward. Invariant: the answer equals a fresh fold of every event up to
 * `seq` (a property test checks it at random positions); snapshots are only ever taken of the
 * running head fold, which has seen exactly the events before it.
 */
import type { StoredEvent } from '../log/events.js';
import type { RunState } from './state-at-data.js';
import { lastAtOrBelow } from './sorted-search.js';
import { StateAtHandler, type StateAtOptions, type StateAtSnapshot } from './state-at.js';

export const DEFAULT_SNAPSHOT_INTERVAL = 1000;

export class RunFoldCache {
  private readonly events: StoredEvent[] = [];
  private readonly head: StateAtHandler;
  /** snapshots[i] is the fold after the first snapshotCounts[i] events. */
  private readonly snapshots: StateAtSnapshot[] = [];
  private readonly snapshotCounts: number[] = [];
  /** Event count at which the next snapshot is due. */
  private nextSnapshot: number;

  constructor(
    readonly runId: string,
    private readonly options: StateAtOptions = {},
    readonly interval = DEFAULT_SNAPSHOT_INTERVAL,
  ) {
    if (!Number.isInteger(interval) || interval < 1) {
      throw new RangeError(`fold cache: interval must be a positive integer, got ${interval}`);
    }
    this.head = new StateAtHandler(options, runId);
    this.nextSnapshot = interval;
  }

  get lastSeq(): number {
    return this.events.at(-1)?.seq ?? 0;
  }

  get size(): number {
    return this.events.length;
  }

  /** Adds events newer than the last one held; older or repeated seqs are ignored (overlapping polls). */
  append(events: readonly StoredEvent[]): void {
    for (const event of events) {
      if (event.runId !== this.runId) {
        throw new Error(`fold cache for run ${this.runId} was given an event of run ${event.runId} (seq ${event.seq})`);
      }
      if (event.seq <= this.lastSeq) continue;
      this.events.push(event);
      this.head.handleEvent(event);
      if (this.events.length < this.nextSnapshot) continue;
      this.snapshots.push(this.head.snapshot());
      this.snapshotCounts.push(this.events.length);
      this.nextSnapshot = this.events.length + this.interval;
    }
  }

  /** Events with fromSeq <= seq <= toSeq, in order. */
  slice(fromSeq: number, toSeq = Number.POSITIVE_INFINITY, limit = Number.POSITIVE_INFINITY): StoredEvent[] {
    const start = this.indexAfter(fromSeq - 1);
    const out: StoredEvent[] = [];
    for (let i = start; i < this.events.length && out.length < limit; i += 1) {
      const event = this.events[i]!;
      if (event.seq > toSeq) break;
      out.push(event);
    }
    return out;
  }

  all(): readonly StoredEvent[] {
    return this.events;
  }

  /** The state just after the event at `seq` (or the last event at or below it); seq 0 is the empty state. */
  stateAt(seq: number): RunState {
    if (!Number.isFinite(seq) || seq < 0) throw new RangeError(`state at seq: seq must be >= 0, got ${seq}`);
    const count = this.indexAfter(seq); // events with event.seq <= seq
    // The head fold has seen exactly these events: the end of the run (what State opens on) folds nothing.
    if (count === this.events.length) return { ...this.head.data(), runId: this.runId };
    const snapIndex = lastAtOrBelow(this.snapshotCounts, count);
    const fold = new StateAtHandler(this.options, this.runId);
    let from = 0;
    if (snapIndex >= 0) {
      fold.restore(this.snapshots[snapIndex]!);
      from = this.snapshotCounts[snapIndex]!;
    }
    for (let i = from; i < count; i += 1) fold.handleEvent(this.events[i]!);
    const state = fold.data();
    return { ...state, runId: this.runId };
  }

  /** Index of the first event with event.seq > seq (binary search; seqs increase). */
  private indexAfter(seq: number): number {
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.events[mid]!.seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
