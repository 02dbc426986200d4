/**
 * Timeline fold: lanes (one per action and stage), step bars and point markers.
 *
 * Lanes come from `stage.started`/`action.started`; a bar runs from `step.started` to the
 * matching `step.completed`/`step.failed` (nested steps get their own bars, on the same lane);
 * markers flag effects, retries (an `http.error` or `http.response` with `retryInMs`), crashes and resumes, timers and pauses, webhooks, checkpoints
 * and failures. Invariant: every bar has startSeq <= endSeq <= lastSeq, and a bar still open at
 * `finalize()` is 'running' up to the last event. A step started again while its earlier start
 * is still open (the process died inside it and a resume re-ran it) closes the earlier bar as
 * 'failed' at the restart.
 */
import { failureText, type StoredEvent } from '../log/events.js';
import { assertInOrder, type FoldHandler } from './fold-handler.js';
import { ownerAction } from './step-owner.js';
import { instantText } from '../env/instant-text.js';

export interface TimelineLane {
  id: string;
  /** Action name, with the pipeline stage it ran in. */
  label: string;
  stage: number;
}

export interface TimelineBar {
  laneId: string;
  stepPath: string;
  stepType: string;
  line: number;
  startSeq: number;
  endSeq: number;
  startAt: number;
  endAt: number;
  status: 'running' | 'completed' | 'failed';
}

export type MarkerKind = 'effect' | 'retry' | 'crash' | 'resume' | 'timer' | 'pause' | 'webhook' | 'error' | 'checkpoint';

export interface TimelineMarker {
  laneId: string | null;
  seq: number;
  at: number;
  kind: MarkerKind;
  label: string;
}

export interface TimelineModel {
  runId: string;
  startAt: number;
  endAt: number;
  lastSeq: number;
  lanes: TimelineLane[];
  bars: TimelineBar[];
  markers: TimelineMarker[];
}

interface OpenBar {
  bar: TimelineBar;
}

export class TimelineHandler implements FoldHandler<TimelineModel> {
  private runId = '';
  private startAt = 0;
  private endAt = 0;
  private lastSeq = 0;
  private stage = 0;
  private lanes: TimelineLane[] = [];
  private laneIds = new Set<string>();
  /** Actions of the current stage → their lane id. */
  private stageActions = new Map<string, string>();
  private lastLane: string | null = null;
  /** The lane of the action that failed last: a stage's or run's failure is drawn there, not on whichever lane moved last. */
  private failedLane: string | null = null;
  private bars: TimelineBar[] = [];
  private open = new Map<string, OpenBar[]>();
  private markers: TimelineMarker[] = [];

  constructor(private readonly fallbackRunId = '') {
    this.reset();
  }

  reset(): void {
    this.runId = this.fallbackRunId;
    this.startAt = 0;
    this.endAt = 0;
    this.lastSeq = 0;
    this.stage = 0;
    this.lanes = [];
    this.laneIds = new Set();
    this.stageActions = new Map();
    this.lastLane = null;
    this.failedLane = null;
    this.bars = [];
    this.open = new Map();
    this.markers = [];
  }

