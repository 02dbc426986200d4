/**
 * State-at-seq fold: what a run held just after one of its events.
 *
 * - stores: every `store.write` folded through MemoryStoreState (each event carries the record as
 *   stored, so sql, nosql, file and memory stores all fold the same way);
 * - variables and response per action frame: `step.completed.bind` binds a variable,
 *   `fetch.completed.value` and `step.completed.response` replace the response (a paginated
 *   fetch records no value: its response is the items of its successful pages, each page's
 *   first array-valued field, as the language defines pagination), and
 *   `action.started` starts the frame afresh (variables never cross actions);
 * - checkpoints (monotonic per key), pending pauses and webhook waits;
 * - the step being executed: the last `step.started` not yet completed, with its line and file.
 * Invariant: the fold is a pure function of the events handled; `snapshot()` returns an
 * independent copy that `restore()` brings back, which is what the fold cache relies on.
 */
import type { StoredEvent } from '../log/events.js';
import type { PendingWait, RunState, StoreSnapshot } from '../protocol/protocol.js';
import { MemoryStoreState } from '../stores/memory-fold.js';
import { assertInOrder, type FoldHandler } from './fold-handler.js';
import { ownerAction } from './step-owner.js';

export interface StateAtOptions {
  /** Declared stores and their kinds (`orders` → 'sql'); declared stores show even when empty. */
  storeKinds?: Record<string, string>;
  /** Which file declares each action (folder missions); defaults to `entryFile`. */
  actionFiles?: Record<string, string>;
  entryFile?: string;
}

interface Frame {
  variables: Record<string, unknown>;
  response: unknown;
}

interface OpenStep {
  stepPath: string;
  line: number;
  action: string | null;
}

/** Everything the fold holds; cloned whole for snapshots. */
export interface StateAtSnapshot {
  readonly runId: string;
  readonly lastSeq: number;
  readonly lastEvent: StoredEvent | null;
  readonly stores: MemoryStoreState;
  readonly frames: ReadonlyMap<string, Frame>;
  readonly actions: readonly string[];
  readonly lastAction: string | null;
  readonly checkpoints: ReadonlyMap<string, number>;
  readonly pending: ReadonlyMap<string, PendingWait>;
  readonly openSteps: readonly OpenStep[];
  readonly pages: ReadonlyMap<string, readonly unknown[]>;
}

const NO_ACTION = '';

export class StateAtHandler implements FoldHandler<RunState> {
  private runId = '';
  private lastSeq = 0;
  private lastEvent: StoredEvent | null = null;
  private stores = new MemoryStoreState();
  private frames = new Map<string, Frame>();
  private actions: string[] = [];
  private lastAction: string | null = null;
  private checkpoints = new Map<string, number>();
  private pending = new Map<string, PendingWait>();
  private openSteps: OpenStep[] = [];
  /** Bodies of the successful pages of fetches not yet completed, by effect id. */
  private pages = new Map<string, unknown[]>();

  constructor(
    private readonly options: StateAtOptions = {},
    private readonly fallbackRunId = '',
  ) {
    this.reset();
  }

  reset(): void {
    this.runId = this.fallbackRunId;
    this.lastSeq = 0;
    this.lastEvent = null;
    this.stores = new MemoryStoreState();
    this.frames = new Map();
    this.actions = [];
    this.lastAction = null;
    this.checkpoints = new Map();
    this.pending = new Map();
    this.openSteps = [];
    this.pages = new Map();
  }

  get seq(): number {
    return this.lastSeq;
  }

  handleEvent(event: StoredEvent): void {
    assertInOrder(this.lastSeq, event, 'state-at');
    this.runId = event.runId;
    this.lastSeq = event.seq;
    this.lastEvent = event;

    switch (event.type) {
      case 'action.started': {
        const { action } = event.payload;
        if (!this.actions.includes(action)) this.actions.push(action);
        this.lastAction = action;
        this.frames.set(action, { variables: {}, response: undefined });
        break;
      }
      case 'step.started': {
        const { line } = event.payload;
        // A start for a path still open means the process died inside it and a resume re-ran it.
        this.openSteps = this.openSteps.filter((step) => step.stepPath !== event.stepPath);
        this.openSteps.push({ stepPath: event.stepPath, line, action: this.actionOf(event.stepPath) });
        break;
      }
      case 'step.completed': {
        const { bind } = event.payload;
        const frame = this.frameFor(event.stepPath);
        if (bind !== undefined) frame.variables = { ...frame.variables, [bind.name]: bind.value };
        if ('response' in event.payload) frame.response = event.payload.response;
        this.closeStep(event.stepPath);
        break;
      }
      case 'step.failed':
        this.closeStep(event.stepPath);
        break;
      case 'http.response': {
        const { effectId, verdict, response } = event.payload;
        if (verdict === 'success' || verdict === 'allowed') this.pages.set(effectId, [...(this.pages.get(effectId) ?? []), response.body]);
        break;
      }
      case 'fetch.completed': {
        const payload = event.payload;
        const pages = this.pages.get(payload.effectId) ?? [];
        this.pages.delete(payload.effectId);
        this.frameFor(event.stepPath).response = 'value' in payload ? payload.value : pageItems(pages);
        break;
      }
      case 'store.write':
        this.stores.apply(event);
        break;
      case 'checkpoint.advanced': {
        const { key, syncedAt } = event.payload;
        this.checkpoints.set(key, Math.max(syncedAt, this.checkpoints.get(key) ?? Number.NEGATIVE_INFINITY));
        break;
      }
      case 'pause.created': {
        const { pauseId, dueAt, webhookPath } = event.payload;
        this.pending.set(`pause:${pauseId}`, {
          kind: webhookPath === undefined && dueAt !== undefined ? 'timer' : 'pause',
          id: pauseId,
          since: event.recordedAt,
          dueAt: dueAt ?? null,
          path: webhookPath ?? null,
        });
        break;
      }
      case 'pause.resumed':
        this.pending.delete(`pause:${event.payload.pauseId}`);
        break;
      case 'wait.registered': {
        const { waitId, path, expiresAt } = event.payload;
        this.pending.set(`wait:${waitId}`, { kind: 'webhook', id: waitId, since: event.recordedAt, dueAt: expiresAt, path });
        break;
      }
      case 'wait.completed':
        this.pending.delete(`wait:${event.payload.waitId}`);
        break;
      case 'run.completed':
      case 'run.failed':
        this.pending.clear();
        this.openSteps = [];
        break;
      default:
        break;
    }
  }

