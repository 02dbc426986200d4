/**
 * RunSummary fold: one row of the runs table from a run's events.
 *
 * Counts are facts of the log: steps = `step.completed`, effects = 2xx `http.response` plus
 * `store.write`, resumes = `run.resumed`, crashes survived = `run.resumed` with reason 'crash' whose
 * replay did not diverge (a `run.failed` for NONDETERMINISM before the next resume takes it back).
 * failures = the `step.failed` events where a failure began: a failure travels up through every
 * enclosing step (each logs `step.failed`), so a `step.failed` whose path encloses the previous
 * one's is the same failure (log/run-failures.ts; a resume of a finished run lists them with it).
 * In a completed run they are the failures a loop tolerated (`onError continue`/`queue`), which
 * the run status alone does not show. (Under `trace: minimal`
 * a pure step such as `validate` logs nothing, so its tolerated failures are not counted.)
 * Status and waiting info come from the events too; the service overlays the run record (which
 * knows about a process that died without writing anything) with `withRunRecord`.
 */
import { failureText, NONDETERMINISM_CODE, summaryMessage, SUMMARY_EVENT_TYPES, type EventType, type StoredEvent } from '../log/events.js';
import type { EventCounts, EventTable, RunStatus } from '../log/log.js';
import { FailureStarts, type RunFailure } from '../log/run-failures.js';
import { assertInOrder, runFold, type FoldHandler } from './fold-handler.js';

export type { RunFailure };

/** One row of the runs table: a fold over the run's events plus its run record. */
export interface RunSummary {
  runId: string;
  mission: string;
  status: RunStatus;
  /** 'running' in the log, but no live process owns it (killed, crashed): the worker's, or Resume's, to take over. */
  orphaned?: boolean;
  startedAt: number;
  updatedAt: number;
  durationMs: number;
  steps: number;
  effects: number;
  crashesSurvived: number;
  resumes: number;
  lastSeq: number;
  /** What a run that is not moving waits on ('timer', 'webhook:/approved', …), since and until when. */
  waitingOn: string | null;
  waitingSince: number | null;
  wakeAt: number | null;
  error: string | null;
  /** Failures the run went on after (a loop's `onError continue`), plus the one that ended a failed run. */
  failures: number;
  firstFailure: RunFailure | null;
  /** The run began as a fork of another run's log up to `atSeq` (`reqon fork`, "Fork from here"). */
  forkedFrom?: { runId: string; atSeq: number };
  /** Imported from a run bundle (`reqon import`, a dropped .reqonrun): read-only, never continued. */
  imported?: boolean;
  /**
   * An imported run whose log ends before its end (killed, or exported while it ran): it never
   * moves again, whatever its record says (`reqon show`: "stopped before its end").
   */
  stopped?: boolean;
  /**
   * The studio's: when it composed this summary, in microseconds, strictly increasing within its
   * process. Answers and pushes travel separate channels (HTTP, WebSocket) and can cross; of two
   * summaries with the same record (updatedAt, lastSeq), the later-composed one is the truer —
   * whether the run is orphaned changes no row.
   */
  composedAt?: number;
}


interface Waiting {
  on: string;
  since: number;
  until: number | null;
  /** pauseId or waitId, to clear it when it is resumed. */
  id: string | null;
}

export class RunSummaryHandler implements FoldHandler<RunSummary> {
  private runId = '';
  private mission = '';
  private status: RunStatus = 'running';
  private startedAt = 0;
  private updatedAt = 0;
  private steps = 0;
  private effects = 0;
  private resumes = 0;
  private crashes = 0;
  /** The last `run.resumed` was a crash's, and no run.failed has followed it yet. */
  private crashResumePending = false;
  private lastSeq = 0;
  private waiting: Waiting | null = null;
  /**
   * Pauses and waits registered and not yet resumed, by step path: the branches of a parallel
   * stage (or a concurrent loop) may each hold one, and the run suspends on the one whose step
   * path its `run.suspended` carries — not on whichever was registered last.
   */
  private readonly open = new Map<string, Waiting>();
  private error: string | null = null;
  private failures = 0;
  private firstFailure: RunFailure | null = null;
  private readonly failureStarts = new FailureStarts();

  constructor(private readonly fallbackRunId = '') {
    this.reset();
  }

