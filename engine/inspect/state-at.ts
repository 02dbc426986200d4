/**
 * State-at-seq fold: what a run held just after one of its events.
 *
 * - stores: every `store.write` recorded in a StoreHistory (each event carries the record as
 *   stored, so sql, nosql, file and memory stores all fold the same way), which a fold shares
 *   with its snapshots instead of copying the records (store-history.ts);
 * - variables and response per action frame: `step.completed.bind` binds a variable,
 *   `fetch.completed` and `step.completed.response` replace the response (a single answer's
 *   `value`, or with `valueInAnswer` its successful `http.response` body; a paginated fetch
 *   records no value: its response is the items of its successful pages, each page's first
 *   array-valued field, as the language defines pagination), and
 *   `action.started` starts the frame afresh (variables never cross actions);
 * - loop variables (`for order in orders`): while a `for` step is open, its variable is the item of
 *   the iteration being run (the one holding the current step, else the last `loop.iteration`),
 *   taken from the loop's collection as the log holds it — the store read the loop recorded, the
 *   response or a variable of the frame (the mission outline says which, by the loop's line);
 * - checkpoints (monotonic per key), pending pauses and webhook waits;
 * - the step being executed: the last `step.started` not yet completed, with its line and file;
 * - at a `step.failed`, the failure: its message, and the last request of the step (or of the
 *   inner step the failure travelled up from) with the answer it got.
 * Invariant: the fold is a pure function of the events handled; `snapshot()` returns a copy that
 * `restore()` brings back — independent but for the store history, which only grows and is read
 * at the fold's own seq — which is what the fold cache relies on.
 */
import type { StoredEvent } from '../log/events.js';
import type { PendingWait, RunState, StepFailure, StoreSnapshot } from './state-at-data.js';
import { StoreHistory } from './store-history.js';
import { assertInOrder, type FoldHandler } from './fold-handler.js';
import { ownerAction } from './step-owner.js';
import { loopKey, type LoopOutline } from './mission-outline.js';

export interface StateAtOptions {
  /** Declared stores and their kinds (`orders` → 'sql'); declared stores show even when empty. */
  storeKinds?: Record<string, string>;
  /** Which file declares each action (folder missions); defaults to `entryFile`. */
  actionFiles?: Record<string, string>;
  entryFile?: string;
  /** Each `for`'s variable and collection by `file:line` (mission-outline.ts). */
  loops?: Record<string, LoopOutline>;
}

/** An open `for` step: what its variable holds in the iteration being run. */
interface OpenLoop {
  readonly forPath: string;
  readonly action: string | null;
  readonly variable: string;
  readonly outline: LoopOutline;
  /** The collection, once the first iteration resolved it; null when the log cannot tell it. */
  readonly items: readonly unknown[] | null;
  readonly index: number;
  readonly key: string;
}

interface Frame {
  variables: Record<string, unknown>;
  response: unknown;
  /**
   * What each iteration of an open concurrent loop bound (`A/1[3]` → its variables and response):
   * iterations that run at once each bind their own (a `let` there never sets the outer), so one
   * frame for all showed one iteration's loop variable beside another's `let` and response.
   */
  iterations?: Map<string, { variables: Record<string, unknown>; response: unknown }>;
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
  /** Shared with the fold it was taken of, not copied: read at `lastSeq`. */
  readonly stores: StoreHistory;
  readonly frames: ReadonlyMap<string, Frame>;
  readonly actions: readonly string[];
  readonly lastAction: string | null;
  readonly checkpoints: ReadonlyMap<string, number>;
  readonly pending: ReadonlyMap<string, PendingWait>;
  readonly openSteps: readonly OpenStep[];
  readonly closedStep: OpenStep | null;
  readonly pages: ReadonlyMap<string, readonly unknown[]>;
  readonly loops: ReadonlyMap<string, OpenLoop>;
  readonly storeReads: ReadonlyMap<string, unknown>;
  readonly attempt: Attempt | null;
  readonly lastFailure: StepFailure | null;
}

