/**
 * Control flow that crosses step boundaries. Directives (`skip`, `retry`, `jump`, `queue`) and
 * suspension are signals, not failures: they are logged as information and caught where their
 * meaning ends (an iteration, an action, the pipeline, the run). Real failures are `StepError`s.
 */
import { isLogFailure } from '../log/errors.js';
import type { RetryConfig } from '../lang/ast.js';

/** `skip`, and `queue` once the value is queued: end the action (or the current iteration). */
export class SkipSignal {
  constructor(readonly outcome: 'skipped' | 'queued') {}
}

/** `retry {…}`: re-run the whole action from its first step in a fresh scope. */
export class RetrySignal {
  constructor(readonly config: RetryConfig | undefined) {}
}

/** `jump A (then retry|continue)`. */
export class JumpSignal {
  constructor(
    readonly action: string,
    readonly then: 'retry' | 'continue' | undefined,
  ) {}
}

/** The run waits (a pause or a webhook wait); the process may exit and the engine wakes it later. */
export class SuspendSignal {
  constructor(
    readonly reason: 'timer' | 'webhook' | 'wait',
    readonly waitingOn: string,
    readonly wakeAt: number | null,
  ) {}
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
 * Errors of the engine itself, not of the mission: replay divergence, a lost lease, the end of a
 * verify, a log that failed (unreachable, out of disk: `isLogFailure`). They are never tolerated
 * by `onError continue`, never wrapped, never recorded as a step failure — they stop the walk as
 * they are, and the run stays as the log last holds it.
 */
export function isEngineError(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.name === 'NondeterminismError' ||
      error.name === 'LeaseLostError' ||
      error.name === 'ReplayExhausted' ||
      error.name === 'StopRequested' ||
      isLogFailure(error))
  );
}

/**
 * Of two errors of branches that ran side by side (a parallel stage's actions, a concurrent loop's
 * iterations), the one that ends the walk: the first, except that a branch's suspension wins over a
 * sibling's LeaseLostError. A suspension commits the run `suspended` and releases its lease on
 * purpose, so a sibling still working loses the lease at its next commit because of it — that
 * commit wrote nothing, and the run is suspended, not lost. (A lease really lost to another owner
 * fails the suspension's own commit too: then there is no SuspendSignal to prefer.)
 */
export function endOfWalk(first: unknown, next: unknown): unknown {
  if (first === undefined) return next;
  const leaseLost = first instanceof Error && first.name === 'LeaseLostError';
  return leaseLost && next instanceof SuspendSignal ? next : first;
}

/** The worker is shutting down: the run stops before its next step and gives up its lease. */
export class StopRequested extends Error {
  constructor() {
    super('the worker is stopping; the run was released before its next step and any worker can continue it');
    this.name = 'StopRequested';
  }
}
