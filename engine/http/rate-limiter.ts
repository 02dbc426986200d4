/**
 * Client-side rate limiting per source + endpoint key (§B.3).
 *
 * Reads what the API says (`X-RateLimit-Remaining/Reset`, `RateLimit-Remaining/Reset`,
 * `Retry-After`) and, before each request, either waits (`pause`: until the reset, at most
 * `maxWait` s), spaces requests evenly (`throttle`; at `fallbackRpm` only when the API sends no
 * headers), or refuses (`fail`). An optional token bucket (`model`) paces requests locally and
 * halves its rate after a 429.
 *
 * Invariants: all waiting goes through the injected Clock; every request is counted against the
 * known remaining budget when it is admitted (so concurrent requests cannot all spend the last
 * slot); memory is bounded — idle keys are evicted and the map never exceeds `maxKeys`.
 */

import type { Clock } from '../env/env.js';
import { parseRetryAfter } from './retry-policy.js';

export type RateLimitStrategy = 'pause' | 'throttle' | 'fail';

export interface TokenBucketModel {
  /** Burst size. */
  capacity: number;
  /** Tokens added per second. */
  refill: number;
  /** Fraction of `refill` actually used (default 0.9): stay under the server's limit. */
  safety?: number;
}

export interface RateLimitOptions {
  strategy?: RateLimitStrategy;
  /** Longest wait in seconds before giving up (default 300). */
  maxWait?: number;
  /** Requests per minute for `throttle` when the API sends no rate-limit headers (default 60). */
  fallbackRpm?: number;
  model?: TokenBucketModel;
}

export class RateLimitError extends Error {
  readonly code = 'rate-limited';
  readonly retryable = true;
  constructor(
    readonly key: string,
    readonly waitMs: number,
    message: string,
  ) {
    super(message);
    this.name = 'RateLimitError';
  }
}

interface KeyState {
  remaining?: number;
  resetAt?: number;
  blockedUntil?: number;
  headersSeen: boolean;
  nextSlotAt: number;
  tokens?: number;
  tokensAt?: number;
  /** Multiplier on the bucket's refill rate; halves after a 429, recovers on successes. */
  rateFactor: number;
  lastUsed: number;
}

export interface RateLimiterOptions {
  maxKeys?: number;
  /** Keys untouched this long (ms) and with nothing pending are dropped. */
  idleMs?: number;
}

/** Reset header values: small numbers are seconds from now; large ones are epoch seconds or ms. */
function parseReset(value: string | undefined, now: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value.trim());
  if (!Number.isFinite(n) || n < 0) return undefined;
  if (n > 1e12) return n;
  if (n > 1e9) return n * 1000;
  return now + n * 1000;
}

