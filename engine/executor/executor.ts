/**
 * The executor walks a mission: pipeline stages, actions (with `retry`, `jump`, `skip`, `queue`),
 * and steps, which it dispatches to the step modules. It is the same walk live and on replay:
 * every step asks the journal first, so a resumed run re-walks from the top, answered from the
 * log, and carries on live where the log ends.
 *
 * Flow directives are signals caught where their meaning ends (steps/signals.ts); suspension
 * (a pause) unwinds the whole walk and leaves the run `suspended` in the log.
 */
import { missionEnvValues, missionEnvVar } from '../env/mission-env.js';
import type { Env } from '../env/env.js';
import { EvaluatorError } from '../eval/eval-errors.js';
import { evaluate } from '../eval/evaluate.js';
import { Scope } from '../eval/scope.js';
import { isTruthy } from '../eval/values.js';
import { PARALLEL_FAILED, type Journal } from '../journal/journal.js';
import type { ApplyStep, CallStep, FetchStep, LetStep, MapStep, Step, StoreStep, ValidateStep } from '../lang/ast.js';
import type { ErrorInfo } from '../log/events.js';
import type { LastCheckpoint } from '../log/log.js';
import { runApply, runFlow, runLet, runMap, runMatch, runValidate, runValidateWithoutFallback, } from '../steps/control-steps.js';
import type { StepOutcome } from '../steps/step-runtime.js';
import { runFetch } from '../steps/fetch-step.js';
import { runFor } from '../steps/for-step.js';
import type { HttpRuntime } from '../steps/http-runtime.js';
import type { MissionModel } from '../steps/mission-model.js';
import { runPause } from '../steps/pause-step.js';
import { commitSuspension, endOfWalk, isEngineError, isFlowSignal, JumpSignal, RetrySignal, SkipSignal, StepError, StopRequested, SuspendSignal } from '../steps/signals.js';
import { Frame, journaledInputs, prefetchReads, type PrefetchedReads, type StepRuntime, type ToleratedError } from '../steps/step-runtime.js';

import type { StoreRuntime } from '../steps/store-runtime.js';
import { advanceActionCheckpoints } from '../steps/checkpoints.js';
import { finishStreamedStore, runStore, storeStreamedPage } from '../steps/store-step.js';
import { runStoreDelete } from '../steps/store-delete-step.js';
import { runWait } from '../steps/wait-step.js';
import { backoffDelay, DEFAULT_RETRY, resolveRetryPolicy } from '../http/retry-policy.js';
import type { CrashInjector } from '../journal/crash-points.js';
import { actionPath, parallelConstruct, stagePath, stepPath } from '../journal/step-path.js';

const PARALLEL_LIMIT = 8;
/** Runs of one action in one run (each after the first through a jump) before the run fails as a jump loop. */
export const MAX_ACTION_VISITS = 10_000;
/** Attempts of an action that `jump A then retry`s, as many as a bare `retry`'s default. */
const JUMP_RETRY_ATTEMPTS = DEFAULT_RETRY.maxAttempts;

/**
 * Trace modes (`trace: full | minimal` in the mission; full by default).
 *
 * Pure steps — let, map, apply, validate, and match and for themselves (not the steps they run) —
 * compute only from values that are themselves recorded or replayed (responses, store reads,
 * `now()`, earlier bindings), so replay does not need their events: it simply runs them again.
 * Under `trace: full` they still write `step.started`/`step.completed` (and `loop.iteration` per
 * iteration) so the studio can draw a bar, a binding and a `response` for every step. Under
 * `trace: minimal` they write nothing of their own; effectful steps (fetch, call, store, wait,
 * pause), the non-deterministic inputs a pure step reads (`value.recorded`), stage and action
 * events and flow decisions are recorded exactly as before, so replay stays exact.
 *
 * The price of minimal: the studio shows no bars, bindings or responses for pure steps; and an
 * edit to a pure step is caught as a divergence only when it changes something recorded (an
 * effect's identity or payload key, a recorded input, the path of a later effectful step) — an
 * edited `let` whose value feeds nothing effectful replays silently. A run keeps the mode of the
 * mission it started with; resuming with an edited mission that switches the mode diverges (the
 * step events that one mode writes and the other asks for) and is refused, never misread.
 */
