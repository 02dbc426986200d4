/**
 * The shape every inspector fold has: `reset / handleEvent / finalize / data`.
 *
 * A fold reads a run's events in log order and never does I/O, so the CLI, the studio service and
 * tests can feed it from anywhere (a whole log, a live tail, a snapshot plus the events after it).
 * Invariant: `data()` depends only on the events handled since the last `reset()`; calling
 * `finalize()` closes open intervals at the last event seen and may be called more than once.
 */
import type { StoredEvent } from '../log/events.js';

export interface FoldHandler<T> {
  reset(): void;
  handleEvent(event: StoredEvent): void;
  finalize(): void;
  data(): T;
}

/** Runs a fresh fold over `events` and returns its data. */
export function runFold<T>(handler: FoldHandler<T>, events: Iterable<StoredEvent>): T {
  handler.reset();
  for (const event of events) handler.handleEvent(event);
  handler.finalize();
  return handler.data();
}

/** Throws when events arrive out of order: every fold assumes increasing seq. */
export function assertInOrder(previousSeq: number, event: StoredEvent, fold: string): void {
  if (event.seq <= previousSeq) {
    throw new Error(
      `${fold}: event seq ${event.seq} (${event.type}) of run ${event.runId} arrived after seq ${previousSeq}; feed events in log order`,
    );
  }
}