  reset(): void {
    this.runId = this.fallbackRunId;
    this.mission = '';
    this.status = 'running';
    this.startedAt = 0;
    this.updatedAt = 0;
    this.steps = 0;
    this.effects = 0;
    this.resumes = 0;
    this.crashes = 0;
    this.crashResumePending = false;
    this.lastSeq = 0;
    this.waiting = null;
    this.error = null;
    this.failures = 0;
    this.firstFailure = null;
    this.failureStarts.reset();
  }

  handleEvent(event: StoredEvent): void {
    assertInOrder(this.lastSeq, event, 'run summary');
    if (this.lastSeq === 0) {
      this.runId = event.runId;
      this.startedAt = event.recordedAt;
    }
    this.lastSeq = event.seq;
    this.updatedAt = Math.max(this.updatedAt, event.recordedAt);
    switch (event.type) {
      case 'run.started':
        this.mission = event.payload.mission;
        break;
      case 'step.completed':
        this.steps += 1;
        break;
      case 'step.failed': {
        const failure = this.failureStarts.next(event);
        if (failure === undefined) break;
        this.failures += 1;
        this.firstFailure ??= failure;
        break;
      }
      case 'http.response': {
        if (isEffectStatus(event.payload.response.status)) this.effects += 1;
        break;
      }
      case 'store.write':
        this.effects += 1;
        break;
      case 'run.resumed': {
        this.resumes += 1;
        this.crashResumePending = event.payload.reason === 'crash';
        if (this.crashResumePending) this.crashes += 1;
        this.status = 'running';
        break;
      }
      case 'run.suspended': {
        const { reason, dueAt } = event.payload;
        this.status = 'suspended';
        const own = this.open.get(event.stepPath);
        // A pause or wait registered just before names the trigger more precisely; keep it.
        if (own !== undefined) {
          this.waiting = own.until === null && dueAt !== undefined ? { ...own, until: dueAt } : own;
        } else if (this.waiting === null) {
          this.waiting = { on: reason, since: event.recordedAt, until: dueAt ?? null, id: null };
        } else if (dueAt !== undefined && this.waiting.until === null) {
          this.waiting = { ...this.waiting, until: dueAt };
        }
        break;
      }
      case 'pause.created': {
        const p = event.payload;
        const on = p.webhookPath !== undefined ? `webhook:${p.webhookPath}` : 'timer';
        this.waiting = { on, since: event.recordedAt, until: p.dueAt ?? null, id: p.pauseId };
        this.open.set(event.stepPath, this.waiting);
        break;
      }
      case 'wait.registered': {
        const w = event.payload;
        this.waiting = { on: `webhook:${w.path}`, since: event.recordedAt, until: w.expiresAt, id: w.waitId };
        this.open.set(event.stepPath, this.waiting);
        break;
      }
      case 'pause.resumed': {
        const id = event.payload.pauseId;
        this.open.delete(event.stepPath);
        if (this.waiting !== null && (this.waiting.id === null || this.waiting.id === id)) this.waiting = null;
        this.status = 'running';
        break;
      }
      case 'wait.completed': {
        const id = event.payload.waitId;
        this.open.delete(event.stepPath);
        if (this.waiting !== null && (this.waiting.id === null || this.waiting.id === id)) this.waiting = null;
        break;
      }
      case 'run.completed':
        this.status = 'completed';
        this.waiting = null;
        break;
      case 'run.failed':
        this.status = 'failed';
        this.waiting = null;
        this.error = summaryMessage(failureText(event.payload.error));
        // The resume after the crash stopped at a divergence: the run did not survive that crash.
        if (this.crashResumePending && event.payload.error.code === NONDETERMINISM_CODE) this.crashes -= 1;
        this.crashResumePending = false;
        break;
      default:
        break;
    }
  }

  finalize(): void {
    // Nothing is open in a summary: every field is already current after each event.
  }

  data(): RunSummary {
    return {
      runId: this.runId,
      mission: this.mission,
      status: this.status,
      startedAt: this.startedAt,
      updatedAt: this.updatedAt,
      durationMs: Math.max(0, this.updatedAt - this.startedAt),
      steps: this.steps,
      effects: this.effects,
      crashesSurvived: this.crashes,
      resumes: this.resumes,
      lastSeq: this.lastSeq,
      waitingOn: this.waiting?.on ?? null,
      waitingSince: this.waiting?.since ?? null,
      wakeAt: this.waiting?.until ?? null,
      error: this.error,
      failures: this.failures,
      firstFailure: this.firstFailure,
    };
  }
}

