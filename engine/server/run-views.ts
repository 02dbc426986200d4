/**
 * The studio's in-memory views of runs, kept current from the log.
 *
 * Per run: its events (loaded once, then only the new tail is read) and a live summary fold fed
 * as events arrive. The costlier folds — the fold cache for state-at-seq and the timeline with its
 * window index — are built on first use from the events held, then fed incrementally: listing
 * runs does not pay for them. A run that is opened (`RunViews.open`) has its state fold built in
 * the background, a slice per turn of the event loop, so State is ready when it is asked for. `get(runId)` asks the log
 * for the run record (one cheap row) and reads only events past the last seq held.
 * Invariant: a view never holds an event the log does not, and reads the log in seq order.
 */
import type { StoredEvent } from '../log/events.js';
import type { EventLog, RunRecord } from '../log/log.js';
import type { RunSummary, TimelineModel, TimelineWindow } from '../protocol/protocol.js';
import { CrashPointsHandler } from '../inspect/crash-points.js';
import { RunFoldCache } from '../inspect/fold-cache.js';
import { runFold } from '../inspect/fold-handler.js';
import { outlineMission } from '../inspect/mission-outline.js';
import { readRunSummary, RunSummaryHandler, withRunRecord } from '../inspect/run-summary.js';
import { TimelineHandler } from '../inspect/timeline.js';
import { TimelineWindowIndex, type WindowQuery } from '../inspect/timeline-window.js';
import type { CrashPointInfo } from '../protocol/protocol.js';
import { isOrphaned } from '../executor/owner.js';
import { isImported } from '../executor/run-bundle.js';
import { StudioError } from './studio-error.js';

const READ_PAGE = 5000;
/** Events the background state fold takes per turn of the event loop (a few ms on a big run). */
export const WARM_SLICE = 2000;
/** Window answers kept per head seq: every page load of a run first asks for the same whole-run window. */
const WINDOW_ANSWERS_KEPT = 8;

interface TimelineMemo {
  seq: number;
  model: TimelineModel;
  index: TimelineWindowIndex | null;
  /** Answers by query, for this seq only (a new event makes them all stale); oldest first. */
  answers: Map<string, TimelineWindow>;
}

export class RunView {
  private readonly events: StoredEvent[] = [];
  private readonly summary: RunSummaryHandler;
  private foldCache: RunFoldCache | null = null;
  /** Set when the state fold threw on an event: the cache's state past it is not the run's, so it is never answered. */
  private foldFailure: StudioError | null = null;
  private warming = false;
  private timeline: TimelineHandler | null = null;
  private timelineMemo: TimelineMemo | null = null;

  constructor(
    public record: RunRecord,
    /** When summaries are composed (SummaryStamps): one source for every view of a studio. */
    private readonly stamps: SummaryStamps = new SummaryStamps(() => 0),
  ) {
    this.summary = new RunSummaryHandler(record.runId);
  }

  get lastSeq(): number {
    return this.events.at(-1)?.seq ?? 0;
  }

  /**
   * The state-at fold cache with every event held: whatever `warmState` has not folded yet is
   * folded now. The cache holds a prefix of `events`, so its size is where to carry on.
   */
  get cache(): RunFoldCache {
    const cache = this.startedCache();
    if (cache.size < this.events.length) this.feed(cache, this.events.slice(cache.size));
    if (this.foldFailure !== null) throw this.foldFailure;
    return cache;
  }