  finalize(): void {
    // State is current after every event; nothing to close.
  }

  data(): RunState {
    const current = this.openSteps.at(-1) ?? null;
    const frameAction = current?.action ?? this.lastAction;
    const frame = this.frames.get(frameAction ?? NO_ACTION);
    return {
      runId: this.runId,
      seq: this.lastSeq,
      event: this.lastEvent,
      stores: this.storeSnapshots(),
      variables: { ...(frame?.variables ?? {}) },
      response: frame?.response ?? null,
      checkpoints: [...this.checkpoints.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, syncedAt]) => ({ key, syncedAt })),
      pending: [...this.pending.values()],
      currentStep:
        current === null
          ? null
          : { stepPath: current.stepPath, line: current.line, file: this.fileOf(current.action) },
    };
  }

  snapshot(): StateAtSnapshot {
    return {
      runId: this.runId,
      lastSeq: this.lastSeq,
      lastEvent: this.lastEvent,
      stores: this.stores.clone(),
      frames: new Map([...this.frames].map(([action, frame]) => [action, { ...frame }])),
      actions: this.actions.slice(),
      lastAction: this.lastAction,
      checkpoints: new Map(this.checkpoints),
      pending: new Map(this.pending),
      openSteps: this.openSteps.slice(),
      pages: new Map(this.pages),
    };
  }

  restore(snapshot: StateAtSnapshot): void {
    this.runId = snapshot.runId;
    this.lastSeq = snapshot.lastSeq;
    this.lastEvent = snapshot.lastEvent;
    this.stores = snapshot.stores.clone();
    this.frames = new Map([...snapshot.frames].map(([action, frame]) => [action, { ...frame }]));
    this.actions = snapshot.actions.slice();
    this.lastAction = snapshot.lastAction;
    this.checkpoints = new Map(snapshot.checkpoints);
    this.pending = new Map(snapshot.pending);
    this.openSteps = snapshot.openSteps.slice();
    this.pages = new Map([...snapshot.pages].map(([id, bodies]) => [id, bodies.slice()]));
  }

  private actionOf(stepPath: string): string | null {
    return ownerAction(stepPath, this.actions, this.lastAction);
  }

  private frameFor(stepPath: string): Frame {
    const action = this.actionOf(stepPath) ?? NO_ACTION;
    let frame = this.frames.get(action);
    if (frame === undefined) {
      frame = { variables: {}, response: undefined };
      this.frames.set(action, frame);
    }
    return frame;
  }

  private closeStep(stepPath: string): void {
    for (let i = this.openSteps.length - 1; i >= 0; i -= 1) {
      if (this.openSteps[i]!.stepPath === stepPath) {
        this.openSteps.splice(i, 1);
        return;
      }
    }
  }

  private fileOf(action: string | null): string {
    const entry = this.options.entryFile ?? '';
    if (action === null) return entry;
    return this.options.actionFiles?.[action] ?? entry;
  }

  private storeSnapshots(): StoreSnapshot[] {
    const kinds = this.options.storeKinds ?? {};
    const names = new Set([...Object.keys(kinds), ...this.stores.storeNames()]);
    return [...names]
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map((name) => ({ name, kind: kinds[name] ?? 'unknown', records: this.stores.list(name) }));
  }
}

/** A paginated fetch's response: the concatenated items of its pages (each page's first array field). */
function pageItems(pages: readonly unknown[]): unknown[] {
  const items: unknown[] = [];
  for (const body of pages) {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) continue;
    const list = Object.values(body).find(Array.isArray);
    if (list !== undefined) items.push(...(list as unknown[]));
  }
  return items;
}