/** An `http.response` with this status is an effect (the API took the request). */
function isEffectStatus(status: unknown): boolean {
  return (status as number) >= 200 && (status as number) < 300;
}

export { SUMMARY_EVENT_TYPES };

/** The events the summary counts: all it needs of them is how many (and of responses, their statuses). */
export const COUNTED_EVENT_TYPES: readonly EventType[] = ['step.completed', 'store.write', 'http.response'];

/**
 * What RunSummaryHandler folds from every event of a run, from the log's counts and the events of
 * SUMMARY_EVENT_TYPES up to `counts.lastSeq` (test/studio/run-summary-counts.int.test.ts holds the two
 * equal): the counted fields of the handler are the ones those events leave at zero.
 */
export function summaryFromCounts(runId: string, counts: EventCounts, events: Iterable<StoredEvent>): RunSummary {
  const summary = runFold(new RunSummaryHandler(runId), events);
  if (counts.lastSeq === 0) return summary;
  const startedAt = counts.firstRecordedAt!;
  // The fold's updatedAt starts at 0 (Math.max over the events from there).
  const updatedAt = Math.max(0, counts.latestRecordedAt!);
  const responses = counts.responseStatuses.reduce((n, r) => n + (isEffectStatus(r.status) ? r.count : 0), 0);
  return {
    ...summary,
    startedAt,
    updatedAt,
    durationMs: Math.max(0, updatedAt - startedAt),
    steps: counts.byType['step.completed'] ?? 0,
    effects: responses + (counts.byType['store.write'] ?? 0),
    lastSeq: counts.lastSeq,
  };
}

/**
 * A run's summary without reading its whole log: the database counts most events, and only the
 * few of SUMMARY_EVENT_TYPES are read. Also the run's first event when it is one of those (its
 * `run.started`: where a fork came from).
 */
export async function readRunSummary(log: Pick<EventTable, 'eventCounts' | 'read'>, runId: string): Promise<{ summary: RunSummary; first: StoredEvent | undefined }> {
  const counts = await log.eventCounts(runId, COUNTED_EVENT_TYPES);
  // Bounded by the counted seq: a run that grows meanwhile is summed over the same events (append-only).
  const events = counts.lastSeq === 0 ? [] : await log.read(runId, { types: SUMMARY_EVENT_TYPES, toSeq: counts.lastSeq });
  // seq starts at 1 (GUARANTEES): an event at seq 1 is the run's first.
  return { summary: summaryFromCounts(runId, counts, events), first: events[0]?.seq === 1 ? events[0] : undefined };
}

/** How a run's status reads with its failures: "completed with 3 failures". */
export function statusLabel(summary: Pick<RunSummary, 'status' | 'failures'>): string {
  if (summary.status !== 'completed' || summary.failures === 0) return summary.status;
  return `completed with ${summary.failures} failure${summary.failures === 1 ? '' : 's'}`;
}

/** The fields of a run record the summary trusts over the events. */
export interface SummaryRecord {
  runId: string;
  mission: string;
  status: RunStatus;
  createdAt: number;
  updatedAt: number;
  lastSeq: number;
  wakeAt: number | null;
  waitingOn: string | null;
}

/**
 * The record is the authority on status (a crashed process leaves 'running' with an expired
 * lease; a resumer flips 'suspended' before its first event) and on what a suspended run waits on.
 */
export function withRunRecord(summary: RunSummary, record: SummaryRecord): RunSummary {
  const suspended = record.status === 'suspended';
  return {
    ...summary,
    runId: record.runId,
    mission: summary.mission !== '' ? summary.mission : record.mission,
    status: record.status,
    startedAt: summary.lastSeq > 0 ? summary.startedAt : record.createdAt,
    updatedAt: Math.max(summary.updatedAt, record.updatedAt),
    durationMs: Math.max(0, Math.max(summary.updatedAt, record.updatedAt) - (summary.lastSeq > 0 ? summary.startedAt : record.createdAt)),
    lastSeq: Math.max(summary.lastSeq, record.lastSeq),
    waitingOn: suspended ? (summary.waitingOn ?? record.waitingOn) : null,
    waitingSince: suspended ? summary.waitingSince : null,
    wakeAt: suspended ? (record.wakeAt ?? summary.wakeAt) : null,
  };
}
