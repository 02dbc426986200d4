/**
 * What a step sees while it runs: the run's services (journal, env, stores, HTTP, crash points),
 * the mission model, and the frame of the action or iteration it runs in. The executor builds
 * these; steps never reach up into it — nested steps run through `runSteps`, a callback.
 */
import type { Env } from '../env/env.js';
import type { EvalContext } from '../eval/scope.js';
import { Scope } from '../eval/scope.js';
import type { EvalInputs } from '../eval/inputs.js';
import type { Journal } from '../journal/journal.js';
import type { CrashInjector } from '../journal/crash-points.js';
import type { ErrorInfo } from '../log/events.js';
import type { MissionModel } from './mission-model.js';
import type { StoreRuntime } from './store-runtime.js';
import type { HttpRuntime } from './http-runtime.js';
import type { Step } from '../lang/ast.js';

/** A sync checkpoint waiting for the store write that covers its records (§C.1.6). */
export interface PendingCheckpoint {
  key: string;
  syncedAt: number;
}

/** The mutable state of one action attempt or loop iteration. */
export class Frame {
  response: unknown = undefined;
  /** Status of the last HTTP response, for `match` status arms. */
  lastStatus: number | undefined = undefined;

  constructor(
    readonly action: string,
    readonly scope: Scope,
    /** Shared by an action and its iterations. */
    readonly checkpoints: PendingCheckpoint[],
    /**
     * True inside a loop iteration. A store there covers one item, not everything the fetch
     * returned, so it must not advance the action's checkpoints: they wait for a store at the
     * action's own level, or for the end of the action.
     */
    readonly inIteration = false,
  ) {}

  /** A loop iteration: own scope, inherits `response` and the last status. */
  child(): Frame {
    const frame = new Frame(this.action, this.scope.child(), this.checkpoints, true);
    frame.response = this.response;
    frame.lastStatus = this.lastStatus;
    return frame;
  }
}

/** A failure that a `for … onError continue` tolerated: reported in the run result. */
export interface ToleratedError extends ErrorInfo {
  stepPath: string;
}

export interface StepRuntime {
  readonly runId: string;
  readonly model: MissionModel;
  readonly journal: Journal;
  readonly env: Env;
  readonly crash: CrashInjector;
  readonly stores: StoreRuntime;
  readonly http: HttpRuntime;
  readonly tolerated: ToleratedError[];
  /**
   * `trace: full` (the default): every step writes `step.started`/`step.completed` and every loop
   * iteration a `loop.iteration`. False for `trace: minimal`: pure steps write no events of their
   * own (see executor.ts, "Trace modes").
   */
  readonly fullTrace: boolean;
  /** Environment as the mission's `env("NAME")` sees it: the run's `--env` over the process's. */
  envVar(name: string): string | undefined;
  /** The latest sync checkpoint under `key` from earlier runs of this mission (ms), if any. */
  lastSync(key: string): Promise<number | undefined>;
  /** Unclaimed webhook deliveries on `path`, oldest first. */
  inbox(path: string): Promise<{ eventId: string; payload: unknown }[]>;
  /** Progress for people (stderr); never part of the log. */
  progress(line: string): void;
  /** Undefined when every step ran synchronously (see Executor.runSteps), else a promise of the rest. */
  runSteps(steps: readonly Step[], parentPath: string, frame: Frame): Promise<void> | undefined;
}

/** Non-deterministic inputs for expressions at `stepPath`, recorded live and replayed after. */
export function journaledInputs(rt: StepRuntime, stepPath: string): EvalInputs {
  return {
    now: () =>
      rt.journal.record(stepPath, 'value.recorded', () => ({ source: 'now', value: rt.env.clock.now() })).value as number,
    random: () =>
      rt.journal.record(stepPath, 'value.recorded', () => ({ source: 'random', value: rt.env.random.next() })).value as number,
    env: (name) => rt.envVar(name),
  };
}

export function evalContext(rt: StepRuntime, frame: Frame, stepPath: string, current?: unknown): EvalContext {
  return { scope: frame.scope, response: frame.response, current, inputs: journaledInputs(rt, stepPath) };
}
