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
import type { CrashPointInfo, CrashPointName } from '../inspect/crash-points.js';
import type { RunSummary } from '../inspect/run-summary.js';
import type { RunState } from '../inspect/state-at-data.js';
import type { StateDiffEntry } from '../inspect/state-diff.js';
import type { ValueWindow } from '../inspect/state-slice.js';
import type { TimelineModel } from '../inspect/timeline.js';
import type { TimelineAxis, TimelineWindow } from '../inspect/timeline-window.js';
import type { VerifyReport } from '../executor/verify-report.js';
import type { RunStatus } from '../log/log.js';

/** The event vocabulary crosses the protocol as data: the renderer imports it from here only. */
export type { StoredEvent, EventType, EventPayloads, ErrorInfo } from '../log/events.js';
export type { RunStatus } from '../log/log.js';
// Each view model is owned by the fold that computes it (engine/inspect, the executor's verify);
// the protocol carries them and re-exports them, so the renderer still names one module.
export type { EventFilter, EventSearchPage } from '../inspect/event-search.js';
export type { CrashPointInfo, CrashPointName } from '../inspect/crash-points.js';
export type { RunFailure, RunSummary } from '../inspect/run-summary.js';
export type { PendingWait, RunState, StepFailure, StoreSnapshot } from '../inspect/state-at-data.js';
export type { StateDiffEntry } from '../inspect/state-diff.js';
export type { ValueSlice, ValueWindow } from '../inspect/state-slice.js';
export type { MarkerKind, TimelineBar, TimelineLane, TimelineMarker, TimelineModel } from '../inspect/timeline.js';
export type { TimelineAxis, TimelineLaneInfo, TimelineWindow, TimelineWindowBar, TimelineWindowMarker } from '../inspect/timeline-window.js';
export type { VerifyEntry, VerifyReport } from '../executor/verify-report.js';

export interface ProtocolError {
  code: string;
  message: string;
  retryable: boolean;
}

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

export interface MissionSource {
  entry: string;
  files: { path: string; text: string }[];
  /** The `--source NAME=URL` overrides the run was started with (remembered on the run). */
  sources: Record<string, string>;
  /** Each source's base URL as the mission declares it (absent: the mission gives none). */
  declaredSources: Record<string, string | null>;
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
  /** Its armed crash point fired (it said so as it died); a SIGKILL from elsewhere is no firing. */
  fired: boolean;
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
  name: 'completed' | 'stores' | 'writes' | 'requests' | 'replay' | 'elsewhere' | 'same-start' | 'picks';
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
  /** The run the lab was started from (its mission and sources), when it was: the studio's Crash lab tab of that run shows it. */
  startedFrom?: string;
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

/** The runs table's status filter: a run's status, with a completed run that went on after failures apart. */
export type RunsStatusFilter = RunStatus | 'completed-with-failures';

export interface RunsListRequest {
  /** Runs to skip, in the order asked for (default 0), and at most how many to answer (default 200, at most 1,000). */
  offset?: number;
  limit?: number;
  /** 'completed': completed without a failed step; 'completed-with-failures': completed after some. */
  status?: RunsStatusFilter;
  /** Only runs whose mission or run id contains this text, ignoring case. */
  text?: string;
  /** By start, oldest first (default: newest first). */
  oldestFirst?: boolean;
}

export interface RunsPage {
  runs: RunSummary[];
  /** How many runs the filters take in all (the table's height). */
  total: number;
}

export interface Requests {
  /** A page of the runs `req` filters (the engine filters and counts: a log may hold 100k runs), and how many there are. */
  'runs.list': { req: RunsListRequest; res: RunsPage };
  'run.get': { req: { runId: string }; res: RunSummary };
  /**
   * Events from `fromSeq`, at most `limit` (default 10,000) and about 64 MB of payloads (one larger
   * event comes alone): a page shorter than its limit is not the run's end; ask from its last seq + 1.
   */
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
  /** `missionText`: the entry file edited; `files`: any of the run's files edited, by recorded path (a folder mission's). */
  'run.verify': { req: { runId: string; missionText?: string; files?: Record<string, string> }; res: VerifyReport };
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
  /** The newest lab started from a run, if any: a page reloaded, or another tab, finds the lab it shows. */
  'crashlab.ofRun': { req: { runId: string }; res: CrashLabStatus | null };
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
