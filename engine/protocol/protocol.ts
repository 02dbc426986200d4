/**
 * The studio protocol: the one contract between the engine and the renderer.
 *
 * `Requests` maps a dotted channel name to its request and response types; `Pushes` maps the
 * channels the engine pushes to the renderer. The desktop app carries these over Electron IPC,
 * the browser build over HTTP (requests) and a WebSocket (pushes) on 127.0.0.1 — same messages.
 * The renderer imports types from this folder only. Errors cross as plain `ProtocolError`.
 * A snapshot test of the channel lists makes every change to this contract visible in review.
 */
import type { StoredEvent } from '../log/events.js';
import type { EventFilter, EventSearchPage } from '../inspect/event-search.js';

/** The event vocabulary crosses the protocol as data: the renderer imports it from here only. */
export type { StoredEvent, EventType, EventPayloads, ErrorInfo } from '../log/events.js';
export type { EventFilter, EventSearchPage } from '../inspect/event-search.js';

export type RunStatus = 'running' | 'suspended' | 'completed' | 'failed';

export interface ProtocolError {
  code: string;
  message: string;
  retryable: boolean;
}

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
}

/** Where a failure began (its `step.failed` event) and what it said. */
export interface RunFailure {
  seq: number;
  stepPath: string;
  code: string;
  message: string;
}

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

export type TimelineAxis = 'seq' | 'time';

/**
 * A slice of a run's timeline: what `run.timelineWindow` asks for. Positions are in axis units:
 * seq, or milliseconds since the run's first event. Without `from`/`to` the window is the whole
 * run. With `px` (how many pixels the window is drawn on) bars and markers that would share
 * pixels come merged, so the answer is about as long as the window is wide whatever the run's size.
 */
export interface TimelineWindowRequest {
  runId: string;
  /** Default 'seq'. */
  axis?: TimelineAxis;
  from?: number;
  to?: number;
  /** Integer 1..100000; absent: every bar and marker in the window, none merged. */
  px?: number;
}

/** A lane with what a view needs to size it before any of its bars arrive. */
export interface TimelineLaneInfo extends TimelineLane {
  /** Deepest nesting of bars in the whole lane (0: no bar encloses another). */
  maxDepth: number;
  bars: number;
  markers: number;
}

export interface TimelineWindowBar extends TimelineBar {
  /** Nesting depth in its lane, over the whole run (a `for` bar encloses its body's bars). */
  depth: number;
  /**
   * How many bars this entry stands for. 1: this bar exactly. More: neighbours at the same depth
   * that share pixels at the requested `px`; the entry is the first of them, its end stretched to
   * the last one's and its status 'failed' if any of them failed.
   */
  merged: number;
}

export interface TimelineWindowMarker extends TimelineMarker {
  /** Markers of the same kind and lane within 6 px merged into this one (1: itself alone). */
  merged: number;
}

export interface TimelineWindow {
  runId: string;
  startAt: number;
  endAt: number;
  lastSeq: number;
  /** Every lane of the run, in order, whether or not it has bars in the window. */
  lanes: TimelineLaneInfo[];
  /** Totals over the whole run. */
  barCount: number;
  markerCount: number;
  /** Markers of the whole run that belong to no lane (crash, resume, …): they get a row of their own. */
  runMarkerCount: number;
  axis: TimelineAxis;
  /** The window answered, in axis units (the request's, or the run's extent when absent). */
  from: number;
  to: number;
  px: number | null;
  /** Bars with start <= to and end >= from, by lane (in `lanes` order) then start. */
  bars: TimelineWindowBar[];
  /** Markers with from <= position <= to, by lane (run-level ones, laneId null, last) then seq. */
  markers: TimelineWindowMarker[];
}

export interface StoreSnapshot {
  name: string;
  kind: string;
  records: { key: string; record: unknown }[];
}

export interface PendingWait {
  kind: 'timer' | 'pause' | 'webhook';
  id: string;
  since: number;
  dueAt: number | null;
  path: string | null;
}

/** The folded state of a run just after the event at `seq`. */
export interface RunState {
  runId: string;
  seq: number;
  event: StoredEvent | null;
  stores: StoreSnapshot[];
  variables: Record<string, unknown>;
  response: unknown;
  checkpoints: { key: string; syncedAt: number }[];
  pending: PendingWait[];
  /** The step being executed at `seq`, to highlight in the mission source. */
  currentStep: { stepPath: string; line: number; file: string } | null;
  /** The big arrays the studio was sent a window of (inspect/state-slice.ts); absent from a whole state. */
  slices?: ValueSlice[];
}

