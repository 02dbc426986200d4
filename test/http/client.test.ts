import { describe, expect, it } from 'vitest';
import { TransportError, type HttpRequest, type HttpResponse } from '../../engine/env/env.js';
import { createFakeEnv, jsonResponse } from '../../engine/env/fake-env.js';
import { AuthSession } from '../../engine/http/auth.js';
import { CircuitBreaker, CircuitOpenError } from '../../engine/http/circuit-breaker.js';
import { executeRequest, type AfterAttempt, type BeforeAttempt, type RequestSpec } from '../../engine/http/client.js';
import { FetchError } from '../../engine/http/retry-policy.js';
import { RateLimiter, RateLimitError } from '../../engine/http/rate-limiter.js';

function script(...responses: (HttpResponse | TransportError)[]) {
  let i = 0;
  return (_req: HttpRequest): HttpResponse => {
    const r = responses[Math.min(i++, responses.length - 1)]!;
    if (r instanceof TransportError) throw r;
    return r;
  };
}

function recorder() {
  const before: BeforeAttempt[] = [];
  const after: AfterAttempt[] = [];
  return {
    before,
    after,
    hooks: {
      beforeAttempt: async (b: BeforeAttempt) => void before.push(b),
      afterAttempt: async (a: AfterAttempt) => void after.push(a),
    },
  };
}

const spec = (extra: Partial<RequestSpec> = {}): RequestSpec => ({ source: 'Api', method: 'GET', base: 'http://api.test', path: '/items', ...extra });

