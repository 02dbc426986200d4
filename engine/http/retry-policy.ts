/**
 * What to do after one HTTP attempt, decided once, as data (§C.1.4, STYLE.md item 7).
 *
 * `classifyAttempt` maps an attempt's outcome to success / allowed / retry (with its delay) /
 * refresh-auth / fail. Invariants: an allowed status is never retried; a request with side
 * effects (POST/PUT/PATCH/DELETE) is retried only when it carries an Idempotency-Key, because
 * without one a retry may apply the effect twice; every delay is capped at `maxDelay`, including
 * a server's `Retry-After`.
 */

import type { TransportErrorCode } from '../env/env.js';
import type { RetryConfig } from '../lang/ast.js';

export type Backoff = 'exponential' | 'linear' | 'constant';

export interface RetryPolicy {
  /** Total attempts, the first included. */
  maxAttempts: number;
  backoff: Backoff;
  initialDelay: number;
  maxDelay: number;
  /** Per-attempt timeout (ms), when the mission sets one. */
  timeout?: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 3, backoff: 'exponential', initialDelay: 1000, maxDelay: 30_000 };

export function resolveRetryPolicy(config?: Partial<Pick<RetryConfig, 'maxAttempts' | 'backoff' | 'initialDelay' | 'maxDelay' | 'delay' | 'timeout'>>): RetryPolicy {
  // `delay: N` (a fixed delay): constant backoff of N ms, which the default maxDelay does not cap.
  const delay = config?.delay;
  const p: RetryPolicy = {
    maxAttempts: config?.maxAttempts ?? DEFAULT_RETRY.maxAttempts,
    backoff: delay !== undefined ? 'constant' : (config?.backoff ?? DEFAULT_RETRY.backoff),
    initialDelay: delay ?? config?.initialDelay ?? DEFAULT_RETRY.initialDelay,
    maxDelay: config?.maxDelay ?? (delay !== undefined ? Math.max(delay, DEFAULT_RETRY.maxDelay) : DEFAULT_RETRY.maxDelay),
  };
  if (config?.timeout !== undefined) p.timeout = config.timeout;
  if (!Number.isInteger(p.maxAttempts) || p.maxAttempts < 1) throw new RangeError(`retry maxAttempts must be an integer >= 1, got ${p.maxAttempts}`);
  for (const key of ['initialDelay', 'maxDelay'] as const) {
    if (!Number.isFinite(p[key]) || p[key] < 0) throw new RangeError(`retry ${key} must be a number of ms >= 0, got ${p[key]}`);
  }
  if (p.timeout !== undefined && (!Number.isFinite(p.timeout) || p.timeout <= 0)) {
    throw new RangeError(`retry timeout must be a number of ms > 0, got ${p.timeout}`);
  }
  return p;
}

/**
 * Delay before the attempt after attempt `n` (1-based): exponential initial·2^(n-1), linear
 * initial·n, constant initial; then ±10 % jitter from `random01` ∈ [0,1); capped at maxDelay.
 */
export function backoffDelay(policy: RetryPolicy, n: number, random01: number): number {
  let base: number;
  switch (policy.backoff) {
    case 'exponential':
      base = policy.initialDelay * 2 ** (n - 1);
      break;
    case 'linear':
      base = policy.initialDelay * n;
      break;
    case 'constant':
      base = policy.initialDelay;
      break;
    default: {
      const never: never = policy.backoff;
      throw new Error(`unknown backoff ${String(never)}`);
    }
  }
  const jittered = base * (1 + (random01 * 2 - 1) * 0.1);
  return Math.max(0, Math.round(Math.min(jittered, policy.maxDelay)));
}

