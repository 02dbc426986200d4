/**
 * A run's failures where they began, from its `step.failed` events: a failure travels up through
 * every enclosing step (each logs `step.failed`), so an event whose path encloses the previous
 * one's is the same failure, not a new one. In a completed run they are the failures a loop
 * tolerated (`onError continue`/`queue`). The run summary (inspect/run-summary.ts) counts them
 * this way, and a resume of a finished run lists them (executor/run-resume.ts).
 */
import { summaryMessage, type StoredEvent } from './events.js';
import type { EventTable } from './log.js';

/** Where a failure began (its `step.failed` event) and what it said. */
export interface RunFailure {
  seq: number;
  stepPath: string;
  code: string;
  message: string;
  /** Where it happened, `file:line:column`, when the event says. */
  at?: string;
}

/** Tells, of a run's `step.failed` events given in seq order, which begin a failure. */
export class FailureStarts {
  /** Path of the last `step.failed`, to tell a failure travelling up from a new one. */
  private lastFailedPath: string | null = null;

  reset(): void {
    this.lastFailedPath = null;
  }

  /** The failure `event` begins, or undefined when it is the previous one travelling up. */
  next(event: StoredEvent<'step.failed'>): RunFailure | undefined {
    const previous = this.lastFailedPath;
    this.lastFailedPath = event.stepPath;
    if (previous !== null && encloses(event.stepPath, previous)) return undefined;
    const { code, message, at } = event.payload.error;
    return { seq: event.seq, stepPath: event.stepPath, code, message: summaryMessage(message), ...(at !== undefined ? { at } : {}) };
  }
}

/**
 * Every failure of a run where it began, in order, read from its `step.failed` events alone (they
 * have an index of their own: the rest of a long run's log is not read).
 */
export async function readRunFailures(log: Pick<EventTable, 'read'>, runId: string): Promise<RunFailure[]> {
  const starts = new FailureStarts();
  const failures: RunFailure[] = [];
  for (const event of await log.read(runId, { types: ['step.failed'] })) {
    const failure = starts.next(event as StoredEvent<'step.failed'>);
    if (failure !== undefined) failures.push(failure);
  }
  return failures;
}

/** Whether step path `outer` is `inner` or one of its ancestors (`A/1` encloses `A/1[2]/0`). */
function encloses(outer: string, inner: string): boolean {
  if (inner === outer) return true;
  if (!inner.startsWith(outer)) return false;
  const next = inner[outer.length];
  return next === '/' || next === '[' || next === '>' || next === '!';
}
