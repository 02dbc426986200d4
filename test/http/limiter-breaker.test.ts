import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../engine/env/fake-env.js';
import { CircuitBreaker, CircuitOpenError } from '../../engine/http/circuit-breaker.js';
import { RateLimiter, RateLimitError } from '../../engine/http/rate-limiter.js';

describe('rate limiter', () => {
  it('pause: waits until the reset when the budget is exhausted', async () => {
    const clock = new FakeClock(0);
    const rl = new RateLimiter(clock);
    await rl.acquire('Api:/x');
    rl.observe('Api:/x', 200, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '30' });
    let done = false;
    const p = rl.acquire('Api:/x', { strategy: 'pause' }).then(() => (done = true));
    await clock.advance(29_999);
    expect(done).toBe(false);
    await clock.advance(1);
    await p;
    expect(done).toBe(true);
    expect(clock.now()).toBe(30_000);
  });

  it('pause: gives up when the wait exceeds maxWait', async () => {
    const clock = new FakeClock(0, { autoAdvance: true });
    const rl = new RateLimiter(clock);
    rl.observe('k', 200, { 'ratelimit-remaining': '0', 'ratelimit-reset': '600' });
    await expect(rl.acquire('k', { strategy: 'pause', maxWait: 300 })).rejects.toThrow(/would exceed maxWait 300 s/);
    expect(clock.sleeps).toEqual([]);
  });

  it('reset given as epoch seconds is understood', async () => {
    const clock = new FakeClock(1_700_000_000_000, { autoAdvance: true });
    const rl = new RateLimiter(clock);
    rl.observe('k', 200, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(1_700_000_000 + 5) });
    await rl.acquire('k');
    expect(clock.sleeps).toEqual([5000]);
  });

  it('reads Retry-After as the retry does: a value sent twice is its first', async () => {
    const clock = new FakeClock(0);
    const rl = new RateLimiter(clock);
    rl.observe('k', 429, { 'retry-after': '10, 10' });
    const err = await rl.acquire('k', { strategy: 'fail' }).catch((e: unknown) => e);
    expect((err as RateLimitError).waitMs).toBe(10_000);
  });

  it('fail: throws RateLimitError instead of waiting', async () => {
    const clock = new FakeClock(0);
    const rl = new RateLimiter(clock);
    rl.observe('k', 429, { 'retry-after': '10' });
    const err = await rl.acquire('k', { strategy: 'fail' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).waitMs).toBe(10_000);
    expect(String(err)).toMatch(/strategy: fail/);
  });

  it('throttle: spaces requests at fallbackRpm only when the API sends no headers', async () => {
    const clock = new FakeClock(0, { autoAdvance: true });
    const rl = new RateLimiter(clock);
    for (let i = 0; i < 3; i++) await rl.acquire('k', { strategy: 'throttle', fallbackRpm: 120 });
    expect(clock.sleeps).toEqual([500, 500]);
    // pause strategy never uses the fallback rate
    const c2 = new FakeClock(0, { autoAdvance: true });
    const rl2 = new RateLimiter(c2);
    for (let i = 0; i < 3; i++) await rl2.acquire('k', { strategy: 'pause', fallbackRpm: 1 });
    expect(c2.sleeps).toEqual([]);
  });

  it('throttle: spreads the remaining budget over the window when headers are known', async () => {
    const clock = new FakeClock(0, { autoAdvance: true });
    const rl = new RateLimiter(clock);
    rl.observe('k', 200, { 'x-ratelimit-remaining': '4', 'x-ratelimit-reset': '10' });
    await rl.acquire('k', { strategy: 'throttle' });
    await rl.acquire('k', { strategy: 'throttle' });
    // 10 s over (3 left + 1) → 2.5 s between requests.
    expect(clock.sleeps).toEqual([2500]);
  });

  it('counts admitted requests against the known budget (no stampede on the last slot)', async () => {
    const clock = new FakeClock(0, { autoAdvance: true });
    const rl = new RateLimiter(clock);
    rl.observe('k', 200, { 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': '20' });
    await rl.acquire('k', { strategy: 'fail' });
    await expect(rl.acquire('k', { strategy: 'fail' })).rejects.toBeInstanceOf(RateLimitError);
  });

  it('token bucket: bursts to capacity, then paces at refill·safety, and halves after a 429', async () => {
    const clock = new FakeClock(0, { autoAdvance: true });
    const rl = new RateLimiter(clock);
    const opts = { model: { capacity: 2, refill: 10, safety: 1 } };
    for (let i = 0; i < 3; i++) await rl.acquire('k', opts);
    expect(clock.sleeps).toEqual([100]);
    rl.observe('k', 429, {}, opts);
    await rl.acquire('k', opts);
    // Bucket emptied, rate 5/s → 200 ms for one token.
    expect(clock.sleeps).toEqual([100, 200]);
  });

  it('keeps memory bounded', async () => {
    const clock = new FakeClock(0);
    const rl = new RateLimiter(clock, { maxKeys: 10 });
    for (let i = 0; i < 100; i++) await rl.acquire(`k${i}`);
    expect(rl.size).toBeLessThanOrEqual(10);
  });
});