const PURE_STEPS: ReadonlySet<Step['kind']> = new Set<Step['kind']>(['Let', 'Map', 'Apply', 'Validate', 'Match', 'For', 'Flow']);

export type RunEnd =
  | { status: 'completed'; actionsRun: string[] }
  | { status: 'failed'; error: ErrorInfo; actionsRun: string[] }
  | { status: 'suspended'; waitingOn: string; wakeAt: number | null; webhookPath?: string; actionsRun: string[] };

interface ActionEnd {
  jumpTo?: string;
}

export interface ExecutorParts {
  runId: string;
  model: MissionModel;
  journal: Journal;
  env: Env;
  crash: CrashInjector;
  stores: StoreRuntime;
  http: HttpRuntime;
  runEnv: Record<string, string>;
  lastSync: (key: string, api?: string) => Promise<LastCheckpoint | undefined>;
  inbox: (path: string) => Promise<{ eventId: string; payload: unknown; receivedAt: number }[]>;
  progress: (line: string) => void;
  /** Checked before every step: true makes the walk stop there (worker shutdown). */
  shouldStop?: () => boolean;
}

/**
 * The step path each failure was first recorded at: a failure travels up through the steps that
 * hold it (a loop, a match arm), each recording it again. Only where it arose is what failed the
 * step's own (journal.ts markFailure compares it under verify): a concurrent loop's failure is
 * whichever iteration's failed first, which a replay, its answers coming at once, need not repeat.
 */
const failedFirstAt = new WeakMap<object, string>();

function failsFirstAt(error: unknown, path: string): boolean {
  if (typeof error !== 'object' || error === null) return true;
  const first = failedFirstAt.get(error);
  if (first === undefined) failedFirstAt.set(error, path);
  return first === undefined || first === path;
}

export class Executor implements StepRuntime {
  readonly runId: string;
  readonly model: MissionModel;
  readonly journal: Journal;
  readonly env: Env;
  readonly crash: CrashInjector;
  readonly stores: StoreRuntime;
  readonly http: HttpRuntime;
  readonly tolerated: ToleratedError[] = [];
  readonly fullTrace: boolean;
  readonly storeReads = new Map<string, PrefetchedReads>();
  private readonly actionsRun: string[] = [];
  private readonly visits = new Map<string, number>();
  private readonly stageVisits = new Map<number, number>();

  constructor(private readonly parts: ExecutorParts) {
    this.runId = parts.runId;
    this.model = parts.model;
    this.journal = parts.journal;
    this.env = parts.env;
    this.crash = parts.crash;
    this.stores = parts.stores;
    this.http = parts.http;
    this.fullTrace = parts.model.mission.trace?.mode !== 'minimal';
  }

  envVar(name: string): string | undefined {
    return missionEnvVar(name, this.parts.runEnv, this.env.vars);
  }

  private settingValues: readonly string[] | undefined;

  envValues(): readonly string[] {
    return (this.settingValues ??= missionEnvValues(this.parts.runEnv, this.env.vars));
  }

  lastSync(key: string, api?: string): Promise<LastCheckpoint | undefined> {
    return this.parts.lastSync(key, api);
  }

  inbox(path: string): Promise<{ eventId: string; payload: unknown; receivedAt: number }[]> {
    return this.parts.inbox(path);
  }

  progress(line: string): void {
    this.parts.progress(line);
  }

  /** Walks the pipeline to its end; returns how the run ended (the caller commits that). */
  async run(): Promise<RunEnd> {
    try {
      await this.runPipeline();
      return { status: 'completed', actionsRun: this.actionsRun };
    } catch (error) {
      if (error instanceof SuspendSignal) {
        if (error.deferredAt !== undefined) await commitSuspension(this.journal, error.deferredAt, error);
        return { status: 'suspended', waitingOn: error.waitingOn, wakeAt: error.wakeAt, ...(error.webhookPath !== undefined ? { webhookPath: error.webhookPath } : {}), actionsRun: this.actionsRun };
      }
      if (isEngineError(error) || !(error instanceof Error)) throw error;
      return { status: 'failed', error: errorInfo(error), actionsRun: this.actionsRun };
    }
  }