/** The latest HTTP attempt of the run: its step, request and answer (each recorded object, not copied). */
interface Attempt {
  readonly stepPath: string;
  readonly request: StepFailure['request'];
  readonly answer: StepFailure['answer'];
}

const NO_ACTION = '';

export class StateAtHandler implements FoldHandler<RunState> {
  private runId = '';
  private lastSeq = 0;
  private lastEvent: StoredEvent | null = null;
  private stores = new StoreHistory();
  private frames = new Map<string, Frame>();
  private actions: string[] = [];
  private lastAction: string | null = null;
  private checkpoints = new Map<string, number>();
  private pending = new Map<string, PendingWait>();
  private openSteps: OpenStep[] = [];
  /** The step the last event closed (its step.completed or step.failed), while that event is the last. */
  private closedStep: OpenStep | null = null;
  /**
   * Bodies of the successful answers of fetches not yet completed, by the fetch's step path: each
   * page has an effect id of its own, and a fork's live fetch.completed names the fork's effect
   * id while its copied answers keep the parent's — by effect id, the fold saw page 1 only of a
   * paginated fetch, and no answer at all in a fork.
   */
  private pages = new Map<string, unknown[]>();
  /** Open `for` steps by path. */
  private loops = new Map<string, OpenLoop>();
  /** Store contents a step recorded (`value.recorded`, source 'store-read') by step path, while it is open. */
  private storeReads = new Map<string, unknown>();
  private attempt: Attempt | null = null;
  /** The last `step.failed` folded; `data()` shows it only while it is the last event. */
  private lastFailure: StepFailure | null = null;

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
    this.stores = new StoreHistory();
    this.frames = new Map();
    this.actions = [];
    this.lastAction = null;
    this.checkpoints = new Map();
    this.pending = new Map();
    this.openSteps = [];
    this.closedStep = null;
    this.pages = new Map();
    this.loops = new Map();
    this.storeReads = new Map();
    this.attempt = null;
    this.lastFailure = null;
  }

  get seq(): number {
    return this.lastSeq;
  }

  handleEvent(event: StoredEvent): void {
    assertInOrder(this.lastSeq, event, 'state-at');
    this.runId = event.runId;
    this.lastSeq = event.seq;
    this.lastEvent = event;
    this.closedStep = null;

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
        const action = this.actionOf(event.stepPath);
        this.openSteps.push({ stepPath: event.stepPath, line, action });
        const outline = event.payload.stepType === 'For' ? this.options.loops?.[loopKey(this.fileOf(action), line)] : undefined;
        // A loop started again by a resume keeps the collection its first iteration resolved.
        if (outline !== undefined && !this.loops.has(event.stepPath)) {
          this.loops.set(event.stepPath, { forPath: event.stepPath, action, variable: outline.variable, outline, items: null, index: -1, key: '' });
        }
        break;
      }
      case 'loop.iteration': {
        const open = event.stepPath.lastIndexOf('[');
        const loop = open > 0 ? this.loops.get(event.stepPath.slice(0, open)) : undefined;
        if (loop === undefined) break;
        const items = loop.index === -1 ? this.loopItems(loop) : loop.items;
        this.loops.set(loop.forPath, { ...loop, items, index: event.payload.index, key: event.payload.key });
        break;
      }
      case 'value.recorded':
        if (event.payload.source === 'store-read') this.storeReads.set(event.stepPath, event.payload.value);
        break;
      case 'step.completed': {
        const { bind } = event.payload;
        const scope = this.scopeFor(event.stepPath);
        if (bind !== undefined) scope.variables = { ...scope.variables, [bind.name]: bind.value };
        if ('response' in event.payload) scope.response = event.payload.response;
        this.closeStep(event.stepPath);
        break;
      }
      case 'step.failed': {
        const { stepType, error } = event.payload;
        // A failure travels up: each enclosing step logs its own step.failed right after the inner one's.
        const inner = this.lastFailure !== null && within(this.lastFailure.stepPath, event.stepPath) ? this.lastFailure : null;
        const own = this.attempt !== null && within(this.attempt.stepPath, event.stepPath) ? this.attempt : null;
        const cause = inner ?? own;
        this.lastFailure = { stepPath: event.stepPath, stepType, code: error.code, message: error.message, request: cause?.request ?? null, answer: cause?.answer ?? null };
        this.closeStep(event.stepPath);
        break;
      }
      case 'http.request': {
        const { method, url, body } = event.payload.request;
        this.attempt = { stepPath: event.stepPath, request: { method, url, ...(body !== undefined ? { body } : {}) }, answer: null };
        break;
      }
      case 'http.error':
        // A circuit breaker's refusal sent nothing: no request of the step is the failure's.
        if (event.payload.error.code === 'circuit-open') this.attempt = null;
        else if (this.attempt?.stepPath === event.stepPath) this.attempt = { ...this.attempt, answer: { error: event.payload.error } };
        break;
      case 'http.response': {
        const { verdict, response } = event.payload;
        if (this.attempt?.stepPath === event.stepPath) this.attempt = { ...this.attempt, answer: { status: response.status, body: response.body } };
        if (verdict === 'success' || verdict === 'allowed') this.pages.set(event.stepPath, [...(this.pages.get(event.stepPath) ?? []), response.body]);
        break;
      }
      case 'fetch.completed': {
        const payload = event.payload;
        const pages = this.pages.get(event.stepPath) ?? [];
        this.pages.delete(event.stepPath);
        this.scopeFor(event.stepPath).response = 'value' in payload ? payload.value : payload.valueInAnswer ? (pages.at(-1) ?? null) : pageItems(pages);
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
        this.loops.clear();
        this.storeReads.clear();
        break;
      default:
        break;
    }
  }

  finalize(): void {
    // State is current after every event; nothing to close.
  }

  /**
   * The step the state is shown at: the one the event at this seq is about — the step it closed,
   * or the deepest open step holding its path — else the step started last. In a concurrent loop
   * the step started last is often another iteration's: the state showed that iteration's
   * variables and answer at the step.completed of this one, without the binding it had just made.
   */
  private focusStep(): OpenStep | null {
    const path = this.lastEvent?.stepPath ?? '';
    if (path !== '') {
      if (this.closedStep !== null && this.closedStep.stepPath === path) return this.closedStep;
      let holding: OpenStep | undefined;
      for (const step of this.openSteps) {
        const holds = path === step.stepPath || path.startsWith(`${step.stepPath}/`) || path.startsWith(`${step.stepPath}[`);
        if (holds && (holding === undefined || step.stepPath.length > holding.stepPath.length)) holding = step;
      }
      if (holding !== undefined) return holding;
    }
    return this.openSteps.at(-1) ?? null;
  }

  data(): RunState {
    const current = this.focusStep();
    const frameAction = current?.action ?? this.lastAction;
    const frame = this.frames.get(frameAction ?? NO_ACTION);
    // Where the state is read: the event's own path where it lies inside the step (an
    // iteration's `loop.iteration` under its loop), else the step's.
    const eventPath = this.lastEvent?.stepPath ?? '';
    const at = current === null ? null : eventPath.startsWith(current.stepPath) ? eventPath : current.stepPath;
    // The current step's own iterations of open concurrent loops, outermost first.
    const scopes = at === null || frame?.iterations === undefined ? [] : this.iterationsHolding(at).flatMap((key) => frame.iterations!.get(key) ?? []);
    const inner = scopes.findLast((scope) => scope.response !== undefined);
    return {
      runId: this.runId,
      seq: this.lastSeq,
      event: this.lastEvent,
      stores: this.storeSnapshots(),
      variables: Object.assign({}, frame?.variables, ...scopes.map((scope) => scope.variables), this.loopVariables(frameAction, at)),
      response: (inner !== undefined ? inner.response : frame?.response) ?? null,
      checkpoints: [...this.checkpoints.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, syncedAt]) => ({ key, syncedAt })),
      pending: [...this.pending.values()],
      currentStep:
        current === null
          ? null
          : { stepPath: current.stepPath, line: current.line, file: this.fileOf(current.action) },
      ...(this.lastEvent?.type === 'step.failed' && this.lastFailure !== null ? { failure: this.lastFailure } : {}),
    };
  }

  snapshot(): StateAtSnapshot {
    return {
      runId: this.runId,
      lastSeq: this.lastSeq,
      lastEvent: this.lastEvent,
      stores: this.stores,
      frames: new Map([...this.frames].map(([action, frame]) => [action, copyFrame(frame)])),
      actions: this.actions.slice(),
      lastAction: this.lastAction,
      checkpoints: new Map(this.checkpoints),
      pending: new Map(this.pending),
      openSteps: this.openSteps.slice(),
      closedStep: this.closedStep,
      pages: new Map(this.pages),
      loops: new Map(this.loops),
      storeReads: new Map(this.storeReads),
      attempt: this.attempt,
      lastFailure: this.lastFailure,
    };
  }

  restore(snapshot: StateAtSnapshot): void {
    this.runId = snapshot.runId;
    this.lastSeq = snapshot.lastSeq;
    this.lastEvent = snapshot.lastEvent;
    this.stores = snapshot.stores;
    this.frames = new Map([...snapshot.frames].map(([action, frame]) => [action, copyFrame(frame)]));
    this.actions = snapshot.actions.slice();
    this.lastAction = snapshot.lastAction;
    this.checkpoints = new Map(snapshot.checkpoints);
    this.pending = new Map(snapshot.pending);
    this.openSteps = snapshot.openSteps.slice();
    this.closedStep = snapshot.closedStep;
    this.pages = new Map([...snapshot.pages].map(([id, bodies]) => [id, bodies.slice()]));
    this.loops = new Map(snapshot.loops);
    this.storeReads = new Map(snapshot.storeReads);
    this.attempt = snapshot.attempt;
    this.lastFailure = snapshot.lastFailure;
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

  /**
   * Where a step's binding and response go: the frame of its action, or inside an open concurrent
   * loop the innermost iteration holding the step.
   */
  private scopeFor(stepPath: string): { variables: Record<string, unknown>; response: unknown } {
    const frame = this.frameFor(stepPath);
    const key = this.iterationsHolding(stepPath).at(-1);
    if (key === undefined) return frame;
    frame.iterations ??= new Map();
    let scope = frame.iterations.get(key);
    if (scope === undefined) frame.iterations.set(key, (scope = { variables: {}, response: undefined }));
    return scope;
  }

  /** The iterations (`A/1[3]`) of open concurrent loops that hold `stepPath`, outermost first. */
  private iterationsHolding(stepPath: string): string[] {
    const out: string[] = [];
    for (const loop of this.loops.values()) {
      if (loop.outline.concurrent !== true) continue;
      const index = iterationIndex(loop.forPath, stepPath);
      if (index !== null) out.push(`${loop.forPath}[${index}]`);
    }
    return out.sort((a, b) => a.length - b.length);
  }

  /**
   * A loop's collection as the log holds it when its first iteration starts: the store read the
   * loop recorded, a memory store's records, or a dotted name into the frame's response, its
   * variables or an enclosing loop's item. Null when the outline has no dotted collection.
   */
  private loopItems(loop: OpenLoop): readonly unknown[] | null {
    const parts = loop.outline.collection;
    if (parts === null) return null;
    const [head, ...rest] = parts as [string, ...string[]];
    let root: unknown;
    if (parts.length === 1 && this.storeReads.has(loop.forPath)) root = this.storeReads.get(loop.forPath);
    else if (parts.length === 1 && this.options.storeKinds?.[head] !== undefined) return null; // a memory store: resolved by key below
    else {
      const frame = this.frames.get(loop.action ?? NO_ACTION);
      const enclosing = this.loopVariables(loop.action, loop.forPath);
      if (head in enclosing) root = enclosing[head];
      else if (frame !== undefined && head in frame.variables) root = frame.variables[head];
      else if (head === 'response') root = frame?.response;
      else return null;
    }
    for (const part of rest) root = typeof root === 'object' && root !== null ? (root as Record<string, unknown>)[part] : undefined;
    return Array.isArray(root) ? root : null;
  }

  /** The variables of the loops open in `action`: each one's item in the iteration holding `stepPath`, else its last. */
  private loopVariables(action: string | null, stepPath: string | null): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const loop of this.loops.values()) {
      if (loop.action !== action || loop.index === -1) continue;
      const index = stepPath !== null ? iterationIndex(loop.forPath, stepPath) ?? loop.index : loop.index;
      out[loop.variable] = this.loopItem(loop, index);
    }
    return out;
  }

  private loopItem(loop: OpenLoop, index: number): unknown {
    if (loop.items !== null) return loop.items[index];
    const head = loop.outline.collection?.[0];
    if (loop.outline.collection?.length === 1 && head !== undefined && this.options.storeKinds?.[head] !== undefined) {
      // A memory store's records are not recorded by the loop; its key (the item's id) finds it.
      const key = index === loop.index ? loop.key : null;
      const found = key === null ? undefined : this.stores.listAt(head, this.lastSeq).find((r) => String((r.record as { id?: unknown }).id) === key || r.key === key);
      if (found !== undefined) return found.record;
    }
    // The collection is an expression the inspector does not evaluate: say which item it is.
    return { '(item)': index, ...(index === loop.index ? { '(key)': loop.key } : {}) };
  }

  private closeStep(stepPath: string): void {
    const loop = this.loops.get(stepPath);
    if (loop?.outline.concurrent === true) {
      // Its iterations' own bindings end with it: after the loop, the outer variables are as they were.
      const iterations = this.frames.get(loop.action ?? NO_ACTION)?.iterations;
      for (const key of [...(iterations?.keys() ?? [])]) if (key.startsWith(`${stepPath}[`)) iterations!.delete(key);
    }
    this.loops.delete(stepPath);
    this.storeReads.delete(stepPath);
    for (let i = this.openSteps.length - 1; i >= 0; i -= 1) {
      if (this.openSteps[i]!.stepPath === stepPath) {
        this.closedStep = this.openSteps.splice(i, 1)[0]!;
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
    const names = new Set([...Object.keys(kinds), ...this.stores.storeNamesAt(this.lastSeq)]);
    return [...names]
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map((name) => ({ name, kind: kinds[name] ?? 'unknown', records: this.stores.listAt(name, this.lastSeq) }));
  }
}

/** A frame to keep apart from the fold's (snapshots): its iterations' map copied, the values it holds shared (never mutated). */
function copyFrame(frame: Frame): Frame {
  return frame.iterations === undefined ? { ...frame } : { ...frame, iterations: new Map([...frame.iterations].map(([key, scope]) => [key, { ...scope }])) };
}

/** `path` is `parent` or a step inside it (`A/1[0]/0` is inside `A/1`). */
function within(path: string, parent: string): boolean {
  return path === parent || path.startsWith(`${parent}/`) || path.startsWith(`${parent}[`);
}

/** The iteration of the `for` at `forPath` that holds `stepPath` (`A/1[3]/0` → 3), or null. */
function iterationIndex(forPath: string, stepPath: string): number | null {
  if (!stepPath.startsWith(`${forPath}[`)) return null;
  const close = stepPath.indexOf(']', forPath.length + 1);
  const index = Number(stepPath.slice(forPath.length + 1, close));
  return close === -1 || !Number.isInteger(index) ? null : index;
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
