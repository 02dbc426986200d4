/**
 * The per-request shortcuts of the HTTP layer keep the behaviour they replace: the one-object
 * header merge equals the generic case-insensitive merge, redaction asks for the secret list once
 * per recording and copies only what it must, auth material is built once per set of credentials,
 * the limiter's "already newest" shortcut keeps its eviction order, resolved retry policies are
 * shared but bad ones still fail every time, and pooled randomness is still fresh on every draw.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFakeEnv, FakeClock, jsonResponse } from '../../engine/env/fake-env.js';
import { CryptoRandom } from '../../engine/env/real-env.js';
import { AuthSession } from '../../engine/http/auth.js';
import { executeRequest, type RequestSpec } from '../../engine/http/client.js';
import { createRedactor, REDACTED } from '../../engine/http/redact.js';
import { RateLimitError, RateLimiter } from '../../engine/http/rate-limiter.js';
import { mergeHeaders } from '../../engine/http/request-builder.js';

/** The merge as first written: a Map by lower-cased name; a later layer replaces name and value. */
function referenceMerge(...layers: (Record<string, string> | undefined)[]): Record<string, string> {
  const byLower = new Map<string, [string, string]>();
  for (const layer of layers) {
    if (!layer) continue;
    for (const [name, value] of Object.entries(layer)) byLower.set(name.toLowerCase(), [name, value]);
  }
  return Object.fromEntries(byLower.values());
}

describe('mergeHeaders', () => {
  it('equals the reference merge, key order included, for random layers with clashing spellings', () => {
    const name = fc.constantFrom('Accept', 'accept', 'ACCEPT', 'Content-Type', 'content-type', 'X-A', 'x-a', 'Idempotency-Key', '__proto__', '7');
    const layer = fc.option(fc.dictionary(name, fc.string({ maxLength: 4 }), { maxKeys: 4 }), { nil: undefined });
    fc.assert(
      fc.property(fc.array(layer, { maxLength: 5 }), (layers) => {
        const got = mergeHeaders(...layers);
        const want = referenceMerge(...layers);
        expect(Object.keys(got)).toEqual(Object.keys(want));
        for (const key of Object.keys(want)) expect(Object.getOwnPropertyDescriptor(got, key)?.value).toBe(want[key]);
        expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps the first position and takes the last spelling', () => {
    const merged = mergeHeaders({ 'Content-Type': 'application/json', Accept: 'application/json' }, { accept: 'text/csv' }, { 'X-Id': '1' });
    expect(Object.entries(merged)).toEqual([
      ['Content-Type', 'application/json'],
      ['accept', 'text/csv'],
      ['X-Id', '1'],
    ]);
  });
});

describe('redactor on the hot path', () => {
  it('asks the live secret list once per recorded request and once per recorded response', () => {
    let asked = 0;
    const r = createRedactor(() => {
      asked++;
      return ['s3cr3t-long'];
    });
    const rec = r.request({
      method: 'GET',
      url: 'http://h.test/x?token=1&q=s3cr3t-long',
      headers: { A: 's3cr3t-long', B: '2', C: '3', Authorization: 'Bearer s3cr3t-long' },
      body: { v: 's3cr3t-long' },
    });
    expect(asked).toBe(1);
    expect(JSON.stringify(rec)).not.toContain('s3cr3t-long');
    r.response({ status: 200, headers: { 'x-a': 's3cr3t-long', 'x-b': '1', 'set-cookie': 'c' }, body: ['s3cr3t-long'] });
    expect(asked).toBe(2);
  });

  it('records a response body as is when there is no secret, and a redacted copy when there is', () => {
    const body = { items: [{ id: 1, name: 'a' }], next: 'cursor' };
    expect(createRedactor([]).response({ status: 200, headers: {}, body }).recorded.body).toBe(body);
    const withSecret = { items: [{ id: 1, name: 'has s3cr3t-long' }] };
    const recorded = createRedactor(['s3cr3t-long']).response({ status: 200, headers: {}, body: withSecret }).recorded.body;
    expect(recorded).not.toBe(withSecret);
    expect(recorded).toEqual({ items: [{ id: 1, name: `has ${REDACTED}` }] });
    expect(withSecret.items[0]!.name).toBe('has s3cr3t-long');
  });

  it('always copies a request body (the mission may still hold it)', () => {
    const body = { n: 1 };
    const rec = createRedactor([]).request({ method: 'POST', url: 'http://h.test/', headers: {}, body });
    expect(rec.body).toEqual(body);
    expect(rec.body).not.toBe(body);
  });

  it('a `__proto__` key in a redacted body or header stays an own property, not a prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"x": "s3cr3t-long"}, "y": 1}') as Record<string, unknown>;
    const { recorded } = createRedactor(['s3cr3t-long']).response({ status: 200, headers: JSON.parse('{"__proto__": "h"}') as Record<string, string>, body: parsed });
    const out = recorded.body as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ x: REDACTED });
    expect(Object.getOwnPropertyDescriptor(recorded.headers, '__proto__')?.value).toBe('h');
  });
});

