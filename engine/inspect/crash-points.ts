/**
 * Reachable crash points of a mission and how often a run reaches each, from a reference run.
 *
 * Counted from the reference run's events exactly as the executor's CrashInjector counts: one
 * occurrence per logical thing it guards, so retries of a request are one occurrence.
 *   before-effect     each HTTP effect (page) and each store batch (one store step's write)
 *   after-effect      each HTTP effect that got an answer, and each batch to a file/postgrest store
 *                     (writes to memory/sql/nosql commit with their events: there is no "after")
 *   mid-store         each store batch
 *   after-checkpoint  each checkpoint advanced (per step and key)
 *   before-wait       each pause and each wait
 * A batch is identified by its step path (one execution of one store step). Invariant: every
 * `POINT:N` offered with N <= occurrences is a point a run of the same mission and data dies at.
 * (The rule mirrors engine/journal/crash-points.ts and the steps that call it, without importing
 * the executor: the inspector sits beside it, not above it.)
 */
import type { StoredEvent } from '../log/events.js';
import type { CrashPointInfo, CrashPointName } from '../protocol/protocol.js';
import { assertInOrder, type FoldHandler } from './fold-handler.js';

export const CRASH_POINTS: readonly CrashPointName[] = ['before-effect', 'after-effect', 'mid-store', 'after-checkpoint', 'before-wait'];

export class CrashPointsHandler implements FoldHandler<CrashPointInfo[]> {
  private lastSeq = 0;
  private requests = new Set<string>();
  private answered = new Set<string>();
  private tableBatches = new Set<string>();
  private externalBatches = new Set<string>();
  private checkpoints = new Set<string>();
  private waits = 0;

  reset(): void {
    this.lastSeq = 0;
    this.requests = new Set();
    this.answered = new Set();
    this.tableBatches = new Set();
    this.externalBatches = new Set();
    this.checkpoints = new Set();
    this.waits = 0;
  }

  handleEvent(event: StoredEvent): void {
    assertInOrder(this.lastSeq, event, 'crash points');
    this.lastSeq = event.seq;
    switch (event.type) {
      case 'http.request':
        this.requests.add((event as StoredEvent<'http.request'>).payload.effectId);
        break;
      case 'http.response':
      case 'http.error':
        this.answered.add((event as StoredEvent<'http.response'>).payload.effectId);
        break;
      case 'store.intent':
        this.externalBatches.add(event.stepPath);
        break;
      case 'store.write':
        if (!this.externalBatches.has(event.stepPath)) this.tableBatches.add(event.stepPath);
        break;
      case 'checkpoint.advanced':
        this.checkpoints.add(`${event.stepPath}:${(event as StoredEvent<'checkpoint.advanced'>).payload.key}`);
        break;
      case 'pause.created':
      case 'wait.registered':
        this.waits += 1;
        break;
      default:
        break;
    }
  }

  finalize(): void {
    // Counts are complete after each event.
  }

  data(): CrashPointInfo[] {
    const batches = this.tableBatches.size + this.externalBatches.size;
    const counts: Record<CrashPointName, number> = {
      'before-effect': this.requests.size + batches,
      'after-effect': this.answered.size + this.externalBatches.size,
      'mid-store': batches,
      'after-checkpoint': this.checkpoints.size,
      'before-wait': this.waits,
    };
    return CRASH_POINTS.map((point) => ({ point, occurrences: counts[point] })).filter((p) => p.occurrences > 0);
  }
}
