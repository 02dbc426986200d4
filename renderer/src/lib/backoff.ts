/**
 * Reconnect delays for the push socket: exponential from `baseMs`, capped at `maxMs`.
 * Deterministic (no jitter): one studio talks to one local server, so there is no herd to spread.
 */
export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 250, maxMs: 8000 };

/** Delay before reconnect attempt number `attempt` (0 for the first retry). */
export function backoffDelay(attempt: number, options: BackoffOptions = DEFAULT_BACKOFF): number {
  if (!Number.isInteger(attempt) || attempt < 0) {
    throw new RangeError(`backoff attempt must be a non-negative integer, got: ${attempt}`);
  }
  // 2 ** 31 overflows nothing here, but cap the exponent so huge attempt counts stay finite.
  const exp = Math.min(attempt, 30);
  return Math.min(options.maxMs, options.baseMs * 2 ** exp);
}
