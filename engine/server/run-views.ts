/**
 * The studio's in-memory views of runs, kept current from the log.
 *
 * Per run: its events (loaded once, then only the new tail is read), a fold cache for
 * state-at-seq, and live summary and timeline folds fed as events arrive. `sync(runId)` asks the
 * log for the run record (one cheap row) and reads only events past the last seq held.
 * Invariant: a view never holds an event the log does not, and reads the log in seq order.
 */
import type { StoredEvent } from '../log/events.js';
import type { EventLog, RunRecord } from '../log/log.js';
import type { RunSummary, TimelineModel } from '../protocol/protocol.js';
import { CrashPointsHandler } from '../inspect/crash-points.js';
import { RunFoldCache } from '../inspect/fold-cache.js';
import { runFold } from '../inspect/fold-handler.js';
import { outlineMission } from '../inspect/mission-outline.js';
import { RunSummaryHandler, withRunRecord } from '../inspect/run-summary.js';
import { TimelineHandler } from '../inspect/timeline.js';
import type { CrashPointInfo } from '../protocol/protocol.js';
import { StudioError } from './studio-error.js';

const READ_PAGE = 5000;

export class RunView {
  readonly cache: RunFoldCache;
  private readonly summary: RunSummaryHandler;
  private readonly timeline: TimelineHandler;
  private timelineMemo: { seq: number; model: TimelineModel } | null = null;

  constructor(public record: RunRecord) {
    const outline = outlineMission(record.missionFiles);
    this.cache = new RunFoldCache(record.runId, outline);
    this.summary = new RunSummaryHandler(record.runId);
    this.timeline = new TimelineHandler(record.runId);
  }

  get lastSeq(): number {
    return this.cache.lastSeq;
  }

  append(events: readonly StoredEvent[]): StoredEvent[] {
    const fresh = events.filter((e) => e.seq > this.cache.lastSeq);
    this.cache.append(fresh);
    for (const event of fresh) {
      this.summary.handleEvent(event);
      this.timeline.handleEvent(event);
    }
    return fresh;
  }

  summaryData(): RunSummary {
    return withRunRecord(this.summary.data(), this.record);
  }

  timelineData(): TimelineModel {
    if (this.timelineMemo?.seq !== this.lastSeq) {
      this.timeline.finalize();
      this.timelineMemo = { seq: this.lastSeq, model: this.timeline.data() };
    }
    return this.timelineMemo.model;
  }

  crashPoints(): CrashPointInfo[] {
    return runFold(new CrashPointsHandler(), this.cache.all());
  }
}

export class RunViews {
  private readonly views = new Map<string, RunView>();
  /** One sync per run at a time: concurrent callers share it instead of reading twice. */
  private readonly inflight = new Map<string, Promise<{ view: RunView; fresh: StoredEvent[] }>>();

  constructor(private readonly log: EventLog) {}

  /** The run's view with every event the log holds now; 'not-found' for an unknown run. */
  async get(runId: string): Promise<RunView> {
    return (await this.sync(runId)).view;
  }

  peek(runId: string): RunView | undefined {
    return this.views.get(runId);
  }

  /** Reads the run record and any new events; `fresh` are the events this call added. */
  sync(runId: string): Promise<{ view: RunView; fresh: StoredEvent[] }> {
    const running = this.inflight.get(runId);
    if (running !== undefined) return running.then(({ view }) => ({ view, fresh: [] }));
    const work = this.doSync(runId).finally(() => this.inflight.delete(runId));
    this.inflight.set(runId, work);
    return work;
  }

  private async doSync(runId: string): Promise<{ view: RunView; fresh: StoredEvent[] }> {
    const record = await this.log.getRun(runId);
    if (record === undefined) throw new StudioError('not-found', `no run "${runId}" in this database; list runs with runs.list`);
    let view = this.views.get(runId);
    if (view === undefined) {
      view = new RunView(record);
      this.views.set(runId, view);
    }
    view.record = record;
    const fresh: StoredEvent[] = [];
    while (view.lastSeq < record.lastSeq) {
      const page = await this.log.read(runId, { fromSeq: view.lastSeq + 1, limit: READ_PAGE });
      if (page.length === 0) break;
      fresh.push(...view.append(page));
    }
    return { view, fresh };
  }
}
