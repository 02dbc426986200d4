/**
 * Reachable crash points of a mission and how often a run reaches each, from a reference run.
 *
 * Counted from the reference run's events by the same table the executor's CrashInjector obeys
 * (journal/effects.ts: which effect passes which point, keyed how), so every `POINT:N` offered
 * with N <= occurrences is a point a run of the same mission and data dies at.
 */
import { CRASH_POINTS, passesRecordedBy, type CrashPoint } from '../journal/effects.js';
import { logFormatOf, type StoredEvent } from '../log/events.js';
import { assertInOrder, type FoldHandler } from './fold-handler.js';

export type CrashPointName = 'before-effect' | 'after-effect' | 'mid-store' | 'after-checkpoint' | 'before-wait';

export interface CrashPointInfo {
  point: CrashPointName;
  /** How many times a crash-free run of this mission reaches it (from the reference run). */
  occurrences: number;
}

export { CRASH_POINTS };

export class CrashPointsHandler implements FoldHandler<CrashPointInfo[]> {
  private lastSeq = 0;
  private passes = new Map<CrashPoint, Set<string>>();
  /** Every first pass, as `POINT:N`, in the order the run made them (the crash lab's chaos picks). */
  private ordered: string[] = [];
  /** Step paths of file/postgrest batches (a `store.intent` precedes their writes). */
  private externalPaths = new Set<string>();
  private readonly log = { format: 1, externalBatchAt: (path: string) => this.externalPaths.has(path) };

  reset(): void {
    this.lastSeq = 0;
    this.passes = new Map();
    this.ordered = [];
    this.externalPaths = new Set();
    this.log.format = 1;
  }

  handleEvent(event: StoredEvent): void {
    assertInOrder(this.lastSeq, event, 'crash points');
    this.lastSeq = event.seq;
    if (event.type === 'run.started') this.log.format = logFormatOf([event]);
    if (event.type === 'store.intent') this.externalPaths.add(event.stepPath);
    for (const { point, key } of passesRecordedBy(event, this.log)) {
      let keys = this.passes.get(point);
      if (!keys) this.passes.set(point, (keys = new Set()));
      if (keys.has(key)) continue;
      keys.add(key);
      this.ordered.push(`${point}:${keys.size}`);
    }
  }

  finalize(): void {
    // Counts are complete after each event.
  }

  /** The `POINT:N` a run of the same mission and data dies at, each once, in the order this run reached them. */
  reached(): string[] {
    return [...this.ordered];
  }

  data(): CrashPointInfo[] {
    return CRASH_POINTS.map((point) => ({ point, occurrences: this.passes.get(point)?.size ?? 0 })).filter((p) => p.occurrences > 0);
  }
}