describe('executeRequest retries (fake clock)', () => {
  it('retries 5xx with exponential backoff and returns the success', async () => {
    const env = createFakeEnv({ autoAdvance: true, handler: script(jsonResponse(503, {}), jsonResponse(502, {}), jsonResponse(200, { ok: 1 })) });
    const rec = recorder();
    const r = await executeRequest(spec(), { env }, rec.hooks);
    expect(r).toEqual({ status: 200, headers: { 'content-type': 'application/json' }, body: { ok: 1 }, allowed: false, attempts: 3 });
    // SeededRandom jitter is within ±10 % of 1000 and 2000.
    expect(env.clock.sleeps).toHaveLength(2);
    expect(env.clock.sleeps[0]).toBeGreaterThanOrEqual(900);
    expect(env.clock.sleeps[0]).toBeLessThanOrEqual(1100);
    expect(env.clock.sleeps[1]).toBeGreaterThanOrEqual(1800);
    expect(env.clock.sleeps[1]).toBeLessThanOrEqual(2200);
    expect(rec.after.map((a) => [a.attempt, a.verdict, a.retryInMs])).toEqual([
      [1, 'retry', env.clock.sleeps[0]],
      [2, 'retry', env.clock.sleeps[1]],
      [3, 'success', undefined],
    ]);
    expect(rec.before.map((b) => b.attempt)).toEqual([1, 2, 3]);
  });

  it('a final 5xx is a FetchError with status, attempts and a readable message', async () => {
    const env = createFakeEnv({ autoAdvance: true, handler: script(jsonResponse(503, { e: 1 })) });
    const err = (await executeRequest(spec({ retry: { maxAttempts: 2, backoff: 'constant', initialDelay: 10 }, pageQuery: [['offset', '2']] }), { env }).catch(
      (e: unknown) => e,
    )) as FetchError;
    expect(err).toBeInstanceOf(FetchError);
    // What the API answered, on one line, as the log holds it.
    expect(err.message).toBe('GET http://api.test/items?offset=2 failed with 503 after 2 attempts; the API answered: {"e":1}');
    expect(err).toMatchObject({ status: 503, code: 'http-status', retryable: true, attempts: 2 });
    expect(err.response?.body).toEqual({ e: 1 });
    expect(env.clock.sleeps).toEqual([10]);
  });

  it('honours Retry-After in seconds and as an HTTP-date', async () => {
    const env = createFakeEnv({ autoAdvance: true });
    // The date is read when the second response arrives, 3 s after the start.
    const date = new Date(env.clock.now() + 7000).toUTCString();
    env.http.handler = script(jsonResponse(429, {}, { 'Retry-After': '3' }), jsonResponse(503, {}, { 'Retry-After': date }), jsonResponse(200, []));
    await executeRequest(spec(), { env });
    expect(env.clock.sleeps).toEqual([3000, 4000]);
  });

  it('a Retry-After the rate limiter will refuse (past maxWait) fails at once, not after sleeping the capped delay', async () => {
    // Retry-After: 3600 was capped to maxDelay (30 s), slept, and only then did the limiter
    // refuse the retry ("waiting 3570 s would exceed maxWait 300 s"); with a larger maxDelay the
    // run slept that long for nothing.
    const env = createFakeEnv({ autoAdvance: true, handler: script(jsonResponse(429, {}, { 'Retry-After': '3600' }), jsonResponse(200, [])) });
    const limiter = new RateLimiter(env.clock);
    const err = await executeRequest(spec({ retry: { maxDelay: 600_000 } }), { env, limiter }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect(String(err)).toMatch(/waiting 3600 s would exceed maxWait 300 s/);
    expect(env.clock.sleeps).toEqual([]);
    // Within maxWait the retry waits the whole Retry-After, part as its delay, the rest in the limiter.
    const env2 = createFakeEnv({ autoAdvance: true, handler: script(jsonResponse(429, {}, { 'Retry-After': '40' }), jsonResponse(200, [])) });
    await executeRequest(spec(), { env: env2, limiter: new RateLimiter(env2.clock) });
    expect(env2.clock.sleeps).toEqual([30_000, 10_000]);
    // `strategy: fail` waits for no limit: a Retry-After within maxDelay is refused, not slept out as the delay (probe 109 K1).
    const env3 = createFakeEnv({ autoAdvance: true, handler: script(jsonResponse(429, {}, { 'Retry-After': '3' }), jsonResponse(200, [])) });
    const failing = await executeRequest(spec({ rateLimit: { strategy: 'fail' } }), { env: env3, limiter: new RateLimiter(env3.clock) }).catch((e: unknown) => e);
    expect(failing).toBeInstanceOf(RateLimitError);
    expect(String(failing)).toMatch(/next request allowed in 3 s \(strategy: fail\)/);
    expect(env3.clock.sleeps).toEqual([]);
  });

  it('retries timeouts and network errors, then reports the last one', async () => {
    const env = createFakeEnv({
      autoAdvance: true,
      handler: script(new TransportError('x', 'timeout'), new TransportError('GET http://api.test/items failed: ECONNRESET: boom', 'network')),
    });
    const rec = recorder();
    const err = (await executeRequest(spec({ retry: { maxAttempts: 2, initialDelay: 1 } }), { env }, rec.hooks).catch((e: unknown) => e)) as FetchError;
    expect(err.message).toBe('GET http://api.test/items failed (ECONNRESET: boom) after 2 attempts');
    expect(err).toMatchObject({ code: 'network', retryable: true });
    expect(rec.after[0]).toMatchObject({ verdict: 'retry', error: { code: 'timeout' } });
  });

  it('does not retry a POST without an Idempotency-Key, and says why', async () => {
    const env = createFakeEnv({ autoAdvance: true, handler: script(jsonResponse(503, {}), jsonResponse(200, {})) });
    const err = (await executeRequest(spec({ method: 'POST', body: { a: 1 } }), { env }).catch((e: unknown) => e)) as FetchError;
    expect(env.http.requests).toHaveLength(1);
    expect(err.message).toMatch(/^POST http:\/\/api\.test\/items failed with 503 after 1 attempt; not retried: .*Idempotency-Key/);
    expect(err).toMatchObject({ code: 'not-idempotent', retryable: false, status: 503 });
  });

  it('retries a POST that carries an Idempotency-Key, sending the same key each time', async () => {
    const env = createFakeEnv({ autoAdvance: true, handler: script(jsonResponse(503, {}), jsonResponse(201, { id: 1 })) });
    const r = await executeRequest(spec({ method: 'POST', body: { a: 1 }, idempotencyKey: 'eff-1' }), { env });
    expect(r.status).toBe(201);
    expect(env.http.requests.map((q) => q.headers['Idempotency-Key'])).toEqual(['eff-1', 'eff-1']);
    expect(env.http.requests.map((q) => q.body)).toEqual(['{"a":1}', '{"a":1}']);
  });

  it('returns an allowed status as data and never retries it', async () => {
    const env = createFakeEnv({ autoAdvance: true, handler: script(jsonResponse(404, { missing: true })) });
    const r = await executeRequest(spec({ allow: [404] }), { env });
    expect(r).toMatchObject({ status: 404, body: { missing: true }, allowed: true, attempts: 1 });
    const env2 = createFakeEnv({ autoAdvance: true, handler: script(jsonResponse(503, { down: true })) });
    const r2 = await executeRequest(spec({ allow: [503] }), { env: env2 });
    expect(r2).toMatchObject({ status: 503, allowed: true, attempts: 1 });
    expect(env2.http.requests).toHaveLength(1);
  });

  it('a non-allowed 4xx fails at once', async () => {
    const env = createFakeEnv({ autoAdvance: true, handler: script(jsonResponse(422, { bad: 1 })) });
    await expect(executeRequest(spec(), { env })).rejects.toMatchObject({ status: 422, retryable: false, attempts: 1 });
    expect(env.http.requests).toHaveLength(1);
  });

  it('refreshes an OAuth2 token on 401 and retries with the new one', async () => {
    const env = createFakeEnv({ autoAdvance: true });
    env.http.handler = (req) => {
      if (req.url === 'http://auth.test/token') return jsonResponse(200, { access_token: 'fresh' });
      return req.headers['Authorization'] === 'Bearer fresh' ? jsonResponse(200, { ok: true }) : jsonResponse(401, {});
    };
    const auth = new AuthSession('Api', { type: 'oauth2', accessToken: 'stale', refreshToken: 'rt', tokenEndpoint: 'http://auth.test/token' });
    const rec = recorder();
    const r = await executeRequest(spec({ retry: { maxAttempts: 1 } }), { env, auth }, rec.hooks);
    expect(r.body).toEqual({ ok: true });
    expect(env.http.requests.map((q) => q.url)).toEqual(['http://api.test/items', 'http://auth.test/token', 'http://api.test/items']);
    expect(rec.after.map((a) => a.verdict)).toEqual(['refresh-auth', 'success']);
    // A second 401 after a refresh is final: no refresh loop.
    env.http.handler = (req) => (req.url.includes('token') ? jsonResponse(200, { access_token: 'again' }) : jsonResponse(401, {}));
    await expect(executeRequest(spec(), { env, auth })).rejects.toMatchObject({ status: 401 });
  });

  it('a 2xx with a body that is not JSON is an error quoting the content type and the start', async () => {
    const html = `<html>${'x'.repeat(200)}</html>`;
    const env = createFakeEnv({ handler: () => ({ status: 200, headers: { 'Content-Type': 'text/html' }, body: html }) });
    await expect(executeRequest(spec(), { env })).rejects.toThrow(
      `GET http://api.test/items returned 200: expected a JSON body but got: text/html ${JSON.stringify(html.slice(0, 80))}`,
    );
  });

  it('an empty body or a 204 is null, not a failure', async () => {
    const env = createFakeEnv({ handler: script({ status: 204, headers: {}, body: '' }, { status: 200, headers: {}, body: '' }) });
    expect((await executeRequest(spec(), { env })).body).toBeNull();
    expect((await executeRequest(spec(), { env })).body).toBeNull();
  });

  it('opens the circuit after repeated failures and then fails fast without sending', async () => {
    const env = createFakeEnv({ autoAdvance: true, handler: script(jsonResponse(500, {})) });
    const breaker = new CircuitBreaker(env.clock);
    const s = spec({ retry: { maxAttempts: 2, initialDelay: 1 }, circuitBreaker: { failureThreshold: 3 } });
    await expect(executeRequest(s, { env, breaker })).rejects.toBeInstanceOf(FetchError);
    await expect(executeRequest(s, { env, breaker })).rejects.toBeInstanceOf(CircuitOpenError);
    expect(env.http.requests).toHaveLength(3);
  });

  it('the beforeAttempt hook runs before the request is sent; its failure sends nothing', async () => {
    const env = createFakeEnv({ handler: script(jsonResponse(200, {})) });
    const order: string[] = [];
    env.http.handler = () => {
      order.push('send');
      return jsonResponse(200, {});
    };
    await executeRequest(spec(), { env }, { beforeAttempt: async () => void order.push('before'), afterAttempt: () => void order.push('after') });
    expect(order).toEqual(['before', 'send', 'after']);
    await expect(executeRequest(spec(), { env }, { beforeAttempt: async () => Promise.reject(new Error('log full')) })).rejects.toThrow('log full');
    expect(order).toEqual(['before', 'send', 'after']);
  });

  it('uses retry.timeout, else the source timeout, else 30 s', async () => {
    const env = createFakeEnv({ handler: script(jsonResponse(200, {})) });
    await executeRequest(spec(), { env });
    await executeRequest(spec({ sourceTimeout: 5000 }), { env });
    await executeRequest(spec({ sourceTimeout: 5000, retry: { timeout: 250 } }), { env });
    expect(env.http.requests.map((r) => r.timeoutMs)).toEqual([30_000, 5000, 250]);
  });
});
