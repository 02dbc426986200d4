import { describe, expect, it } from 'vitest';
import { buildRequest, buildUrl, mergeHeaders } from '../../engine/http/request-builder.js';
import { backoffDelay, classifyAttempt, parseRetryAfter, resolveRetryPolicy, type ClassifyInput } from '../../engine/http/retry-policy.js';

describe('request builder', () => {
  it('joins base and path with exactly one slash', () => {
    expect(buildUrl('http://a.test/api/', '/items')).toBe('http://a.test/api/items');
    expect(buildUrl('http://a.test/api', 'items')).toBe('http://a.test/api/items');
    // Only ONE trailing slash is removed, as in the original.
    expect(buildUrl('http://a.test/api//', '/items')).toBe('http://a.test/api//items');
  });
  it("keeps a base URL's query a query: the path goes before it, its parameters first", () => {
    // Before: 'http://a.test/v1?api-version=2024-01-01/items' — every path a request to /v1.
    expect(buildUrl('http://a.test/v1?api-version=2024-01-01', '/items')).toBe('http://a.test/v1/items?api-version=2024-01-01');
    expect(buildUrl('http://a.test/v1/?api-version=1', '/items?state=open', [['page', '2']])).toBe('http://a.test/v1/items?api-version=1&state=open&page=2');
    expect(buildUrl('http://a.test/v1?', '/items')).toBe('http://a.test/v1/items');
    // A fragment is never sent to a server.
    expect(buildUrl('http://a.test/v1#docs', '/items', [['page', '2']])).toBe('http://a.test/v1/items?page=2');
    expect(buildUrl('http://a.test/v1?k=v#docs', '/items')).toBe('http://a.test/v1/items?k=v');
  });
  it('orders the query: since, then pagination, then auth; encodes with URLSearchParams', () => {
    const r = buildRequest({
      method: 'get',
      base: 'http://a.test',
      path: '/events',
      sinceQuery: [['updated_since', '0']],
      pageQuery: [['after', 'c 2']],
      authQuery: [['api_key', 'k']],
    });
    expect(r.url).toBe('http://a.test/events?updated_since=0&after=c+2&api_key=k');
    expect(r.method).toBe('GET');
    expect(buildUrl('http://a.test', '/x?y=1', [['z', '2']])).toBe('http://a.test/x?y=1&z=2');
  });
  it('sends JSON defaults, then source headers, then auth, then the idempotency key', () => {
    const r = buildRequest({
      method: 'POST',
      base: 'http://a.test',
      path: '/x',
      sourceHeaders: { 'X-Client': 'conformance', accept: 'application/vnd+json' },
      authHeaders: { Authorization: 'Bearer t' },
      idempotencyKey: 'k1',
    });
    expect(r.headers).toEqual({
      'Content-Type': 'application/json',
      accept: 'application/vnd+json',
      'X-Client': 'conformance',
      Authorization: 'Bearer t',
      'Idempotency-Key': 'k1',
    });
  });
  it('sends 0, false, "" and null bodies; only undefined means no body', () => {
    for (const [value, text] of [
      [0, '0'],
      [false, 'false'],
      ['', '""'],
      [null, 'null'],
      [{ a: 1 }, '{"a":1}'],
    ] as const) {
      expect(buildRequest({ method: 'POST', base: 'http://a.test', path: '/', body: value }).body).toBe(text);
    }
    expect(buildRequest({ method: 'POST', base: 'http://a.test', path: '/' }).body).toBeUndefined();
  });
  it('rejects a base that is not absolute http(s) and header injection', () => {
    expect(() => buildUrl('fake.test', '/x')).toThrow(/not an absolute http\(s\) URL/);
    expect(() => buildRequest({ method: 'GET', base: 'http://a.test', path: '/', sourceHeaders: { X: 'a\r\nB: c' } })).toThrow(/line break/);
    // A credential's header HTTP cannot carry fails alike, its value never shown (helper 63).
    expect(() => buildRequest({ method: 'GET', base: 'http://a.test', path: '/', authHeaders: { Authorization: 'Bearer s3cr\u20ACt' } })).toThrow(
      'header "Authorization", made from the source\'s credentials, has a character beyond Latin-1 (U+20AC), which HTTP headers cannot carry: check the credential (its value is not shown)',
    );
    expect(() => buildRequest({ method: 'GET', base: 'http://a.test', path: '/', authHeaders: { 'X Api Key': 'k' } })).toThrow(/header name "X Api Key" has a character a header name cannot hold/);
  });
  it('mergeHeaders is case-insensitive, later wins', () => {
    expect(mergeHeaders({ Accept: 'a' }, { ACCEPT: 'b' })).toEqual({ ACCEPT: 'b' });
  });
});