  handleEvent(event: StoredEvent): void {
    assertInOrder(this.lastSeq, event, 'timeline');
    if (this.lastSeq === 0) {
      this.runId = event.runId;
      this.startAt = event.recordedAt;
    }
    this.lastSeq = event.seq;
    this.endAt = Math.max(this.endAt, event.recordedAt);

    switch (event.type) {
      case 'stage.started': {
        const { index, actions } = event.payload;
        this.stage = index;
        this.stageActions = new Map();
        this.failedLane = null;
        for (const action of actions) this.ensureLane(action);
        break;
      }
      case 'action.started':
        this.lastLane = this.ensureLane(event.payload.action);
        break;
      case 'step.started': {
        const { stepType, line } = event.payload;
        const stack = this.open.get(event.stepPath) ?? [];
        // An earlier start still open for the same path: the process died inside it.
        for (const stale of stack.splice(0)) this.close(stale.bar, event, 'failed', event.seq - 1);
        const bar: TimelineBar = {
          laneId: this.laneFor(event.stepPath) ?? this.unassignedLane(),
          stepPath: event.stepPath,
          stepType,
          line,
          startSeq: event.seq,
          endSeq: event.seq,
          startAt: event.recordedAt,
          endAt: event.recordedAt,
          status: 'running',
        };
        this.bars.push(bar);
        stack.push({ bar });
        this.open.set(event.stepPath, stack);
        break;
      }
      case 'step.completed':
        this.closeOpen(event, 'completed');
        break;
      case 'step.failed':
        this.closeOpen(event, 'failed');
        this.mark(event, 'error', failureText(event.payload.error));
        break;
      case 'http.request': {
        const { request, attempt } = event.payload;
        this.mark(event, 'effect', `${request.method} ${request.url}${attempt > 1 ? ` (attempt ${attempt})` : ''}`);
        break;
      }
      case 'store.write': {
        const { store, key, op, removed } = event.payload;
        if (op === 'delete') this.mark(event, 'effect', `delete ${store}[${key}]${removed === false ? ' (absent)' : ''}`);
        else this.mark(event, 'effect', `store ${store} ← ${key}`);
        break;
      }
      case 'http.response': {
        const { response, retryInMs, attempt } = event.payload;
        if (retryInMs !== undefined) this.mark(event, 'retry', `attempt ${attempt} answered HTTP ${response.status}; retry in ${retryInMs} ms`);
        break;
      }
      case 'http.error': {
        const { error, retryInMs, attempt } = event.payload;
        if (retryInMs !== undefined) this.mark(event, 'retry', `attempt ${attempt} failed (${error.message}); retry in ${retryInMs} ms`);
        else this.mark(event, 'error', `attempt ${attempt} failed: ${error.message}`);
        break;
      }
      case 'run.resumed': {
        const { reason, replayFromSeq } = event.payload;
        if (reason === 'crash') this.mark(event, 'crash', 'process died (crash); restarted');
        this.mark(event, 'resume', `resumed (${reason}); replays the log up to seq ${replayFromSeq}, then goes on`);
        break;
      }
      case 'pause.created': {
        const { pauseId, dueAt, webhookPath } = event.payload;
        const due = dueAt !== undefined ? ` until ${instantText(dueAt)}` : '';
        const hook = webhookPath !== undefined ? ` or webhook ${webhookPath}` : '';
        this.mark(event, 'pause', `pause ${pauseId}${due}${hook}`);
        break;
      }
      case 'run.suspended': {
        const { reason, dueAt } = event.payload;
        const due = dueAt !== undefined ? ` until ${instantText(dueAt)}` : '';
        this.mark(event, reason === 'timer' ? 'timer' : 'pause', `suspended (${reason})${due}`);
        break;
      }
      case 'wait.registered': {
        const { path, expectedEvents } = event.payload;
        this.mark(event, 'pause', `waiting for ${expectedEvents} webhook event(s) on ${path}`);
        break;
      }
      case 'webhook.received':
        this.mark(event, 'webhook', `webhook ${event.payload.eventId}`);
        break;
      case 'checkpoint.advanced': {
        const { key, records } = event.payload;
        this.mark(event, 'checkpoint', `checkpoint ${key}${records !== undefined ? ` (${records} records)` : ''}`);
        break;
      }
      case 'run.failed':
        // The run ended with these steps unfinished (a replay that diverged, a loop cut off): none is still running.
        for (const stack of this.open.values()) for (const { bar } of stack) this.close(bar, event, 'failed', event.seq);
        this.open.clear();
        this.mark(event, 'error', `run failed: ${failureText(event.payload.error)}`, this.failedLane);
        break;
      case 'stage.failed':
        this.mark(event, 'error', `stage failed: ${event.payload.error.message}`, this.failedLane);
        break;
      case 'action.failed': {
        const { action, error } = event.payload;
        this.failedLane = this.stageActions.get(action) ?? this.laneFor(event.stepPath);
        this.mark(event, 'error', `action ${action} failed: ${error.message}`, this.failedLane);
        break;
      }
      default:
        break;
    }
  }

  finalize(): void {
    for (const stack of this.open.values()) {
      for (const { bar } of stack) {
        bar.endSeq = this.lastSeq;
        bar.endAt = this.endAt;
      }
    }
  }

  data(): TimelineModel {
    return {
      runId: this.runId,
      startAt: this.startAt,
      endAt: this.endAt,
      lastSeq: this.lastSeq,
      lanes: this.lanes.map((lane) => ({ ...lane })),
      bars: this.bars.map((bar) => ({ ...bar })),
      markers: this.markers.slice(),
    };
  }

  private ensureLane(action: string): string {
    const id = `${this.stage}:${action}`;
    if (!this.laneIds.has(id)) {
      this.laneIds.add(id);
      this.lanes.push({ id, label: `${action} · stage ${this.stage + 1}`, stage: this.stage });
    }
    this.stageActions.set(action, id);
    return id;
  }

  private laneFor(stepPath: string): string | null {
    if (stepPath === '') return null;
    const action = ownerAction(stepPath, this.stageActions.keys(), null);
    return action !== null ? (this.stageActions.get(action) ?? null) : this.lastLane;
  }

  /** Steps seen before any action started (a log written by an older executor) share one lane. */
  private unassignedLane(): string {
    const id = `${this.stage}:?`;
    if (!this.laneIds.has(id)) {
      this.laneIds.add(id);
      this.lanes.push({ id, label: `(no action) · stage ${this.stage + 1}`, stage: this.stage });
    }
    return id;
  }

  private closeOpen(event: StoredEvent, status: 'completed' | 'failed'): void {
    const stack = this.open.get(event.stepPath);
    const top = stack?.pop();
    if (top === undefined) return;
    if (stack !== undefined && stack.length === 0) this.open.delete(event.stepPath);
    this.close(top.bar, event, status, event.seq);
  }

  private close(bar: TimelineBar, event: StoredEvent, status: 'completed' | 'failed', endSeq: number): void {
    bar.status = status;
    bar.endSeq = Math.max(bar.startSeq, endSeq);
    bar.endAt = Math.max(bar.startAt, event.recordedAt);
  }

  private mark(event: StoredEvent, kind: MarkerKind, label: string, laneId = this.laneFor(event.stepPath)): void {
    this.markers.push({ laneId, seq: event.seq, at: event.recordedAt, kind, label });
  }
}