/** Which window of a big array to send: `where` is 'response', 'variables', 'event' or 'store:NAME'. */
export interface ValueWindow {
  where: string;
  /** `$` (the value itself), `$.items`, `$[3].lines`. */
  path: string;
  from: number;
}

/** An array sent as items `from`..`from + count - 1` of `total`. */
export interface ValueSlice extends ValueWindow {
  count: number;
  total: number;
}

export interface StateDiffEntry {
  path: string;
  before: unknown;
  after: unknown;
  change: 'added' | 'removed' | 'changed';
}

export interface VerifyEntry {
  seq: number;
  stepPath: string;
  type: string;
  effectId: string | null;
}

export interface VerifyReport {
  runId: string;
  ok: boolean;
  original: VerifyEntry[];
  replayed: VerifyEntry[];
  divergence: null | {
    index: number;
    seq: number;
    stepPath: string;
    recorded: string;
    asked: string;
    explanation: string;
    /** 'edit' when replayed against an edited mission; else the run's own mission diverged. */
    cause: 'edit' | 'nondeterminism';
    /** The mission line of the step that diverged, when known. */
    line?: number;
    /** What changed, as the user would have edited it ("POST /events became POST /audit"). */
    change?: string;
  };
  /** What this verify could not check (said, never passed over): e.g. an older log format's limits. */
  unchecked: string[];
}

export interface MissionSource {
  entry: string;
  files: { path: string; text: string }[];
  /** The `--source NAME=URL` overrides the run was started with (remembered on the run). */
  sources: Record<string, string>;
  /** Each source's base URL as the mission declares it (absent: the mission gives none). */
  declaredSources: Record<string, string | null>;
}

export type CrashPointName = 'before-effect' | 'after-effect' | 'mid-store' | 'after-checkpoint' | 'before-wait';

export interface CrashPointInfo {
  point: CrashPointName;
  /** How many times a crash-free run of this mission reaches it (from the reference run). */
  occurrences: number;
}

export interface StartRunRequest {
  missionPath?: string;
  missionText?: string;
  sources?: Record<string, string>;
  env?: Record<string, string>;
  crashAt?: string;
}

export interface CrashLabStartRequest extends StartRunRequest {
  /** `POINT[:N]`, e.g. 'after-effect:2'. */
  crashAt: string;
  /**
   * A run whose remembered `--source`/`--env` the lab's runs inherit (the request's own win). The
   * lab always makes its own crash-free reference run, through its answer proxy.
   */
  referenceRunId?: string;
}

export interface CrashLabChaosRequest extends StartRunRequest {
  /** Upper bound on processes started (the first run plus resumes); default 8. */
  maxCrashes?: number;
  referenceRunId?: string;
}

export type CrashLabPhase = 'reference' | 'armed' | 'resuming' | 'verifying' | 'done' | 'failed';

/** One process the lab started, in order. */
export interface CrashLabProcess {
  pid: number;
  command: 'run' | 'resume';
  crashAt: string | null;
  signal: string | null;
  code: number | null;
  /** Seq of the last event the log held when this process exited. */
  lastSeq: number;
}

export interface CrashLabEffectCount {
  idempotencyKey: string;
  /** Requests the lab's proxy saw with this key (retries after a crash included). */
  requests: number;
  /** Writes of the reference run this key was matched to: 1 is exactly-once, 0 a write the reference never made. */
  effects: number;
}

/** One thing the verdict checked: `ok` null means it could not be checked (said, never passed). */
export interface CrashLabCheck {
  name: 'completed' | 'stores' | 'writes' | 'requests' | 'replay' | 'elsewhere';
  ok: boolean | null;
  label: string;
}

export interface CrashLabVerdict {
  /** Tested (a crash happened) and no check failed. */
  ok: boolean;
  /** False when no crash happened: nothing was shown to survive. */
  tested: boolean;
  /** What was compared, in order. */
  checks: CrashLabCheck[];
  /** Final stores of the crashed run equal those of the reference run (after normalising run-specific ids). */
  storesEqual: boolean;
  storeDiff: StateDiffEntry[];
  /** Per Idempotency-Key the crashed run sent, counted at the lab's proxy. */
  effects: CrashLabEffectCount[];
  duplicateEffects: number;
  crashes: number;
  finalStatus: RunStatus;
  explanation: string;
}

