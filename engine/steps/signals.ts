/**
 * Control flow that crosses step boundaries. Directives (`skip`, `retry`, `jump`, `queue`) and
 * suspension are signals, not failures: they are logged as information and caught where their
 * meaning ends (an iteration, an action, the pipeline, the run). Real failures are `StepError`s.
 */
import { isLogFailure } from '../log/errors.js';
import type { RetryConfig } from '../lang/ast.js';
import type { Journal } from '../journal/journal.js';

/** `skip`, and `queue` once the value is queued: end the action (or the current iteration). */
export class SkipSignal {
  constructor(readonly outcome: 'skipped' | 'queued') {}
}

/** `retry {…}`: re-run the whole action from its first step in a fresh scope. */
export class RetrySignal {
  constructor(
    readonly config: RetryConfig | undefined,
    /** Where the `retry` is written (an offset in its action's file): where running out of attempts is reported. */
    readonly offset?: number,
  ) {}
}

/** `jump A (then retry|continue)`. */
export class JumpSignal {
  constructor(
    readonly action: string,
    readonly then: 'retry' | 'continue' | undefined,
    /** Where the `jump` is written (an offset in its action's file): where running out of attempts is reported. */
    readonly offset?: number,
  ) {}
}

/**
 * The run waits (a pause or a webhook wait); the process may exit and the engine wakes it later.
 *
 * Its step commits the run `suspended` (releasing the lease) before throwing this — except inside
 * concurrent branches (a parallel stage's actions, a concurrent loop's iterations), where a
 * sibling may still be working: committing there would release the lease under it, so a branch
 * resumed at its pause lost its work to the first sibling that paused again, and a run of N paused
 * branches took N resumes before any branch went on. There the step throws with `deferredAt`, the
 * path of the pause or wait: the branch stops, its siblings run on until they end or suspend too,
 * and the executor then commits the suspension the walk ends with (`run.suspended` at that path).
 */
export class SuspendSignal {
  constructor(
    readonly reason: 'timer' | 'webhook' | 'wait',
    readonly waitingOn: string,
    readonly wakeAt: number | null,
    /** The step path whose `run.suspended` is still to be committed (by the executor); none: committed already. */
    readonly deferredAt?: string,
    /** A pause a webhook delivery also resumes (before its timer, if it has one): that path. */
    readonly webhookPath?: string,
  ) {}
}

/**
 * Commits the run suspended at `path`: its `run.suspended` and the status that releases the lease,
 * durable — on disk before the run is reported suspended (the output-commit rule). By the pause or
 * wait step itself, or by the executor for one inside concurrent branches (`deferredAt`).
 */
export async function commitSuspension(journal: Journal, path: string, s: Pick<SuspendSignal, 'reason' | 'waitingOn' | 'wakeAt'>): Promise<void> {
  journal.emit('run.suspended', path, { reason: s.reason, ...(s.wakeAt === null ? {} : { dueAt: s.wakeAt }) });
  await journal.commit({ durable: true, status: { status: 'suspended', wakeAt: s.wakeAt, waitingOn: s.waitingOn, releaseLease: true } });
}

export type FlowSignal = SkipSignal | RetrySignal | JumpSignal | SuspendSignal;

export function isFlowSignal(value: unknown): value is FlowSignal {
  return (
    value instanceof SkipSignal || value instanceof RetrySignal || value instanceof JumpSignal || value instanceof SuspendSignal
  );
}

/** A step failed. `code` is stable; `retryable` says whether running it again could help. */
export class StepError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'StepError';
  }
}

/**
 * `abort …`: the mission fails the run on purpose (reference §C.8: "mission fails"). A failure
 * no loop tolerates, whatever its `onError` says: a loop that skipped it ran the steps after the
 * abort, and the actions after it, in a run that then completed.
 */
export class AbortError extends StepError {
  constructor(message: string) {
    super('aborted', message);
  }
}

/** What a replay found wrong with the log it walks: a divergence, a damaged or unreadable event. */
function isLogFinding(error: unknown): boolean {
  return error instanceof Error && (error.name === 'NondeterminismError' || error.name === 'DamagedLogError' || error.name === 'UnreadableEventError');
}

/**
 * Errors of the engine itself, not of the mission: replay divergence, a lost lease, the end of a
 * verify, a log that failed (unreachable, out of disk: `isLogFailure`). They are never tolerated
 * by `onError continue`, never wrapped, never recorded as a step failure — they stop the walk as
 * they are, and the run stays as the log last holds it.
 */
export function isEngineError(error: unknown): boolean {
  return (
    isLogFinding(error) ||
    (error instanceof Error && (error.name === 'LeaseLostError' || error.name === 'ReplayExhausted' || error.name === 'StopRequested' || isLogFailure(error)))
  );
}

/**
 * Of two errors of branches that ran side by side (a parallel stage's actions, a concurrent loop's
 * iterations), the one that ends the walk: the first, except
 * - of two suspensions, one already committed (the log says the run waits on it) wins; of two still
 *   to commit (deferredAt), the one that wakes first (a timer's due instant, a wait's expiry; none
 *   last): the run can wait on one thing, and a timer it did not wait on would never wake it. A
 *   webhook delivery for a pause it does not wait on is kept in the inbox and claimed when the run
 *   reaches that pause again.
 * - a suspension still to commit loses to an engine error (a divergence, a log failure, a stop, a
 *   lost lease): the run is not suspended then, and whoever carries it on reaches the pause again.
 * - a committed suspension wins over a sibling's LeaseLostError: such a suspension released the
 *   lease on purpose, so the sibling's commit wrote nothing and the run is suspended, not lost.
 * - what a replay found wrong with the log (a divergence, a damaged event) wins over a branch's
 *   own failure: a verify whose first failing iteration ended the loop dropped a later iteration's
 *   divergence (an edited abort reason there), and said the log matched.
 */
export function endOfWalk(first: unknown, next: unknown): unknown {
  if (first === undefined) return next;
  if (isLogFinding(next) && !isLogFinding(first)) return next;
  const a = first instanceof SuspendSignal ? first : undefined;
  const b = next instanceof SuspendSignal ? next : undefined;
  if (a && b) {
    if (a.deferredAt === undefined) return a;
    if (b.deferredAt === undefined) return b;
    return (b.wakeAt ?? Infinity) < (a.wakeAt ?? Infinity) ? b : a;
  }
  const suspension = a ?? b;
  if (!suspension) return first;
  const other = suspension === a ? next : first;
  if (suspension.deferredAt !== undefined) return isEngineError(other) ? other : first;
  return other instanceof Error && other.name === 'LeaseLostError' ? suspension : first;
}

/** The worker is shutting down: the run stops before its next step and gives up its lease. */
export class StopRequested extends Error {
  constructor() {
    super('the worker is stopping; the run was released before its next step and any worker can continue it');
    this.name = 'StopRequested';
  }
}