  /**
   * Folds `events` into the state cache. An event the fold cannot read (a payload not of its
   * type's shape: an imported bundle's payloads are checked as loggable, not field by field)
   * stops the fold for good, with an error naming the event: a throw in the background warm-up
   * must not end the studio's process, and the half-folded state must never be answered.
   */
  private feed(cache: RunFoldCache, events: readonly StoredEvent[]): void {
    if (this.foldFailure !== null) return;
    try {
      cache.append(events);
    } catch (error) {
      const at = this.events[cache.size - 1];
      const message = error instanceof Error ? error.message : String(error);
      this.foldFailure = new StudioError(
        'internal',
        `run ${this.record.runId}: the studio cannot fold event ${at ? `#${at.seq} (${at.type})` : `after #${cache.lastSeq}`}: ${message} — its payload is not the shape this engine writes (an edited or foreign bundle?), so no state is shown from there on`,
      );
    }
  }

  /**
   * Builds the state-at fold in the background, WARM_SLICE events per turn of the event loop, so
   * a run that was opened has its State ready before it is asked for (on a 100k-event run with a
   * big store the first fold is most of a second) and other requests are served between slices.
   */
  warmState(): void {
    if (this.warming || this.foldFailure !== null || (this.foldCache !== null && this.foldCache.size === this.events.length)) return;
    this.warming = true;
    const step = () => {
      const cache = this.startedCache();
      if (cache.size < this.events.length) this.feed(cache, this.events.slice(cache.size, cache.size + WARM_SLICE));
      // Not unref'd: an unref'd immediate waits for the loop's next I/O or timer to run at all.
      if (cache.size < this.events.length && this.foldFailure === null) setImmediate(step);
      else this.warming = false;
    };
    setImmediate(step);
  }

  /** Events the state fold has taken so far (the rest it takes when next asked, or warming). */
  get stateFolded(): number {
    return this.foldCache?.size ?? 0;
  }

  private startedCache(): RunFoldCache {
    this.foldCache ??= new RunFoldCache(this.record.runId, outlineMission(this.record.missionFiles));
    return this.foldCache;
  }

  append(events: readonly StoredEvent[]): StoredEvent[] {
    const fresh = events.filter((e) => e.seq > this.lastSeq);
    for (const event of fresh) {
      this.events.push(event);
      this.summary.handleEvent(event);
      this.timeline?.handleEvent(event);
    }
    // The fold cache catches up when next used (`cache`), or in the background once warmed.
    if (this.foldCache !== null) this.warmState();
    return fresh;
  }

  /**
   * Events with fromSeq <= seq, in order, at most `limit`, and with `maxBytes` no more than about
   * that much payload JSON (the first event always, however large): a page is answered as one JSON
   * text, which a few answers of tens of megabytes took past what a string can hold.
   */
  slice(fromSeq: number, limit: number, maxBytes = Number.POSITIVE_INFINITY): StoredEvent[] {
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.events[mid]!.seq < fromSeq) lo = mid + 1;
      else hi = mid;
    }
    const end = Math.min(this.events.length, lo + limit);
    if (maxBytes === Number.POSITIVE_INFINITY) return this.events.slice(lo, end);
    let bytes = 0;
    let at = lo;
    for (; at < end; at++) {
      bytes += JSON.stringify(this.events[at]!.payload)?.length ?? 0;
      if (bytes > maxBytes && at > lo) break;
    }
    return this.events.slice(lo, at);
  }

  all(): readonly StoredEvent[] {
    return this.events;
  }

  summaryData(): RunSummary {
    return studioSummary(this.summary.data(), this.record, this.slice(1, 1)[0], this.stamps.next());
  }

  /** The summary fold of the events held, before the record is laid over it. */
  summaryFold(): RunSummary {
    return this.summary.data();
  }

  timelineData(): TimelineModel {
    return this.timelineAtHead().model;
  }

  /** The timeline indexed for window queries; rebuilt only when events arrived since the last one. */
  timelineIndex(): TimelineWindowIndex {
    const memo = this.timelineAtHead();
    memo.index ??= new TimelineWindowIndex(memo.model);
    return memo.index;
  }

  /** One window of the timeline; a window the index refuses (from > to, bad px) is a 'bad-request'. */
  timelineWindow(query: WindowQuery): TimelineWindow {
    const index = this.timelineIndex();
    const answers = this.timelineMemo!.answers;
    const key = `${query.axis}|${query.from ?? ''}|${query.to ?? ''}|${query.px ?? ''}`;
    const known = answers.get(key);
    if (known !== undefined) return known;
    try {
      const answer = index.window(query);
      if (answers.size >= WINDOW_ANSWERS_KEPT) answers.delete(answers.keys().next().value!);
      answers.set(key, answer);
      return answer;
    } catch (e) {
      if (e instanceof RangeError) throw new StudioError('bad-request', `run.timelineWindow: ${e.message.replace(/^timeline window: /, '')} (run ${this.record.runId})`);
      throw e;
    }
  }

  crashPoints(): CrashPointInfo[] {
    return runFold(new CrashPointsHandler(), this.events);
  }

  private timelineAtHead(): TimelineMemo {
    if (this.timeline === null) {
      this.timeline = new TimelineHandler(this.record.runId);
      for (const event of this.events) this.timeline.handleEvent(event);
    }
    if (this.timelineMemo?.seq !== this.lastSeq) {
      this.timeline.finalize();
      this.timelineMemo = { seq: this.lastSeq, model: this.timeline.data(), index: null, answers: new Map() };
    }
    return this.timelineMemo;
  }
}

