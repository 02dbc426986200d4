/**
 * The state-at fold's data (state-at.ts): what a run held just after one of its events. Its own
 * file, types only, because the fold itself checks records with engine/stores, which the
 * renderer's typecheck (it reads these types through engine/protocol) must not pull in.
 */
import type { ErrorInfo, StoredEvent } from '../log/events.js';
import type { ValueSlice } from './state-slice.js';

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
  /** Present when the event at `seq` is a `step.failed`: what failed, and the request and answer that made it fail. */
  failure?: StepFailure;
}

/** A failed step, as State shows it at its `step.failed`. */
export interface StepFailure {
  stepPath: string;
  stepType: string;
  code: string;
  message: string;
  /**
   * The request the failure came from — this step's last, or, for an enclosing step the failure
   * travelled up through, the failed inner step's — as recorded (secrets redacted); null when
   * no request failed it (a `validate`).
   */
  request: { method: string; url: string; body?: unknown } | null;
  /** What that request got: an answer (status and body) or a transport error; null before either. */
  answer: { status: number; body: unknown } | { error: ErrorInfo } | null;
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
