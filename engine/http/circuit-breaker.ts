/**
 * A circuit breaker per source + path (§B.3): closed → open after `failureThreshold` failures
 * within `failureWindow` (or a `failureRate` % over at least `minimumRequests`); open fails fast;
 * after `resetTimeout` it is half-open and admits exactly one probe at a time; `successThreshold`
 * successful probes close it, a failed probe re-opens it.
 *
 * Durations are in milliseconds, as in the original's options (defaults: window 60 000, reset
 * 30 000). Failures are 5xx responses and network errors/timeouts; allowed statuses and other 4xx
 * are neither.
 *
 * Invariants: time comes only from the injected Clock, or from `at` — the instant a replayed
 * attempt was recorded at, so that replaying a run's recorded attempts leaves the breaker as they
 * left it (GUARANTEES 13); memory is bounded (closed circuits with no recent failures are
 * dropped, and at most `maxKeys` circuits are kept).
 */

import type { Clock } from '../env/env.js';

export interface BreakerOptions {
  failureThreshold?: number;
  /** ms */
  resetTimeout?: number;
  successThreshold?: number;
  /** ms */
  failureWindow?: number;
  /** Percent (0–100); when set, replaces the absolute threshold. */
  failureRate?: number;
  minimumRequests?: number;
}

export type CircuitState = 'closed' | 'open' | 'half-open';

export class CircuitOpenError extends Error {
  readonly code = 'circuit-open';
  readonly retryable = true;
  constructor(
    readonly source: string,
    readonly path: string,
    /** Instant (ms since epoch) at which the circuit lets a probe through. */
    readonly halfOpensAt: number,
    now: number,
  ) {
    const secs = Math.max(0, Math.ceil((halfOpensAt - now) / 1000));
    super(
      `circuit breaker for source "${source}" ${path} is open after repeated failures; ` +
        `requests fail fast until it half-opens in ${secs} s (at ${new Date(halfOpensAt).toISOString()})`,
    );
    this.name = 'CircuitOpenError';
  }
}

interface Circuit {
  state: CircuitState;
  failures: number[];
  requests: number[];
  openedAt: number;
  successes: number;
  probeInFlight: boolean;
  lastActivity: number;
}

function resolved(o: BreakerOptions) {
  return {
    failureThreshold: o.failureThreshold ?? 5,
    resetTimeout: o.resetTimeout ?? 30_000,
    successThreshold: o.successThreshold ?? 2,
    failureWindow: o.failureWindow ?? 60_000,
    failureRate: o.failureRate,
    minimumRequests: o.minimumRequests ?? 20,
  };
}

export class CircuitBreaker {
  private readonly circuits = new Map<string, Circuit>();

  constructor(
    private readonly clock: Clock,
    private readonly maxKeys = 1000,
  ) {}

  private static key(source: string, path: string): string {
    return `${source}\u0000${path}`;
  }

  get size(): number {
    return this.circuits.size;
  }

  state(source: string, path: string, options: BreakerOptions = {}): CircuitState {
    const c = this.circuits.get(CircuitBreaker.key(source, path));
    if (!c) return 'closed';
    if (c.state === 'open' && this.clock.now() - c.openedAt >= resolved(options).resetTimeout) return 'half-open';
    return c.state;
  }

  /** Throws `CircuitOpenError` when the request may not go out; otherwise admits it. */
  admit(source: string, path: string, options: BreakerOptions = {}, at?: number): void {
    const c = this.circuits.get(CircuitBreaker.key(source, path));
    if (!c) return;
    const o = resolved(options);
    const now = at ?? this.clock.now();
    c.lastActivity = now;
    if (c.state === 'closed') return;
    if (c.state === 'open') {
      if (now - c.openedAt < o.resetTimeout) throw new CircuitOpenError(source, path, c.openedAt + o.resetTimeout, now);
      c.state = 'half-open';
      c.successes = 0;
      c.probeInFlight = false;
    }
    // half-open: one probe at a time, so a recovering API is not stampeded.
    if (c.probeInFlight) throw new CircuitOpenError(source, path, now, now);
    c.probeInFlight = true;
  }

  recordSuccess(source: string, path: string, options: BreakerOptions = {}, at?: number): void {
    const key = CircuitBreaker.key(source, path);
    const c = this.circuits.get(key);
    if (!c) {
      // The common case, on every successful request: nothing to track unless in rate mode,
      // where successes of an untracked circuit are the denominator.
      if (options.failureRate !== undefined) {
        const now = at ?? this.clock.now();
        this.create(key, now).requests.push(now);
      }
      return;
    }
    const o = resolved(options);
    const now = at ?? this.clock.now();
    c.lastActivity = now;
    if (c.state === 'half-open') {
      c.probeInFlight = false;
      c.successes += 1;
      if (c.successes >= o.successThreshold) {
        this.circuits.delete(key);
      }
      return;
    }
    if (c.state === 'closed') {
      this.prune(c, o.failureWindow, now);
      if (o.failureRate !== undefined) c.requests.push(now);
      if (c.failures.length === 0 && o.failureRate === undefined) this.circuits.delete(key);
    }
  }

  /** Releases a half-open probe whose outcome is neither success nor failure (an allowed 4xx). */
  recordNeutral(source: string, path: string): void {
    const c = this.circuits.get(CircuitBreaker.key(source, path));
    if (c?.state === 'half-open') c.probeInFlight = false;
  }

  recordFailure(source: string, path: string, options: BreakerOptions = {}, at?: number): void {
    const key = CircuitBreaker.key(source, path);
    const o = resolved(options);
    const now = at ?? this.clock.now();
    const c = this.circuits.get(key) ?? this.create(key, now);
    c.lastActivity = now;
    if (c.state === 'half-open') {
      this.open(c, now);
      return;
    }
    if (c.state === 'open') return;
    this.prune(c, o.failureWindow, now);
    c.failures.push(now);
    c.requests.push(now);
    if (o.failureRate !== undefined) {
      if (c.requests.length >= o.minimumRequests && (c.failures.length / c.requests.length) * 100 >= o.failureRate) {
        this.open(c, now);
      }
    } else if (c.failures.length >= o.failureThreshold) {
      this.open(c, now);
    }
  }

  private open(c: Circuit, now: number): void {
    c.state = 'open';
    c.openedAt = now;
    c.successes = 0;
    c.probeInFlight = false;
    c.failures = [];
    c.requests = [];
  }

  private prune(c: Circuit, window: number, now: number): void {
    const cutoff = now - window;
    c.failures = c.failures.filter((t) => t > cutoff);
    c.requests = c.requests.filter((t) => t > cutoff);
  }

  private create(key: string, now: number): Circuit {
    const c: Circuit = { state: 'closed', failures: [], requests: [], openedAt: 0, successes: 0, probeInFlight: false, lastActivity: now };
    this.circuits.set(key, c);
    if (this.circuits.size > this.maxKeys) this.evict();
    return c;
  }

  /** Drops closed circuits first (oldest activity first); open ones only if still over the cap. */
  private evict(): void {
    const closed = [...this.circuits.entries()].filter(([, c]) => c.state === 'closed').sort((a, b) => a[1].lastActivity - b[1].lastActivity);
    for (const [key] of closed) {
      if (this.circuits.size <= this.maxKeys) return;
      this.circuits.delete(key);
    }
    for (const [key] of this.circuits) {
      if (this.circuits.size <= this.maxKeys) return;
      this.circuits.delete(key);
    }
  }
}