/**
 * A run's summary as the studio shows it: the fold's (or the log's counts', `readRunSummary`)
 * with the record over it, where the run came from, and whether it is orphaned.
 */
function studioSummary(folded: RunSummary, record: RunRecord, first: StoredEvent | undefined, composedAt: number): RunSummary {
  const summary = withRunRecord(folded, record);
  const { status, owner } = record;
  // Where the run came from: a fork names its parent in its first event, an import its owner.
  const forkedFrom = first?.type === 'run.started' ? first.payload.forkedFrom : undefined;
  const origin = {
    ...(forkedFrom ? { forkedFrom: { runId: forkedFrom.runId, atSeq: forkedFrom.atSeq } } : {}),
    ...(isImported(record) ? { imported: true } : {}),
    composedAt,
  };
  // An imported run's record says 'running' only to keep workers off it: say what its log ends as.
  if (isImported(record) && status === 'running') {
    // What it waits on is its log's (an import sets no wake time on its record): a timer's until.
    const waiting = { waitingOn: folded.waitingOn, waitingSince: folded.waitingSince, wakeAt: folded.wakeAt };
    return folded.status === 'suspended' ? { ...summary, ...origin, status: 'suspended', ...waiting } : { ...summary, ...origin, stopped: true };
  }
  return isOrphaned(status, owner) ? { ...summary, ...origin, orphaned: true } : { ...summary, ...origin };
}

/**
 * `RunSummary.composedAt`: the studio's clock in microseconds, made strictly increasing, so a
 * summary composed later always stamps higher, and a later studio process starts past an earlier one's.
 */
export class SummaryStamps {
  private last = 0;

  constructor(private readonly nowMs: () => number) {}

  next(): number {
    this.last = Math.max(this.last + 1, Math.floor(this.nowMs() * 1000));
    return this.last;
  }
}

/** Views of finished runs kept for when they are asked for again: the most recently used. */
export const FINISHED_VIEWS_KEPT = 6;
/** A view no request and no poll has used for this long is dropped, and its memory with it. */
export const VIEW_IDLE_MS = 60_000;

/**
 * Every run's view, read on demand and kept while it is used. A view holds its run's whole log
 * and the folds built from it, so views are dropped (`sweep`): past FINISHED_VIEWS_KEPT of
 * finished runs, the least recently used, and any view unused for VIEW_IDLE_MS. A view the live
 * poll reads (a running or suspended run) is used every poll. A dropped view is read again from
 * the log when next asked for; a caller holding one keeps a consistent, if no longer growing, copy.
 */