  private async runPipeline(): Promise<void> {
    const pipeline = this.model.pipeline;
    if (!pipeline) throw new StepError('no-pipeline', 'Mission must have a run pipeline: add `run ActionName` to the mission');
    const stages = pipeline.stages;
    let index = 0;
    while (index < stages.length) {
      const stage = stages[index]!;
      const visit = (this.stageVisits.get(index) ?? 0) + 1;
      this.stageVisits.set(index, visit);
      const path = stagePath(index, visit);
      const names = stage.actions.map((a) => a.name);
      if (stage.condition) {
        await prefetchReads(this.model.readsOfExpr(stage.condition), path, this);
        const ctx = { scope: new Scope(), response: undefined, inputs: journaledInputs(this, path), logFormat: this.http.logFormat };
        let holds: boolean;
        try {
          holds = isTruthy(evaluate(stage.condition, ctx));
        } catch (error) {
          // The condition's own place (the pipeline is the mission file's), as a step's failure has.
          const span = error instanceof EvaluatorError && error.span.end > error.span.start ? error.span : stage.condition;
          if (error instanceof Error && !isFlowSignal(error) && !isEngineError(error)) this.placeAt(error, this.model.unit.root.file, span.start);
          throw error;
        }
        this.storeReads.delete(path);
        if (!holds) {
          this.journal.markStage(path, 'stage.skipped', () => ({ index, actions: names }));
          this.progress(`stage ${index + 1} (${names.join(', ')}) skipped: its condition is false`);
          index++;
          continue;
        }
      }
      this.journal.markStage(path, 'stage.started', () => ({ index, actions: names }));
      let end: ActionEnd;
      try {
        end = stage.parallel ? await this.runParallel(names) : await this.runAction(names[0]!);
      } catch (error) {
        if (!(error instanceof SuspendSignal) && !isFlowSignal(error) && !isEngineError(error)) {
          this.journal.markPassedFailure(path, 'stage.failed', () => ({ index, error: errorInfo(error) }));
        }
        throw error;
      }
      this.journal.mark(path, 'stage.completed', () => ({ index }));
      await this.journal.maybeFlush();
      if (end.jumpTo !== undefined) {
        index = this.jumpTarget(end.jumpTo);
        continue;
      }
      index++;
    }
  }

  /** The first sequential stage running `action` (parallel stages are not jump targets). */
  private jumpTarget(action: string): number {
    const target = this.model.pipeline!.stages.findIndex((s) => !s.parallel && s.actions[0]?.name === action);
    if (target < 0) {
      throw new StepError('bad-jump', `jump to \`${action}\`: no sequential pipeline stage runs that action (parallel stages are not jump targets)`);
    }
    return target;
  }