describe('AuthSession material on the hot path', () => {
  it('is built once per set of credentials, frozen, and rebuilt after a refresh', async () => {
    const s = new AuthSession('A', { type: 'oauth2', accessToken: 'old', refreshToken: 'r', tokenEndpoint: 'http://auth.test/token' });
    const first = s.material();
    expect(s.material()).toBe(first);
    expect(Object.isFrozen(first.headers)).toBe(true);
    expect(() => {
      (first.headers as Record<string, string>)['Authorization'] = 'tampered';
    }).toThrow(TypeError);
    const env = createFakeEnv({ handler: () => jsonResponse(200, { access_token: 'new' }) });
    await s.refresh(env.http, 1000);
    expect(s.material()).not.toBe(first);
    expect(s.material().headers).toEqual({ Authorization: 'Bearer new' });
    expect(s.secrets()).toEqual(expect.arrayContaining(['old', 'r', 'new']));
  });
});

describe('rate limiter recency with the "already newest" shortcut', () => {
  /** Marks `key` as blocked for 100 s (a 429 with Retry-After). */
  const block = (rl: RateLimiter, key: string) => rl.observe(key, 429, { 'retry-after': '100' });
  /** True when the limiter still remembers `key`'s block. */
  const remembers = async (rl: RateLimiter, key: string) =>
    rl.acquire(key, { strategy: 'fail' }).then(
      () => false,
      (e: unknown) => {
        if (e instanceof RateLimitError) return true;
        throw e;
      },
    );

  it('evicts the least recently used key: repeated use of the newest does not reorder', async () => {
    const rl = new RateLimiter(new FakeClock(0), { maxKeys: 2 });
    block(rl, 'A');
    block(rl, 'B');
    block(rl, 'B'); // B is already newest
    rl.observe('C', 200, {}); // evicts A, the oldest
    expect(await remembers(rl, 'B')).toBe(true);
    expect(await remembers(rl, 'A')).toBe(false);
  });

  it('a key used again moves to the newest position', async () => {
    const rl = new RateLimiter(new FakeClock(0), { maxKeys: 2 });
    block(rl, 'A');
    block(rl, 'B');
    block(rl, 'A'); // A moves after B
    rl.observe('C', 200, {}); // evicts B
    expect(await remembers(rl, 'A')).toBe(true);
    expect(await remembers(rl, 'B')).toBe(false);
  });

  it('tryAcquire admits and counts when nothing asks to wait, and otherwise leaves the decision to acquire', async () => {
    const clock = new FakeClock(0, { autoAdvance: true });
    const rl = new RateLimiter(clock);
    rl.observe('k', 200, { 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': '60' });
    expect(rl.tryAcquire('k')).toBe(true); // spends the last slot
    expect(rl.tryAcquire('k')).toBe(false); // exhausted until the reset
    expect(clock.sleeps).toEqual([]);
    await rl.acquire('k');
    expect(clock.sleeps).toEqual([60_000]);
  });

  it('executeRequest still waits for an exhausted budget before sending', async () => {
    const env = createFakeEnv({ autoAdvance: true, handler: () => jsonResponse(200, {}, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '30' }) });
    const limiter = new RateLimiter(env.clock);
    const spec: RequestSpec = { source: 'Api', method: 'GET', base: 'http://api.test', path: '/x' };
    await executeRequest(spec, { env, limiter });
    expect(env.clock.sleeps).toEqual([]);
    await executeRequest(spec, { env, limiter });
    expect(env.clock.sleeps).toEqual([30_000]);
    expect(env.http.requests).toHaveLength(2);
  });

  it('idle keys are still dropped while one key is used over and over', async () => {
    const clock = new FakeClock(0);
    const rl = new RateLimiter(clock, { idleMs: 1000 });
    await rl.acquire('old');
    await clock.advance(5000);
    for (let i = 0; i < 200; i++) await rl.acquire('hot');
    expect(rl.size).toBe(1);
  });
});

describe('retry policies resolved once per mission object', () => {
  const spec = (retry: RequestSpec['retry']): RequestSpec => ({ source: 'Api', method: 'GET', base: 'http://api.test', path: '/x', retry });

  it('a bad retry config fails with a clear error on every request, not only the first', async () => {
    const env = createFakeEnv({ handler: () => jsonResponse(200, {}) });
    const bad = { maxAttempts: 0 };
    for (let i = 0; i < 2; i++) await expect(executeRequest(spec(bad), { env })).rejects.toThrow(/maxAttempts must be an integer >= 1, got 0/);
    expect(env.http.requests).toHaveLength(0);
  });

  it('the same config object keeps its meaning on every request', async () => {
    let calls = 0;
    const env = createFakeEnv({ autoAdvance: true, handler: () => (++calls % 2 === 1 ? jsonResponse(503, {}) : jsonResponse(200, { ok: calls })) });
    const retry = { maxAttempts: 2, backoff: 'constant' as const, initialDelay: 7, maxDelay: 100 };
    for (let i = 0; i < 3; i++) {
      const r = await executeRequest(spec(retry), { env });
      expect(r.attempts).toBe(2);
    }
    expect(env.clock.sleeps.map((ms) => ms >= 6 && ms <= 8)).toEqual([true, true, true]);
  });
});

describe('CryptoRandom draws from a pool', () => {
  it('every draw is fresh across many pool refills, uniform-looking and in [0, 1)', () => {
    const r = new CryptoRandom();
    const xs = Array.from({ length: 5000 }, () => r.next());
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    // 5000 draws take 35 000 bytes: several refills of the pool. A pool reused without a refill
    // would repeat values.
    expect(new Set(xs).size).toBe(xs.length);
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.03);
    const ids = Array.from({ length: 3 }, () => r.id('run'));
    expect(new Set(ids).size).toBe(3);
  });
});