export class RunViews {
  private readonly views = new Map<string, RunView>();
  /** When each view was last used, in order of use (oldest first). */
  private readonly used = new Map<string, number>();
  /** One read per run at a time: concurrent callers share it instead of reading twice. */
  private readonly inflight = new Map<string, Promise<RunView>>();
  /** Every summary the views compose is stamped from here (RunSummary.composedAt). */
  private readonly stamps: SummaryStamps;

  constructor(
    private readonly log: EventLog,
    /** The studio's clock (milliseconds), by which a view's idleness is judged. */
    private readonly now: () => number,
  ) {
    this.stamps = new SummaryStamps(now);
  }

  /** How many views are held (tests, and the sweep's own account). */
  get size(): number {
    return this.views.size;
  }

  /** Drops the views not worth their memory (see the class comment). */
  sweep(): void {
    const now = this.now();
    let finished = 0;
    for (const runId of [...this.used.keys()].reverse()) {
      const view = this.views.get(runId);
      if (view === undefined) continue;
      const done = view.record.status === 'completed' || view.record.status === 'failed';
      const drop = (done && ++finished > FINISHED_VIEWS_KEPT) || now - this.used.get(runId)! > VIEW_IDLE_MS;
      // A view being read is the one just asked for: it stays (and counts among those kept).
      if (drop && !this.inflight.has(runId)) {
        this.views.delete(runId);
        this.used.delete(runId);
      }
    }
  }

  /**
   * The run's view with every event the log holds now (its record and only the new events are
   * read); 'not-found' for an unknown run. Which caller's read brought an event in is not
   * reported: any caller may have, so pushes keep their own account (studio-service.ts).
   */
  get(runId: string): Promise<RunView> {
    const running = this.inflight.get(runId);
    if (running !== undefined) return running;
    const work = this.read(runId, false).finally(() => this.inflight.delete(runId));
    this.inflight.set(runId, work);
    return work;
  }

  /**
   * As `get`, reading on past the run row's lastSeq until the log has no more: a process killed
   * mid-run may have committed events its row does not count yet (the crash lab reads a dead
   * process's log this way).
   */
  async getAll(runId: string): Promise<RunView> {
    await this.inflight.get(runId)?.catch(() => undefined);
    return this.read(runId, true);
  }

  /** As `get`, for a run the user opened: its state fold starts building in the background. */
  async open(runId: string): Promise<RunView> {
    const view = await this.get(runId);
    view.warmState();
    return view;
  }

  peek(runId: string): RunView | undefined {
    return this.views.get(runId);
  }

  /**
   * The summary of a listed run without loading it: from its view when that holds every event the
   * record counts, else from the log's counts (readRunSummary) — a list of 200 runs, one of them
   * 100k events long, reads a few rows of each instead of every event.
   */
  async summary(record: RunRecord): Promise<RunSummary> {
    const view = this.views.get(record.runId);
    if (view !== undefined && view.lastSeq >= record.lastSeq) return studioSummary(view.summaryFold(), record, view.slice(1, 1)[0], this.stamps.next());
    const { summary, first } = await readRunSummary(this.log, record.runId);
    return studioSummary(summary, record, first, this.stamps.next());
  }

  private async read(runId: string, pastRecord: boolean): Promise<RunView> {
    const record = await this.log.getRun(runId);
    if (record === undefined) throw new StudioError('not-found', `no run "${runId}" in this database; list runs with runs.list`);
    let view = this.views.get(runId);
    this.used.delete(runId);
    this.used.set(runId, this.now());
    if (view === undefined) {
      view = new RunView(record, this.stamps);
      this.views.set(runId, view);
      this.sweep();
    }
    view.record = record;
    while (pastRecord || view.lastSeq < record.lastSeq) {
      const page = await this.log.read(runId, { fromSeq: view.lastSeq + 1, limit: READ_PAGE });
      if (page.length === 0) break;
      view.append(page);
    }
    return view;
  }
}