/**
 * `Retry-After` as ms from `now`: delta seconds or an HTTP-date; undefined when absent or
 * unreadable. Sent twice (a gateway's and the API's), it arrives joined (`5, 5`): the first counts.
 * The one reading for the retry's delay and the rate limiter's block.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  const seconds = /^(\d+(?:\.\d+)?)\s*(?:,|$)/.exec(v);
  if (seconds) return Math.round(Number(seconds[1]) * 1000);
  // Every HTTP-date form starts with a day name. Date.parse guesses at any other text ("-5" and
  // "1, 1" are dates in 2001, long past), which made the retry go at once.
  if (!/^(mon|tue|wed|thu|fri|sat|sun)/i.test(v)) return undefined;
  const gmt = v.indexOf('GMT');
  const at = Date.parse(gmt >= 0 ? v.slice(0, gmt + 3) : v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

export type FetchErrorCode =
  | 'http-status'
  | 'network'
  | 'timeout'
  | 'aborted'
  | 'not-idempotent'
  | 'invalid-body'
  | 'too-large'
  | 'unrecordable'
  | 'auth-refresh';

export type AttemptOutcome =
  | { kind: 'transport'; code: TransportErrorCode; message: string }
  | { kind: 'response'; status: number; headers: Record<string, string> };

export type Decision =
  | { kind: 'success' }
  | { kind: 'allowed' }
  | { kind: 'retry'; delayMs: number; reason: string }
  | { kind: 'refresh-auth' }
  | { kind: 'fail'; code: FetchErrorCode; retryable: boolean; reason: string; note?: string };

export interface ClassifyInput {
  method: string;
  outcome: AttemptOutcome;
  /** 1-based number of the attempt that just finished. */
  attempt: number;
  policy: RetryPolicy;
  allow: readonly number[];
  hasIdempotencyKey: boolean;
  /** True when credentials can be refreshed and no refresh was tried yet for this request. */
  canRefresh: boolean;
  now: number;
  random01: number;
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A status a request is tried again after (within its policy's attempts): 429 and every 5xx. */
export function isRetriedStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

export function classifyAttempt(input: ClassifyInput): Decision {
  const { outcome, policy } = input;
  let reason: string;
  let code: FetchErrorCode;
  let retryAfter: number | undefined;
  switch (outcome.kind) {
    case 'transport':
      if (outcome.code === 'aborted') return { kind: 'fail', code: 'aborted', retryable: false, reason: 'aborted' };
      // The same server sends the same body again: a retry cannot make it fit.
      if (outcome.code === 'too-large') return { kind: 'fail', code: 'too-large', retryable: false, reason: outcome.message };
      code = outcome.code;
      reason = outcome.code === 'timeout' ? 'timed out' : 'network error';
      break;
    case 'response': {
      const s = outcome.status;
      if (s >= 200 && s < 300) return { kind: 'success' };
      if (input.allow.includes(s)) return { kind: 'allowed' };
      if (s === 401 && input.canRefresh) return { kind: 'refresh-auth' };
      if (!isRetriedStatus(s)) {
        return { kind: 'fail', code: 'http-status', retryable: false, reason: `failed with ${s}` };
      }
      code = 'http-status';
      reason = `failed with ${s}`;
      retryAfter = parseRetryAfter(outcome.headers['retry-after'], input.now);
      break;
    }
    default: {
      const never: never = outcome;
      throw new Error(`unknown outcome ${JSON.stringify(never)}`);
    }
  }
  if (input.attempt >= policy.maxAttempts) return { kind: 'fail', code, retryable: true, reason };
  const method = input.method.toUpperCase();
  if (UNSAFE.has(method) && !input.hasIdempotencyKey) {
    return {
      kind: 'fail',
      code: 'not-idempotent',
      retryable: false,
      reason,
      note: `not retried: a ${method} is retried only when it carries an Idempotency-Key header, since a retry could apply it twice`,
    };
  }
  const delayMs =
    retryAfter !== undefined
      ? Math.min(retryAfter, policy.maxDelay)
      : backoffDelay(policy, input.attempt, input.random01);
  return { kind: 'retry', delayMs, reason };
}

export class FetchError extends Error {
  readonly status?: number;
  readonly code: FetchErrorCode;
  readonly retryable: boolean;
  readonly attempts: number;
  /** The final response (redacted), when there was one: lets a mission `match` on it. */
  readonly response?: { status: number; headers: Record<string, string>; body: unknown };

  constructor(init: {
    message: string;
    code: FetchErrorCode;
    retryable: boolean;
    attempts: number;
    status?: number;
    response?: { status: number; headers: Record<string, string>; body: unknown };
  }) {
    super(init.message);
    this.name = 'FetchError';
    this.code = init.code;
    this.retryable = init.retryable;
    this.attempts = init.attempts;
    if (init.status !== undefined) this.status = init.status;
    if (init.response !== undefined) this.response = init.response;
  }
}

/** `GET http://…/items?offset=2 failed with 503 after 2 attempts`. */
export function failureMessage(method: string, url: string, reason: string, attempts: number, note?: string): string {
  return `${method} ${url} ${reason} after ${attempts} attempt${attempts === 1 ? '' : 's'}${note ? `; ${note}` : ''}`;
}