describe('retry policy', () => {
  it('defaults: 3 attempts, exponential, 1000 ms, capped at 30 000 ms', () => {
    expect(resolveRetryPolicy()).toEqual({ maxAttempts: 3, backoff: 'exponential', initialDelay: 1000, maxDelay: 30_000 });
    expect(() => resolveRetryPolicy({ maxAttempts: 0 })).toThrow(/maxAttempts/);
  });
  it('computes exponential, linear and constant delays with ±10 % jitter and the cap', () => {
    const exp = resolveRetryPolicy();
    expect([1, 2, 3, 4].map((n) => backoffDelay(exp, n, 0.5))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffDelay(exp, 1, 0)).toBe(900);
    expect(backoffDelay(exp, 1, 0.999999)).toBe(1100);
    expect(backoffDelay(exp, 10, 0.5)).toBe(30_000);
    const lin = resolveRetryPolicy({ backoff: 'linear', initialDelay: 100 });
    expect([1, 2, 3].map((n) => backoffDelay(lin, n, 0.5))).toEqual([100, 200, 300]);
    const con = resolveRetryPolicy({ backoff: 'constant', initialDelay: 10, maxDelay: 50 });
    expect([1, 2, 3].map((n) => backoffDelay(con, n, 0.5))).toEqual([10, 10, 10]);
  });
  it('reads Retry-After as seconds or an HTTP-date relative to the clock', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:12 GMT', now)).toBe(12_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
  it('reads a Retry-After sent twice as its first value, and takes no other text for a date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    // Two Retry-After headers (a gateway's and the API's) arrive joined: Date.parse read "5, 5"
    // as 1 May 2001, in the past, so the retry went at once instead of in 5 s.
    expect(parseRetryAfter('5, 5', now)).toBe(5000);
    expect(parseRetryAfter('10,20', now)).toBe(10_000);
    // Text that is no HTTP-date is unreadable (the backoff applies), never a date Date.parse guesses.
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('1, 1', now)).toBe(1000);
    expect(parseRetryAfter('2025-01-01T00:00:09Z', now)).toBeUndefined();
    expect(parseRetryAfter('Wednesday, 01-Jan-25 00:00:03 GMT', now)).toBe(3000);
  });

  const base: ClassifyInput = {
    method: 'GET',
    outcome: { kind: 'response', status: 200, headers: {} },
    attempt: 1,
    policy: resolveRetryPolicy({ backoff: 'constant', initialDelay: 100, maxDelay: 5000 }),
    allow: [],
    hasIdempotencyKey: false,
    canRefresh: false,
    now: 0,
    random01: 0.5,
  };
  const status = (s: number, extra: Partial<ClassifyInput> = {}, headers: Record<string, string> = {}) =>
    classifyAttempt({ ...base, outcome: { kind: 'response', status: s, headers }, ...extra });

  it('classifies each outcome once', () => {
    expect(status(200).kind).toBe('success');
    expect(status(204).kind).toBe('success');
    expect(status(503)).toEqual({ kind: 'retry', delayMs: 100, reason: 'failed with 503' });
    expect(status(429).kind).toBe('retry');
    expect(status(404)).toMatchObject({ kind: 'fail', code: 'http-status', retryable: false });
    expect(status(404, { allow: [404] }).kind).toBe('allowed');
    expect(status(503, { allow: [503] }).kind).toBe('allowed');
    expect(status(401, { canRefresh: true }).kind).toBe('refresh-auth');
    expect(status(401).kind).toBe('fail');
    expect(classifyAttempt({ ...base, outcome: { kind: 'transport', code: 'timeout', message: '' } }).kind).toBe('retry');
    expect(classifyAttempt({ ...base, outcome: { kind: 'transport', code: 'network', message: '' } }).kind).toBe('retry');
    expect(classifyAttempt({ ...base, outcome: { kind: 'transport', code: 'aborted', message: '' } })).toMatchObject({ kind: 'fail', code: 'aborted' });
  });
  it('gives up after maxAttempts with a retryable failure', () => {
    expect(status(503, { attempt: 3 })).toMatchObject({ kind: 'fail', retryable: true, reason: 'failed with 503' });
  });
  it('Retry-After wins over backoff and is clamped to maxDelay', () => {
    expect(status(429, {}, { 'retry-after': '2' })).toMatchObject({ kind: 'retry', delayMs: 2000 });
    expect(status(429, {}, { 'retry-after': '3600' })).toMatchObject({ kind: 'retry', delayMs: 5000 });
  });
  it('retries unsafe methods only with an Idempotency-Key', () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      expect(status(503, { method })).toMatchObject({ kind: 'fail', code: 'not-idempotent', retryable: false });
      expect(status(503, { method, hasIdempotencyKey: true }).kind).toBe('retry');
    }
    expect(status(503, { method: 'POST' })).toMatchObject({ note: expect.stringMatching(/Idempotency-Key/) });
    // With no attempts left anyway, the failure is the plain status, without the idempotency note.
    expect(status(503, { method: 'POST', policy: resolveRetryPolicy({ maxAttempts: 1 }) })).toEqual({
      kind: 'fail',
      code: 'http-status',
      retryable: true,
      reason: 'failed with 503',
    });
  });
});