describe('circuit breaker', () => {
  const opts = { failureThreshold: 3, failureWindow: 60_000, resetTimeout: 30_000, successThreshold: 2 };

  it('opens after the threshold within the window and fails fast naming the source', () => {
    const clock = new FakeClock(0);
    const cb = new CircuitBreaker(clock);
    for (let i = 0; i < 3; i++) {
      cb.admit('Api', '/x', opts);
      cb.recordFailure('Api', '/x', opts);
    }
    expect(cb.state('Api', '/x', opts)).toBe('open');
    const err = (() => {
      try {
        cb.admit('Api', '/x', opts);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(CircuitOpenError);
    expect(String(err)).toMatch(/source "Api" \/x is open.*half-opens in 30 s/);
    // Another path of the same source is independent.
    expect(() => cb.admit('Api', '/y', opts)).not.toThrow();
  });

  it('does not open when failures fall outside the window', async () => {
    const clock = new FakeClock(0);
    const cb = new CircuitBreaker(clock);
    for (let i = 0; i < 5; i++) {
      cb.recordFailure('Api', '/x', opts);
      await clock.advance(31_000);
    }
    expect(cb.state('Api', '/x', opts)).toBe('closed');
  });

  it('half-opens after resetTimeout with a single probe; successThreshold successes close it', async () => {
    const clock = new FakeClock(0);
    const cb = new CircuitBreaker(clock);
    for (let i = 0; i < 3; i++) cb.recordFailure('Api', '/x', opts);
    await clock.advance(30_000);
    expect(cb.state('Api', '/x', opts)).toBe('half-open');
    cb.admit('Api', '/x', opts);
    expect(() => cb.admit('Api', '/x', opts)).toThrow(CircuitOpenError);
    cb.recordSuccess('Api', '/x', opts);
    cb.admit('Api', '/x', opts);
    cb.recordSuccess('Api', '/x', opts);
    expect(cb.state('Api', '/x', opts)).toBe('closed');
    expect(cb.size).toBe(0);
  });

  it('a failed probe re-opens it for another resetTimeout', async () => {
    const clock = new FakeClock(0);
    const cb = new CircuitBreaker(clock);
    for (let i = 0; i < 3; i++) cb.recordFailure('Api', '/x', opts);
    await clock.advance(30_000);
    cb.admit('Api', '/x', opts);
    cb.recordFailure('Api', '/x', opts);
    expect(cb.state('Api', '/x', opts)).toBe('open');
    await clock.advance(29_999);
    expect(() => cb.admit('Api', '/x', opts)).toThrow(CircuitOpenError);
    await clock.advance(1);
    expect(() => cb.admit('Api', '/x', opts)).not.toThrow();
  });

  it('failureRate mode needs minimumRequests before opening', () => {
    const clock = new FakeClock(0);
    const cb = new CircuitBreaker(clock);
    const rate = { failureRate: 50, minimumRequests: 10 };
    for (let i = 0; i < 5; i++) cb.recordFailure('Api', '/x', rate);
    expect(cb.state('Api', '/x', rate)).toBe('closed');
    for (let i = 0; i < 4; i++) cb.recordSuccess('Api', '/x', rate);
    cb.recordFailure('Api', '/x', rate);
    // 6 failures of 10 requests = 60 % ≥ 50 %
    expect(cb.state('Api', '/x', rate)).toBe('open');
  });

  it('keeps memory bounded', () => {
    const cb = new CircuitBreaker(new FakeClock(0), 20);
    for (let i = 0; i < 200; i++) cb.recordFailure('Api', `/p${i}`, opts);
    expect(cb.size).toBeLessThanOrEqual(20);
  });
});