export interface CrashLabStatus {
  labId: string;
  mode: 'single' | 'chaos';
  phase: CrashLabPhase;
  runId: string | null;
  referenceRunId: string | null;
  crashAt: string | null;
  /** The crash points armed, in order, one per process (chaos: picked from the reference run's passes). */
  picks: string[];
  processes: CrashLabProcess[];
  verdict: CrashLabVerdict | null;
  error: string | null;
}

export interface StudioInfo {
  dbPath: string;
  cwd: string;
  /** Base URL of the demo API when the studio was started with `--demo`. */
  demoApiUrl: string | null;
  demoMissionPath: string | null;
  /** Whether `run.verify` is answered (the executor's verifier is present). */
  verifyAvailable: boolean;
}

export interface Requests {
  'runs.list': { req: { limit?: number }; res: RunSummary[] };
  'run.get': { req: { runId: string }; res: RunSummary };
  'run.events': { req: { runId: string; fromSeq?: number; limit?: number }; res: StoredEvent[] };
  /** The events matching a filter (type, step, text), paged by match index; `locateSeq` finds a seq among them. */
  'run.eventSearch': { req: { runId: string; filter: EventFilter; fromIndex?: number; limit?: number; locateSeq?: number }; res: EventSearchPage };
  'run.timeline': { req: { runId: string }; res: TimelineModel };
  /** The lanes, extent and totals of a run's timeline, with only the bars and markers of one window. */
  'run.timelineWindow': { req: TimelineWindowRequest; res: TimelineWindow };
  /** Big arrays come as windows (`slices`); `windows` asks for others than the first. */
  'run.stateAt': { req: { runId: string; seq: number; windows?: ValueWindow[] }; res: RunState };
  'run.stateDiff': { req: { runId: string; fromSeq: number; toSeq: number }; res: StateDiffEntry[] };
  'run.source': { req: { runId: string }; res: MissionSource };
  'run.verify': { req: { runId: string; missionText?: string }; res: VerifyReport };
  'run.start': { req: StartRunRequest; res: { runId: string } };
  'run.resume': { req: { runId: string; payload?: unknown }; res: { runId: string; outcome: string } };
  /** A new run from this run's log up to `atSeq`, replayed, then live (`reqon fork`); `missionText`: carry on with an edit. */
  'run.fork': { req: { runId: string; atSeq: number; missionText?: string }; res: { runId: string } };
  /** The run as a bundle (`reqon export`): the file's name and its text. */
  'run.export': { req: { runId: string }; res: { fileName: string; text: string } };
  /** A bundle's text into the log, read-only (`reqon import`). */
  'run.import': { req: { text: string }; res: { runId: string } };
  /** `note`: said when there was nothing of this studio's to kill, or the worker was killed. */
  'run.crash': { req: { runId: string; crashAt?: string }; res: { runId: string; note?: string } };
  'crash.points': { req: { runId: string }; res: CrashPointInfo[] };
  /** Arms a crash point on a fresh run of a mission, lets it die by SIGKILL, then resumes it. */
  'crashlab.start': { req: CrashLabStartRequest; res: CrashLabStatus };
  /** Repeated random crashes: each process is armed with `random` until the run finishes. */
  'crashlab.chaos': { req: CrashLabChaosRequest; res: CrashLabStatus };
  /** Where a lab is; once `phase` is 'done', the verdict against a crash-free reference run. */
  'crashlab.verdict': { req: { labId: string }; res: CrashLabStatus };
  /** Adds a run to the live poll (pushes 'run.appended' as its log grows). */
  'run.watch': { req: { runId: string }; res: { runId: string; lastSeq: number } };
  /** What the studio process knows about itself: demo API, database, CLI. */
  'studio.info': { req: Record<string, never>; res: StudioInfo };
}

export interface Pushes {
  /**
   * A run's log grew: events fromSeq..lastSeq are new, each range pushed once, after the studio
   * first saw the run (in a list poll, or as the lastSeq of a `run.watch` answer). The views read
   * the events they show by request (`run.events`, the folds), so the push carries only the seqs.
   */
  'run.appended': { runId: string; fromSeq: number; lastSeq: number };
  'runs.changed': RunSummary;
  'process.exited': { runId: string; pid: number; signal: string | null; code: number | null };
  'crashlab.changed': CrashLabStatus;
}

export type RequestChannel = keyof Requests;
export type PushChannel = keyof Pushes;
