/**
 * Reachable crash points of a mission and how often a run reaches each, from a reference run.
 *
 * Counted from the reference run's events the way the executor's CrashInjector counts: per
 * logical occurrence (the effect id it guards), so retries of one request are one occurrence.
 * before-effect / after-effect = distinct effect ids of `http.request` plus store effects
 * (distinct effect ids among `store.write`/`store.intent`: one store step is one effect), mid-store = the store effects written inside the
 * log transaction, after-checkpoint = `checkpoint.advanced`, before-wait = `pause.created` and
 * `wait.registered`. Invariant: counts never exceed what a run of the same mission and data
 * reaches, so every `POINT:N` offered with N <= occurrences is a point a run can die at —
 * counting a multi-record store step once errs on the side of offering fewer occurrences.
 * (The counting rule mirrors engine/executor/crash-points.ts without importing it: the inspector
 * sits beside the executor, not above it.)
 */
import type { StoredEvent } from '../log/events.js';
import type { CrashPointInfo, CrashPointName } from '../protocol/protocol.js';
import { assertInOrder, type FoldHandler } from './fold-handler.js';

export const CRASH_POINTS: readonly CrashPointName[] = ['before-effect', 'after-effect', 'mid-store', 'after-checkpoint', 'before-wait'];

export class CrashPointsHandler implements FoldHandler<CrashPointInfo[]> {
  private lastSeq = 0;
  private requests = new Set<string>();
  private storeEffects = new Set<string>();
  private writtenStoreEffects = new Set<string>();
  private checkpoints = 0;
  private waits = 0;

  reset(): void {
    this.lastSeq = 0;
    this.requests = new Set();
    this.storeEffects = new Set();
    this.writtenStoreEffects = new Set();
    this.checkpoints = 0;
    this.waits = 0;
  }

  handleEvent(event: StoredEvent): void {
    assertInOrder(this.lastSeq, event, 'crash points');
    this.lastSeq = event.seq;
    switch (event.type) {
      case 'http.request':
        this.requests.add((event as StoredEvent<'http.request'>).payload.effectId);
        break;
      case 'store.intent':
        this.storeEffects.add((event as StoredEvent<'store.intent'>).payload.effectId);
        break;
      case 'store.write': {
        const { effectId } = (event as StoredEvent<'store.write'>).payload;
        this.storeEffects.add(effectId);
        this.writtenStoreEffects.add(effectId);
        break;
      }
      case 'checkpoint.advanced':
        this.checkpoints += 1;
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
    const effects = this.requests.size + this.storeEffects.size;
    const counts: Record<CrashPointName, number> = {
      'before-effect': effects,
      'after-effect': effects,
      'mid-store': this.writtenStoreEffects.size,
      'after-checkpoint': this.checkpoints,
      'before-wait': this.waits,
    };
    return CRASH_POINTS.map((point) => ({ point, occurrences: counts[point] })).filter((p) => p.occurrences > 0);
  }
}