  /** Complete-then-fail: every branch runs to its end, then the stage fails if any branch did. */
  private async runParallel(names: string[]): Promise<ActionEnd> {
    const construct = parallelConstruct(names);
    this.journal.enterConcurrent(construct);
    // Armed with a crash point, the actions take turns at it (CrashInjector.turn).
    const turns = this.crash.enterBranches(construct, names);
    const results: PromiseSettledResult<ActionEnd>[] = [];
    try {
      let next = 0;
      const worker = async () => {
        while (next < names.length) {
          const i = next++;
          results[i] = await this.runAction(names[i]!).then(
            (value) => ({ status: 'fulfilled' as const, value }),
            (reason: unknown) => ({ status: 'rejected' as const, reason }),
          );
          turns?.end(names[i]!);
        }
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL_LIMIT, names.length) }, worker));
    } finally {
      this.crash.leaveBranches(turns);
      this.journal.leaveConcurrent(construct);
    }
    const fatal = results.reduce<unknown>(
      (end, r) => (r.status === 'rejected' && (isEngineError(r.reason) || r.reason instanceof SuspendSignal) ? endOfWalk(end, r.reason) : end),
      undefined,
    );
    const failed = results.flatMap((r, i) => (r.status === 'rejected' && !(r.reason instanceof SuspendSignal) && !isEngineError(r.reason) ? [{ name: names[i]!, info: errorInfo(r.reason) }] : []));
    // The stage's failure is placed at the first branch's; with more than one, each says its own.
    const failures = failed.map(({ name, info }) => `${name}: ${failed.length > 1 && info.at !== undefined ? `${info.at}: ` : ''}${info.message}`);
    if (fatal instanceof SuspendSignal && failures.length > 0) {
      // The stage fails only once every branch has ended, and a suspended one ends on its resume:
      // said now, not in days, when a long pause ends.
      this.progress(`warning: a parallel branch failed (${failures.join('; ')}); the stage fails once the suspended branch resumes and ends`);
    }
    if (fatal !== undefined) throw fatal;
    if (failures.length > 0) {
      const stageFailed = new StepError('parallel-failed', `${PARALLEL_FAILED}${failures.join('; ')}`);
      const at = failed[0]!.info.at;
      if (at !== undefined) (stageFailed as Located).at = at;
      throw stageFailed;
    }
    const jump = results.find((r) => r.status === 'fulfilled' && r.value.jumpTo !== undefined);
    return jump?.status === 'fulfilled' ? jump.value : {};
  }

  private async runAction(name: string): Promise<ActionEnd> {
    const action = this.model.actions.get(name);
    if (!action) throw new StepError('unknown-action', `Action \`${name}\` is not declared in this mission`);
    const visit = (this.visits.get(name) ?? 0) + 1;
    // Only jumps run an action again: backwards (`run A then B`, B jumps to A), or through a
    // detour that jumps back (A: `jump B then retry`, B: `jump A then retry`). Unbounded, such a
    // loop sent requests and grew the log for ever, and a worker resumed it after a kill.
    if (visit > MAX_ACTION_VISITS) {
      throw new StepError(
        'jump-loop',
        `Action ${name} was to run for the ${visit}th time in this run: its jumps loop without end (a jump back, or a detour that jumps back); ` +
          `a loop of jumps must end at an action that does not jump back, within ${MAX_ACTION_VISITS} runs of each action, waits or not (a poll of more turns is a schedule's work)`,
      );
    }
    this.visits.set(name, visit);
    let detours = 0;
    for (let attempt = 1; ; attempt++) {
      const path = actionPath(name, visit, attempt);
      this.journal.mark(path, 'action.started', () => ({ action: name, attempt }));
      if (attempt === 1) this.progress(`▸ ${name}`);
      const frame = new Frame(name, new Scope(), []);
      try {
        await this.runSteps(action.steps, path, frame);
        await this.flushCheckpoints(frame, path);
        this.finishAction(path, name, 'done');
        return {};
      } catch (signal) {
        if (signal instanceof SkipSignal) {
          await this.flushCheckpoints(frame, path);
          this.finishAction(path, name, signal.outcome);
          return {};
        }
        if (signal instanceof JumpSignal) {
          if (signal.then === undefined) {
            this.journal.mark(path, 'action.completed', () => ({ action: name, outcome: 'jumped', jumpTo: signal.action }));
            return { jumpTo: signal.action };
          }
          // `jump A then …`: a detour through A, then retry this action or carry on after it.
          // Bounded as a bare `retry` is: a detour that does not change the answer (a refresh the
          // API still refuses) would otherwise loop, sending the same requests, for ever.
          if (signal.then === 'retry' && ++detours >= JUMP_RETRY_ATTEMPTS) {
            const exhausted = new StepError(
              'retries-exhausted',
              `Action ${name} exhausted ${JUMP_RETRY_ATTEMPTS} attempt(s) of \`jump ${signal.action} then retry\`: it jumped again after each detour through ${signal.action}`,
            );
            if (signal.offset !== undefined) this.placeAt(exhausted, this.fileOf(frame), signal.offset);
            throw exhausted;
          }
          await this.runAction(signal.action);
          if (signal.then === 'continue') {
            this.finishAction(path, name, 'done');
            return {};
          }
          await this.retryDelay(path, name, attempt, 0);
          continue;
        }
        if (signal instanceof RetrySignal) {
          const policy = resolveRetryPolicy(signal.config);
          const maxAttempts = signal.config?.maxAttempts ?? DEFAULT_RETRY.maxAttempts;
          if (attempt >= maxAttempts) {
            const exhausted = new StepError('retries-exhausted', `Action ${name} exhausted ${maxAttempts} retry attempt(s)`);
            if (signal.offset !== undefined) this.placeAt(exhausted, this.fileOf(frame), signal.offset);
            throw exhausted;
          }
          const delay = signal.config ? backoffDelay(policy, attempt, 0.5) : 0;
          await this.retryDelay(path, name, attempt, delay);
          continue;
        }
        if (!(signal instanceof SuspendSignal) && !isEngineError(signal)) {
          this.journal.markPassedFailure(path, 'action.failed', () => ({ action: name, error: errorInfo(signal) }));
        }
        throw signal;
      }
    }
  }

  private finishAction(path: string, name: string, outcome: 'done' | 'skipped' | 'queued'): void {
    this.journal.mark(path, 'action.completed', () => ({ action: name, outcome }));
    this.actionsRun.push(name);
  }

  /** `retry` waits between attempts live; a replayed wait already happened. */
  private async retryDelay(path: string, name: string, attempt: number, delayMs: number): Promise<void> {
    const recorded = this.journal.take(path, 'action.retrying');
    if (recorded) {
      // Stopped or killed during the delay: the rest of it is waited out, as a fetch's retries are
      // — only where the log ends there, never for a retry whose next attempt it holds (helper 99).
      const rest = recorded.recordedAt + recorded.payload.delayMs - this.env.clock.now();
      if (rest > 0 && !this.journal.verifying && !this.journal.replaying) await this.env.clock.sleep(rest);
      return;
    }
    this.journal.emit('action.retrying', path, { action: name, attempt: attempt + 1, delayMs });
    await this.journal.commit({ durable: false });
    this.progress(`  ${name}: retrying (attempt ${attempt + 1})${delayMs > 0 ? ` in ${delayMs} ms` : ''}`);
    if (delayMs > 0) await this.env.clock.sleep(delayMs);
  }

  /** The action's sync checkpoints advance at its end, unless a tolerated failure holds them (steps/checkpoints.ts). */
  private async flushCheckpoints(frame: Frame, path: string): Promise<void> {
    await advanceActionCheckpoints(frame.checkpoints, path, this);
  }

  /**
   * Runs `steps` in order. Returns undefined when they all ran synchronously (under
   * `trace: minimal`, a list of `let`/`map`/`apply`/plain `validate` steps: no promise at all),
   * else a promise of the rest; a failure of a synchronous step is thrown, not returned.
   */
  runSteps = (steps: readonly Step[], parentPath: string, frame: Frame): Promise<void> | undefined => this.runStepsFrom(steps, 0, parentPath, frame);

  private runStepsFrom(steps: readonly Step[], from: number, parentPath: string, frame: Frame): Promise<void> | undefined {
    for (let i = from; i < steps.length; i++) {
      const step = steps[i]!;
      const store = this.model.streamedStore(step);
      if (store && (step.kind === 'Fetch' || step.kind === 'Call')) {
        // The pair is the last two steps of this list (streamed-sync.ts): both run here.
        return this.runStreamedSync(step, store, stepPath(parentPath, i), stepPath(parentPath, i + 1), frame);
      }
      const after = steps[i + 1];
      if ((step.kind === 'Fetch' || step.kind === 'Call') && after?.kind === 'Store' && this.journal.replaying &&
        this.journal.recordedAsStreamed(stepPath(parentPath, i), stepPath(parentPath, i + 1))) {
        // Recorded as a streamed pair by the mission before an edit that added steps after it:
        // the recorded part replays as it ran, and the steps after the pair run as they now are.
        return this.runStreamedSync(step, after, stepPath(parentPath, i), stepPath(parentPath, i + 1), frame).then(() =>
          this.runStepsFrom(steps, i + 2, parentPath, frame),
        );
      }
      const next = i + 1;
      if (!this.fullTrace && isSynchronousPureStep(step) && this.model.readsOf(step).none) {
        // trace: minimal — a synchronous pure step: no events, no promise per step.
        if (this.parts.shouldStop?.()) throw new StopRequested();
        const path = stepPath(parentPath, i);
        try {
          if (step.kind === 'Let') runLet(step, path, frame, this);
          else if (step.kind === 'Map') runMap(step, path, frame, this);
          else if (step.kind === 'Apply') runApply(step, path, frame, this);
          else runValidateWithoutFallback(step, path, frame, this, this.fileOf(frame));
        } catch (error) {
          throw this.locate(error, step, this.fileOf(frame));
        }
        if (this.journal.hasPending) return this.journal.maybeFlush().then(() => this.runStepsFrom(steps, next, parentPath, frame));
        continue;
      }
      return this.runStep(step, stepPath(parentPath, i), frame).then(() => this.runStepsFrom(steps, next, parentPath, frame));
    }
    return undefined;
  }

  /**
   * A paginated fetch and the store it streams into, as two steps whose bars overlap: both start,
   * each page is fetched (at the fetch's path) then stored (at the store's path), then both
   * complete. A failure fails both: the store cannot outlive the fetch feeding it.
   */
  private async runStreamedSync(fetch: FetchStep | CallStep, store: StoreStep, fetchPath: string, storePath: string, frame: Frame): Promise<void> {
    if (this.parts.shouldStop?.()) throw new StopRequested();
    const file = this.fileOf(frame);
    this.journal.mark(fetchPath, 'step.started', () => ({ stepType: fetch.kind, line: this.model.line(file, fetch.start) }));
    this.journal.mark(storePath, 'step.started', () => ({ stepType: 'Store', line: this.model.line(file, store.start) }));
    let records = 0;
    let fetchDone = false;
    try {
      await prefetchReads(this.model.readsOf(fetch), fetchPath, this);
      await prefetchReads(this.model.readsOf(store), storePath, this);
      const kind = this.stores.kind(store.store.name);
      await runFetch(fetch, fetchPath, frame, this, {
        store: async (items, firstIndex) => {
          try {
            await storeStreamedPage(store, items, firstIndex, storePath, frame, this);
          } catch (error) {
            // A page's write that fails (a bad key) is the store step's failure, placed there.
            throw this.locate(error, store, file);
          }
          records = firstIndex + items.length;
        },
        path: storePath,
        tableWrites: kind === 'sql' || kind === 'nosql',
      });
      this.journal.mark(fetchPath, 'step.completed', () => ({ stepType: fetch.kind }));
      fetchDone = true;
      await finishStreamedStore(records, storePath, frame, this);
    } catch (error) {
      if (error instanceof SuspendSignal || isEngineError(error) || isFlowSignal(error)) throw error;
      this.locate(error, fetchDone ? store : fetch, file);
      const failed = errorInfo(error);
      if (!fetchDone) this.journal.markFailure(fetchPath, () => ({ stepType: fetch.kind, error: failed }), true);
      this.journal.markFailure(storePath, () => ({ stepType: 'Store', error: failed }), true);
      throw error;
    } finally {
      this.storeReads.delete(fetchPath);
      this.storeReads.delete(storePath);
    }
    this.journal.mark(storePath, 'step.completed', () => ({ stepType: 'Store' }));
    await this.journal.maybeFlush();
  }

  /**
   * Gives a step's failure its place, once (the innermost step that sees it): `file:line:column`
   * of the expression that failed when it lies within the step, else of the step. Signals (flow,
   * suspension) and engine errors are not failures of the mission and pass unchanged.
   */
  private locate(error: unknown, step: Step, file: string): unknown {
    if (!(error instanceof Error) || isFlowSignal(error) || isEngineError(error) || (error as Located).at !== undefined) return error;
    const span = error instanceof EvaluatorError ? error.span : undefined;
    const inStep = span !== undefined && span.end > span.start && span.start >= step.start && span.end <= step.end;
    this.placeAt(error, file, inStep ? span.start : step.start);
    return error;
  }

  /** Gives `error` the place `file:line:column` of `offset`, unless it has one. */
  private placeAt(error: Error, file: string, offset: number): void {
    if ((error as Located).at !== undefined) return;
    const { line, column } = this.model.position(file, offset);
    try {
      (error as Located).at = `${file}:${line}:${column}`;
    } catch {
      // A frozen error keeps no place; its message is still reported.
    }
  }

  /** The mission file that holds the action `frame` runs (for line numbers and source text). */
  private fileOf(frame: Frame): string {
    return this.model.actions.get(frame.action)?.file ?? this.model.unit.root.file;
  }

  private async runStep(step: Step, path: string, frame: Frame): Promise<void> {
    if (this.parts.shouldStop?.()) throw new StopRequested();
    const file = this.fileOf(frame);
    if (!this.fullTrace && PURE_STEPS.has(step.kind)) {
      // trace: minimal — no events of its own; failures (with their place) and flow signals travel up.
      try {
        await this.thenContinue(() => this.dispatch(step, path, frame, file));
      } catch (error) {
        throw this.locate(error, step, file);
      }
      if (this.journal.hasPending) await this.journal.maybeFlush();
      return;
    }
    const stepType = step.kind;
    this.journal.mark(path, 'step.started', () => ({ stepType, line: this.model.line(file, step.start) }));
    let outcome: StepOutcome;
    try {
      outcome = await this.thenContinue(() => this.dispatch(step, path, frame, file));
    } catch (error) {
      if (error instanceof SuspendSignal || isEngineError(error)) throw error;
      if (isFlowSignal(error)) {
        this.journal.mark(path, 'step.completed', () => ({ stepType }));
        throw error;
      }
      this.locate(error, step, file);
      this.journal.markFailure(path, () => ({ stepType, error: errorInfo(error) }), failsFirstAt(error, path));
      throw error;
    }
    this.journal.markDerived(path, 'step.completed', () => ({ stepType, ...outcome }));
    await this.journal.maybeFlush();
  }

  /**
   * `jump A then continue` from inside a step: the detour through A runs in place, then the walk
   * carries on after the step that jumped (the innermost one: the rest of its arm, iteration or
   * action still runs). `jump A` and `jump A then retry` travel up to the action.
   */
  private async thenContinue(run: () => Promise<StepOutcome>): Promise<StepOutcome> {
    try {
      return await run();
    } catch (signal) {
      if (!(signal instanceof JumpSignal) || signal.then !== 'continue') throw signal;
      await this.runAction(signal.action);
      return {};
    }
  }

  /** Runs the step, its store and checkpoint reads first (prefetchReads) and cleared after. */
  private async dispatch(step: Step, path: string, frame: Frame, file: string): Promise<StepOutcome> {
    const reads = this.model.readsOf(step);
    if (reads.none) return this.dispatchStep(step, path, frame, file);
    try {
      await prefetchReads(reads, path, this);
      return await this.dispatchStep(step, path, frame, file);
    } finally {
      this.storeReads.delete(path);
    }
  }

  private async dispatchStep(step: Step, path: string, frame: Frame, file: string): Promise<StepOutcome> {
    switch (step.kind) {
      case 'Fetch': {
        const removal = this.model.storeDelete(step);
        return removal ? runStoreDelete(removal, path, frame, this) : runFetch(step, path, frame, this);
      }
      case 'Call':
        return runFetch(step, path, frame, this);
      case 'For':
        return runFor(step, path, frame, this);
      case 'Map':
        return runMap(step, path, frame, this);
      case 'Apply':
        return runApply(step, path, frame, this);
      case 'Validate':
        return runValidate(step, path, frame, this, file);
      case 'Store':
        return runStore(step, path, frame, this);
      case 'Let':
        return runLet(step, path, frame, this);
      case 'Match':
        return runMatch(step, path, frame, this);
      case 'Wait':
        return runWait(step, path, frame, this);
      case 'Pause':
        return runPause(step, path, frame, this);
      case 'Flow':
        return runFlow(step, path, frame, this);
    }
  }
}

/** Pure steps that never await: `let`, `map`, `apply`, and `validate` without a fallback. */
function isSynchronousPureStep(step: Step): step is LetStep | MapStep | ApplyStep | ValidateStep {
  return step.kind === 'Let' || step.kind === 'Map' || step.kind === 'Apply' || (step.kind === 'Validate' && !step.fallback);
}

/** A step failure that knows where it happened (`Executor.locate`). */
interface Located {
  at?: string;
}

export function errorInfo(error: unknown): ErrorInfo {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const retryable = (error as { retryable?: unknown }).retryable;
    const at = (error as Located).at;
    return {
      code: typeof code === 'string' ? code : error.name,
      message: error.message,
      ...(typeof retryable === 'boolean' ? { retryable } : {}),
      ...(typeof at === 'string' ? { at } : {}),
    };
  }
  return { code: 'error', message: String(error) };
}
