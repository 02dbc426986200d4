/**
 * Live streaming for the studio: polls the log and pushes what changed.
 *
 * Every ~100 ms one run-record read per watched run, and a read of only the new events when its
 * lastSeq moved; about once a second the run list, to notice runs started elsewhere. Pushes
 * announce what changed since the last push for that run (`announced`), whichever read brought
 * it into the views: 'run.appended' says which seqs are new (the views read the events they show
 * by request), 'runs.changed' carries the new summary.
 */
import type { EventLog } from '../log/log.js';
import type { PushChannel, Pushes } from '../protocol/protocol.js';
import type { RunViews } from './run-views.js';

const LIST_EVERY_TICKS = 10;

export interface LivePollDeps {
  log: EventLog;
  views: RunViews;
  push<P extends PushChannel>(channel: P, payload: Pushes[P]): void;
  /** Whether anyone listens (the run list is polled only then). */
  listening(): boolean;
  /** A run this studio has a process for stays watched after it ends (its exit is pushed after its last events). */
  hasProcess(runId: string): boolean;
  intervalMs?: number;
}

export class LivePoll {
  private readonly watched = new Set<string>();
  /**
   * Per run, what the pushes have announced: the last seq sent in 'run.appended' and the stamp
   * (status|updatedAt|lastSeq) last sent in 'runs.changed'. Polls compare against this, not against
   * the view before their own read: a request may have read the new events into the view first.
   */
  private readonly announced = new Map<string, { seq: number; stamp: string | null }>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  private ticks = 0;

  constructor(private readonly deps: LivePollDeps) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.deps.intervalMs ?? 100);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Pushes for `runId` carry on after `lastSeq` (what the caller read by request). */
  watch(runId: string, lastSeq?: number): void {
    this.watched.add(runId);
    if (lastSeq !== undefined && !this.announced.has(runId)) this.announced.set(runId, { seq: lastSeq, stamp: null });
  }

  async pollRun(runId: string): Promise<void> {
    const { views } = this.deps;
    const heldBefore = views.peek(runId)?.lastSeq ?? 0;
    const view = await views.get(runId);
    // Read after the await and updated in the same turn: two polls of one run (the tick's and a
    // process exit's) never announce the same events twice.
    const before = this.announced.get(runId) ?? { seq: heldBefore, stamp: null };
    if (view.lastSeq > before.seq) this.deps.push('run.appended', { runId, fromSeq: before.seq + 1, lastSeq: view.lastSeq });
    const summary = view.summaryData();
    // An owner dying changes no row, only whether the run is orphaned: that is news too.
    const stamp = stampOf(view.record.status, view.record.updatedAt, view.lastSeq) + (summary.orphaned ? '|orphaned' : '');
    if (stamp !== before.stamp) this.deps.push('runs.changed', summary);
    this.announced.set(runId, { seq: view.lastSeq, stamp });
    const finished = view.record.status === 'completed' || view.record.status === 'failed';
    if (finished && !this.deps.hasProcess(runId)) this.watched.delete(runId);
  }

  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      if (this.ticks++ % LIST_EVERY_TICKS === 0 && this.deps.listening()) await this.pollList();
      for (const runId of [...this.watched]) await this.pollRun(runId);
      // The poll is the studio's clock: views unused for a while are dropped even when no request comes.
      this.deps.views.sweep();
    } catch {
      // A transient read failure (database busy) is retried on the next tick.
    } finally {
      this.ticking = false;
    }
  }

  private async pollList(): Promise<void> {
    for (const record of await this.deps.log.listRuns({ limit: 100 })) {
      if (this.announced.get(record.runId)?.stamp === stampOf(record.status, record.updatedAt, record.lastSeq)) continue;
      // A run seen for the first time: its history is for requests to read; pushes carry what comes after.
      if (!this.announced.has(record.runId)) this.announced.set(record.runId, { seq: record.lastSeq, stamp: null });
      if (record.status === 'running' || record.status === 'suspended') this.watched.add(record.runId);
      else if (this.deps.views.peek(record.runId) === undefined) {
        // A finished run nobody opened is announced from the log's counts: its view would read its whole log.
        this.deps.push('runs.changed', await this.deps.views.summary(record));
        this.announced.set(record.runId, { seq: record.lastSeq, stamp: stampOf(record.status, record.updatedAt, record.lastSeq) });
        continue;
      }
      await this.pollRun(record.runId);
    }
  }
}

function stampOf(status: string, updatedAt: number, lastSeq: number): string {
  return `${status}|${updatedAt}|${lastSeq}`;
}