function parseCount(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number.parseInt(value.trim(), 10);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** The error refusing a `wait` (`fail`: any; else past maxWait), said as `totalMs` from now; undefined when it may be waited. */
function refusal(key: string, options: RateLimitOptions, wait: { ms: number; why: string }, totalMs: number): RateLimitError | undefined {
  if ((options.strategy ?? 'pause') === 'fail') {
    return new RateLimitError(key, totalMs, `rate limit for "${key}" ${wait.why}; next request allowed in ${Math.ceil(totalMs / 1000)} s (strategy: fail)`);
  }
  const maxWaitMs = (options.maxWait ?? 300) * 1000;
  if (wait.ms <= maxWaitMs) return undefined;
  return new RateLimitError(key, totalMs, `rate limit for "${key}" ${wait.why}; waiting ${Math.ceil(totalMs / 1000)} s would exceed maxWait ${maxWaitMs / 1000} s`);
}

/** `waitFor`'s answer when a request may go now (shared: asked on every request). */
const NO_WAIT: { readonly ms: number; readonly why: string } = Object.freeze({ ms: 0, why: '' });

export class RateLimiter {
  private readonly keys = new Map<string, KeyState>();
  private readonly maxKeys: number;
  private readonly idleMs: number;
  private admissions = 0;
  /** The key inserted last into `keys` (its most recent entry), or undefined. */
  private newest: string | undefined;

  constructor(
    private readonly clock: Clock,
    options: RateLimiterOptions = {},
  ) {
    this.maxKeys = options.maxKeys ?? 1000;
    this.idleMs = options.idleMs ?? 10 * 60_000;
  }

  get size(): number {
    return this.keys.size;
  }

  /**
   * Admits and counts a request under `key` when it may go at once; false (nothing counted) when
   * it would have to wait or be refused, and `acquire` must decide. Lets the usual request skip
   * an async call.
   */
  tryAcquire(key: string, options: RateLimitOptions = {}): boolean {
    const now = this.clock.now();
    const st = this.state(key, now);
    if (this.waitFor(st, options, now).ms > 0) return false;
    this.admit(st, options, options.strategy ?? 'pause', now);
    return true;
  }

  /** Waits (or throws `RateLimitError`) until a request under `key` may be sent, and counts it. */
  async acquire(key: string, options: RateLimitOptions = {}, signal?: AbortSignal): Promise<void> {
    const strategy = options.strategy ?? 'pause';
    let now = this.clock.now();
    const st = this.state(key, now);
    // Re-evaluate after every sleep: other requests may have been admitted meanwhile.
    for (;; now = this.clock.now()) {
      const wait = this.waitFor(st, options, now);
      if (wait.ms <= 0) break;
      const refused = refusal(key, options, wait, wait.ms);
      if (refused) throw refused;
      await this.clock.sleep(wait.ms, signal);
    }
    this.admit(st, options, strategy, now);
  }

  /**
   * Throws what `acquire` would for a request due at `at` (a retry after its delay): a
   * Retry-After past maxWait fails now, not after the retry slept its capped delay for nothing.
   */
  refuseAt(key: string, options: RateLimitOptions = {}, at: number): void {
    const st = this.keys.get(key);
    if (st === undefined) return;
    // `fail` waits for no limit: a Retry-After the retry's delay would sleep out (up to its
    // maxDelay) refuses now, as the same wait told by x-ratelimit-reset does (probe 109 K1).
    if (options.strategy === 'fail') {
      const now = this.clock.now();
      const whole = this.waitFor(st, options, now);
      const refused = whole.ms > 0 ? refusal(key, options, whole, whole.ms) : undefined;
      if (refused) throw refused;
    }
    const wait = this.waitFor(st, options, at);
    const refused = wait.ms > 0 ? refusal(key, options, wait, wait.ms + Math.max(0, at - this.clock.now())) : undefined;
    if (refused) throw refused;
  }

  /**
   * Learns from a response's status and headers (lower-cased names). `at`: the instant a replayed
   * answer was recorded at (live: now), so a resume knows the window and Retry-After it was told.
   */
  observe(key: string, status: number, headers: Record<string, string>, options: RateLimitOptions = {}, at?: number): void {
    const now = at ?? this.clock.now();
    const st = this.state(key, now);
    const remaining = parseCount(headers['x-ratelimit-remaining'] ?? headers['ratelimit-remaining']);
    const resetAt = parseReset(headers['x-ratelimit-reset'] ?? headers['ratelimit-reset'], now);
    if (remaining !== undefined) {
      st.remaining = remaining;
      st.headersSeen = true;
    }
    if (resetAt !== undefined) {
      st.resetAt = resetAt;
      st.headersSeen = true;
    }
    if (status === 429 || status === 503) {
      const ms = parseRetryAfter(headers['retry-after'], now);
      if (ms !== undefined && ms > 0) st.blockedUntil = Math.max(st.blockedUntil ?? 0, now + ms);
    }
    if (options.model) {
      if (status === 429) {
        st.rateFactor = Math.max(0.05, st.rateFactor / 2);
        st.tokens = 0;
        st.tokensAt = now;
      } else if (status < 400) {
        st.rateFactor = Math.min(1, st.rateFactor + 0.05);
      }
    }
  }

  private waitFor(st: KeyState, options: RateLimitOptions, now: number): { ms: number; why: string } {
    if (st.blockedUntil !== undefined && st.blockedUntil > now) {
      return { ms: st.blockedUntil - now, why: 'was hit (Retry-After)' };
    }
    if (st.remaining !== undefined && st.remaining <= 0 && st.resetAt !== undefined && st.resetAt > now) {
      return { ms: st.resetAt - now, why: 'is exhausted (0 remaining)' };
    }
    if (options.model) {
      const tokens = this.tokens(st, options.model, now);
      if (tokens < 1) {
        return { ms: Math.ceil(((1 - tokens) / this.rate(st, options.model)) * 1000), why: 'is at its local token-bucket pace' };
      }
    }
    if ((options.strategy ?? 'pause') === 'throttle' && st.nextSlotAt > now) {
      return { ms: st.nextSlotAt - now, why: 'is being throttled' };
    }
    return NO_WAIT;
  }

  private admit(st: KeyState, options: RateLimitOptions, strategy: RateLimitStrategy, now: number): void {
    st.lastUsed = now;
    if (st.remaining !== undefined) {
      if (st.resetAt !== undefined && st.resetAt <= now) {
        // The window has reset: the old count says nothing about the new window.
        st.remaining = undefined;
        st.resetAt = undefined;
      } else {
        st.remaining = Math.max(0, st.remaining - 1);
      }
    }
    if (options.model) {
      st.tokens = this.tokens(st, options.model, now) - 1;
      st.tokensAt = now;
    }
    if (strategy === 'throttle') {
      let interval: number;
      if (st.headersSeen && st.remaining !== undefined && st.resetAt !== undefined && st.resetAt > now) {
        interval = (st.resetAt - now) / Math.max(1, st.remaining + 1);
      } else if (st.headersSeen) {
        interval = 0;
      } else {
        const rpm = options.fallbackRpm ?? 60;
        if (!(rpm > 0)) throw new RangeError(`rateLimit fallbackRpm must be > 0, got ${rpm}`);
        interval = 60_000 / rpm;
      }
      st.nextSlotAt = now + Math.ceil(interval);
    }
  }

  private rate(st: KeyState, model: TokenBucketModel): number {
    if (!(model.refill > 0) || !(model.capacity >= 1)) {
      throw new RangeError(`rateLimit model needs capacity >= 1 and refill > 0 (got ${model.capacity}, ${model.refill})`);
    }
    return model.refill * (model.safety ?? 0.9) * st.rateFactor;
  }

  private tokens(st: KeyState, model: TokenBucketModel, now: number): number {
    const rate = this.rate(st, model);
    if (st.tokens === undefined || st.tokensAt === undefined) return model.capacity;
    return Math.min(model.capacity, st.tokens + ((now - st.tokensAt) / 1000) * rate);
  }

  private state(key: string, now: number): KeyState {
    let st = this.keys.get(key);
    if (st && key === this.newest) {
      // Already the most recent entry (the usual case: one endpoint asked request after request),
      // so re-inserting it would not change the order.
      st.lastUsed = now;
    } else {
      if (st) {
        // Re-insert to keep the map ordered by recency (oldest first) for eviction.
        this.keys.delete(key);
      } else {
        st = { headersSeen: false, nextSlotAt: 0, rateFactor: 1, lastUsed: now };
      }
      st.lastUsed = now;
      this.keys.set(key, st);
      this.newest = key;
    }
    if (++this.admissions % 64 === 0) this.evictIdle(now);
    while (this.keys.size > this.maxKeys) {
      const oldest = this.keys.keys().next().value as string;
      this.keys.delete(oldest);
    }
    return st;
  }

  private evictIdle(now: number): void {
    for (const [key, st] of this.keys) {
      const pending = (st.blockedUntil ?? 0) > now || (st.resetAt ?? 0) > now || st.nextSlotAt > now;
      if (!pending && now - st.lastUsed > this.idleMs) this.keys.delete(key);
    }
  }
}
