/**
 * The HTTP layer end to end: executeRequest + paginate over the real undici transport against a
 * real server on 127.0.0.1. Request URLs are asserted exactly as §H2/§H3 of the reference list them.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock, SeededRandom } from '../../engine/env/fake-env.js';
import { RealClock, UndiciTransport } from '../../engine/env/real-env.js';
import { AuthSession } from '../../engine/http/auth.js';
import { CircuitBreaker } from '../../engine/http/circuit-breaker.js';
import { executeRequest, type AfterAttempt, type BeforeAttempt, type HttpDeps, type RequestSpec } from '../../engine/http/client.js';
import { paginate, type PaginationPlan } from '../../engine/http/pagination.js';
import { RateLimiter } from '../../engine/http/rate-limiter.js';
import { FetchError } from '../../engine/http/retry-policy.js';
import { formatLastSync, sincePlacement } from '../../engine/http/since.js';
import { json, startServer, type LocalServer, type Route } from './local-server.js';

let server: LocalServer;
const transport = new UndiciTransport();

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await transport.close();
  await server.close();
});
afterEach(() => {
  server.requests.length = 0;
});

/** Real HTTP, but a clock that does not really wait (backoff is asserted in client.test.ts). */
function deps(extra: Partial<HttpDeps> = {}): HttpDeps {
  return { env: { clock: new FakeClock(Date.UTC(2025, 0, 1), { autoAdvance: true }), random: new SeededRandom(3), http: transport }, ...extra };
}

function use(route: Route) {
  server.route = route;
}

const urls = () => server.requests.map((r) => `${r.method} ${r.url}`);

async function fetchAll(spec: RequestSpec, d: HttpDeps, plan: PaginationPlan, until?: (body: unknown) => boolean) {
  return paginate(plan, {
    fetchPage: async (query) => (await executeRequest({ ...spec, pageQuery: query }, d)).body,
    ...(until ? { until } : {}),
  });
}

describe('§H2: offset pagination with until, retry on 5xx, bearer auth and source headers', () => {
  it('sends exactly offset=0, offset=2 (503), offset=2 and collects a, b, c', async () => {
    let second = 0;
    use((req, res) => {
      if (req.url === '/items?offset=0') return json(res, 200, { items: [{ sku: 'a', n: 1 }, { sku: 'b', n: 2 }] });
      if (req.url === '/items?offset=2') return ++second === 1 ? json(res, 503, {}) : json(res, 200, { items: [{ sku: 'c', n: 3 }] });
      return json(res, 404, {});
    });
    const d = deps({ auth: new AuthSession('Api', { type: 'bearer', token: 't0k' }), limiter: new RateLimiter(new FakeClock()), breaker: new CircuitBreaker(new FakeClock()) });
    const spec: RequestSpec = {
      source: 'Api',
      method: 'GET',
      base: server.base,
      path: '/items',
      sourceHeaders: { 'X-Client': 'conformance' },
      retry: { maxAttempts: 2, backoff: 'constant', initialDelay: 10, maxDelay: 50 },
      rateLimit: { strategy: 'fail', maxWait: 5, fallbackRpm: 600 },
      circuitBreaker: { failureThreshold: 5, resetTimeout: 1, successThreshold: 1, failureWindow: 60 },
    };
    const result = await fetchAll(spec, d, { strategy: 'offset', param: 'offset', pageSize: 2 }, (b) => (b as { items: unknown[] }).items.length === 0);
    expect(urls()).toEqual(['GET /items?offset=0', 'GET /items?offset=2', 'GET /items?offset=2']);
    expect(result.items).toEqual([{ sku: 'a', n: 1 }, { sku: 'b', n: 2 }, { sku: 'c', n: 3 }]);
    for (const r of server.requests) {
      expect(r.headers['authorization']).toBe('Bearer t0k');
      expect(r.headers['x-client']).toBe('conformance');
      expect(r.headers['accept']).toBe('application/json');
      expect(r.headers['content-type']).toBe('application/json');
    }
  });
});

describe('§H3: cursor and page pagination with a unix lastSync', () => {
  it('sends exactly the four requests, with no page-size parameter', async () => {
    use((req, res) => {
      switch (req.url) {
        case '/events?updated_since=0':
          return json(res, 200, { data: [{ id: 'e1' }, { id: 'e2' }], meta: { next: 'c2' } });
        case '/events?updated_since=0&after=c2':
          return json(res, 200, { data: [{ id: 'e3' }], meta: { next: null } });
        case '/pages?p=1':
          return json(res, 200, { results: [{ id: 1 }, { id: 2 }] });
        case '/pages?p=2':
          return json(res, 200, { results: [{ id: 3 }] });
        default:
          return json(res, 404, {});
      }
    });
    const d = deps();
    const since = sincePlacement({ param: 'updated_since' }, formatLastSync(0, 'unix'));
    const events = await fetchAll(
      { source: 'Api', method: 'GET', base: server.base, path: '/events', sinceQuery: since.query },
      d,
      { strategy: 'cursor', param: 'after', pageSize: 50, cursorPath: 'meta.next' },
    );
    const pages = await fetchAll({ source: 'Api', method: 'GET', base: server.base, path: '/pages' }, d, { strategy: 'page', param: 'p', pageSize: 2 });
    expect(urls()).toEqual(['GET /events?updated_since=0', 'GET /events?updated_since=0&after=c2', 'GET /pages?p=1', 'GET /pages?p=2']);
    expect(events.items).toEqual([{ id: 'e1' }, { id: 'e2' }, { id: 'e3' }]);
    expect(pages.items).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    // Run 2 starts from the recorded instant T, in unix seconds.
    const t = Date.UTC(2025, 5, 1, 12, 0, 0, 999);
    expect(sincePlacement({ param: 'updated_since' }, formatLastSync(t, 'unix')).query).toEqual([['updated_since', String(Math.floor(t / 1000))]]);
  });

  it('sends the page size when the mission names its parameter', async () => {
    use((_req, res) => json(res, 200, { results: [] }));
    await fetchAll({ source: 'Api', method: 'GET', base: server.base, path: '/pages' }, deps(), { strategy: 'page', param: 'p', pageSize: 25, sizeParam: 'per_page' });
    expect(urls()).toEqual(['GET /pages?p=1&per_page=25']);
  });
});

describe('auth over the wire', () => {
  const echo: Route = (req, res) => json(res, 200, { ok: true, url: req.url });

  it('basic sends Authorization: Basic', async () => {
    use(echo);
    await executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/me' }, deps({ auth: new AuthSession('Api', { type: 'basic', username: 'al', password: 'pw' }) }));
    expect(server.requests[0]!.headers['authorization']).toBe(`Basic ${Buffer.from('al:pw').toString('base64')}`);
  });

  it('api_key sends X-API-Key, or a query parameter after the other parameters', async () => {
    use(echo);
    await executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/k' }, deps({ auth: new AuthSession('Api', { type: 'api_key', key: 'K1' }) }));
    await executeRequest(
      { source: 'Api', method: 'GET', base: server.base, path: '/k', pageQuery: [['page', '1']] },
      deps({ auth: new AuthSession('Api', { type: 'api_key', key: 'K2', query: 'api_key' }) }),
    );
    expect(server.requests[0]!.headers['x-api-key']).toBe('K1');
    expect(server.requests[1]!.url).toBe('/k?page=1&api_key=K2');
  });

  it('oauth2 refreshes on 401 through the same transport and retries with the new token', async () => {
    use((req, res) => {
      if (req.url === '/oauth/token') {
        const form = Object.fromEntries(new URLSearchParams(req.body));
        return form['grant_type'] === 'refresh_token' && form['refresh_token'] === 'R1'
          ? json(res, 200, { access_token: 'A2', refresh_token: 'R2' })
          : json(res, 400, { error: 'invalid_grant' });
      }
      return req.headers['authorization'] === 'Bearer A2' ? json(res, 200, { ok: true }) : json(res, 401, { error: 'expired' });
    });
    const auth = new AuthSession('Api', { type: 'oauth2', accessToken: 'A1', refreshToken: 'R1', tokenEndpoint: `${server.base}/oauth/token` });
    const r = await executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/data' }, deps({ auth }));
    expect(r.body).toEqual({ ok: true });
    expect(urls()).toEqual(['GET /data', 'POST /oauth/token', 'GET /data']);
    expect(server.requests[1]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
  });
});

describe('redaction of everything the hooks see', () => {
  it('a secret in a header, the query, the body and echoed back never reaches the hooks or the result', async () => {
    use((req, res) => json(res, 200, { youSent: req.body, url: req.url, auth: req.headers['authorization'] }, { 'Set-Cookie': 'sid=S3CR3T-42x' }));
    const before: BeforeAttempt[] = [];
    const after: AfterAttempt[] = [];
    // 8+ characters: a shorter credential is redacted only where credentials go, not searched for in data.
    const auth = new AuthSession('Api', { type: 'bearer', token: 'S3CR3T-42x' });
    const r = await executeRequest(
      {
        source: 'Api',
        method: 'POST',
        base: server.base,
        path: '/echo',
        sinceQuery: [['token', 'S3CR3T-42x']],
        sourceHeaders: { 'X-Debug': 'copy of S3CR3T-42x' },
        body: { note: 'my key is S3CR3T-42x', nested: { list: ['S3CR3T-42x'] } },
        idempotencyKey: 'k',
      },
      deps({ auth }),
      { beforeAttempt: (b) => void before.push(b), afterAttempt: (a) => void after.push(a) },
    );
    // The server did get the real secret...
    expect(server.requests[0]!.headers['authorization']).toBe('Bearer S3CR3T-42x');
    expect(server.requests[0]!.body).toContain('S3CR3T-42x');
    // ...but nothing recorded or returned contains it.
    const recorded = JSON.stringify({ before, after, r });
    expect(recorded).not.toContain('S3CR3T-42x');
    expect(recorded).toContain('[REDACTED]');
    expect(before[0]!.request.url).toBe(`${server.base}/echo?token=[REDACTED]`);
  });

  it('a secret in a failure message is redacted too', async () => {
    use((_req, res) => json(res, 500, { leaked: 'S3CR3T-42x' }));
    const err = (await executeRequest(
      { source: 'Api', method: 'GET', base: server.base, path: '/x', sinceQuery: [['q', 'S3CR3T-42x']], retry: { maxAttempts: 1 } },
      deps({ auth: new AuthSession('Api', { type: 'bearer', token: 'S3CR3T-42x' }) }),
    ).catch((e: unknown) => e)) as FetchError;
    expect(err.message).toBe(`GET ${server.base}/x?q=[REDACTED] failed with 500 after 1 attempt; the API answered: {"leaked":"[REDACTED]"}`);
    expect(JSON.stringify(err.response)).not.toContain('S3CR3T-42x');
  });
});

describe('retries and bodies over the real transport', () => {
  it('POST is sent once without an Idempotency-Key and retried with one', async () => {
    const byKey = new Map<string, number>();
    use((req, res) => {
      const key = String(req.headers['idempotency-key'] ?? 'none');
      const n = (byKey.get(key) ?? 0) + 1;
      byKey.set(key, n);
      return n === 1 ? json(res, 503, {}) : json(res, 201, { created: key });
    });
    await expect(executeRequest({ source: 'Api', method: 'POST', base: server.base, path: '/orders', body: { q: 1 } }, deps())).rejects.toMatchObject({
      code: 'not-idempotent',
    });
    expect(byKey.get('none')).toBe(1);
    const r = await executeRequest({ source: 'Api', method: 'POST', base: server.base, path: '/orders', body: { q: 1 }, idempotencyKey: 'idem-1' }, deps());
    expect(r).toMatchObject({ status: 201, body: { created: 'idem-1' }, attempts: 2 });
    expect(byKey.get('idem-1')).toBe(2);
  });

  it('an allowed status is returned once, never retried', async () => {
    use((_req, res) => json(res, 409, { conflict: true }));
    const r = await executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/c', allow: [409] }, deps());
    expect(r).toMatchObject({ status: 409, allowed: true, body: { conflict: true } });
    expect(server.requests).toHaveLength(1);
  });

  it('a slow server times out per attempt and is retried', async () => {
    let n = 0;
    use((_req, res) => {
      if (++n === 1) {
        setTimeout(() => json(res, 200, { late: true }), 1000).unref();
        return;
      }
      json(res, 200, { fast: true });
    });
    const after: AfterAttempt[] = [];
    const r = await executeRequest(
      { source: 'Api', method: 'GET', base: server.base, path: '/slow', retry: { timeout: 100, initialDelay: 1 } },
      deps(),
      { afterAttempt: (a) => void after.push(a) },
    );
    expect(r.body).toEqual({ fast: true });
    expect(after[0]).toMatchObject({ verdict: 'retry', error: { code: 'timeout' } });
  });

  it('204 and an empty 200 are null bodies; HTML on a 200 is an error', async () => {
    use((req, res) => {
      if (req.url === '/204') {
        res.writeHead(204);
        res.end();
        return;
      }
      if (req.url === '/empty') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Login</title>');
    });
    const d = deps();
    expect((await executeRequest({ source: 'Api', method: 'DELETE', base: server.base, path: '/204' }, d)).body).toBeNull();
    expect((await executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/empty' }, d)).body).toBeNull();
    const err = (await executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/html' }, d).catch((e: unknown) => e)) as FetchError;
    expect(err).toBeInstanceOf(FetchError);
    expect(err.code).toBe('invalid-body');
    expect(err.message).toBe(`GET ${server.base}/html returned 200: expected a JSON body but got: text/html; charset=utf-8 "<!doctype html><title>Login</title>"`);
  });

  it('a write answered 2xx with a body that is not JSON succeeded: its response is the text, and the run is told', async () => {
    // Failed as "expected a JSON body", the POST was sent again by the next run, under a key of its own.
    use((_req, res) => {
      res.writeHead(201, { 'content-type': 'text/plain' });
      res.end('Created');
    });
    const answer = await executeRequest({ source: 'Api', method: 'POST', base: server.base, path: '/orders', body: { id: 1 } }, deps());
    expect(answer.status).toBe(201);
    expect(answer.body).toBe('Created');
    expect(answer.decodeWarning).toBe(`POST ${server.base}/orders returned 201 with a body that is not JSON (text/plain): the write is done, and \`response\` is the body's text`);
    const read = (await executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/orders' }, deps()).catch((e: unknown) => e)) as FetchError;
    expect(read.code).toBe('invalid-body');
  });
});

describe('redirects', () => {
  // Before, any 3xx failed the request ("failed with 302 after 1 attempt"), where upstream Reqon
  // (fetch) follows them: a renamed resource (301), a trailing-slash or load-balancer redirect.
  const redirect = (res: import('node:http').ServerResponse, status: number, location: string) => {
    res.writeHead(status, { location });
    res.end();
  };

  it('a GET follows 301, 302, 303, 307 and 308 within the source, auth and source headers kept', async () => {
    use((req, res) => {
      const hops: Record<string, [number, string]> = { '/a': [301, '/b'], '/b': [302, 'c'], '/c': [303, `${server.base}/d?x=1`], '/d?x=1': [307, '/e'], '/e': [308, '/final'] };
      const hop = hops[req.url];
      return hop ? redirect(res, hop[0], hop[1]) : req.url === '/final' ? json(res, 200, { id: 'final' }) : json(res, 404, {});
    });
    const d = deps({ auth: new AuthSession('Api', { type: 'bearer', token: 't0k' }) });
    const r = await executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/a', sourceHeaders: { 'X-Client': 'c' } }, d);
    expect(r).toMatchObject({ status: 200, body: { id: 'final' }, attempts: 1 });
    expect(urls()).toEqual(['GET /a', 'GET /b', 'GET /c', 'GET /d?x=1', 'GET /e', 'GET /final']);
    for (const seen of server.requests) {
      expect(seen.headers['authorization']).toBe('Bearer t0k');
      expect(seen.headers['x-client']).toBe('c');
    }
  });

  it('a redirect to another origin does not carry the credentials there', async () => {
    const other = await startServer((_req, res) => json(res, 200, { id: 'elsewhere' }));
    try {
      use((_req, res) => redirect(res, 302, `${other.base}/moved`));
      const d = deps({ auth: new AuthSession('Api', { type: 'api_key', key: 'k3y-secret-value', header: 'X-Api-Key' }) });
      const sourceHeaders = { 'X-Client': 'c', 'X-Auth-Token': 'tok-in-a-source-header' };
      const r = await executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/x', sourceHeaders }, d);
      expect(r).toMatchObject({ status: 200, body: { id: 'elsewhere' } });
      expect(server.requests[0]!.headers['x-api-key']).toBe('k3y-secret-value');
      expect(server.requests[0]!.headers['x-auth-token']).toBe('tok-in-a-source-header');
      expect(other.requests.map((q) => q.url)).toEqual(['/moved']);
      expect(other.requests[0]!.headers['x-api-key']).toBeUndefined();
      expect(other.requests[0]!.headers['x-auth-token']).toBeUndefined();
      expect(other.requests[0]!.headers['x-client']).toBe('c');
    } finally {
      await other.close();
    }
  });

  it('an answer from where a redirect led says so: in the failure, and in the recorded answer (helper 84)', async () => {
    // A login page's HTML, another origin's 401 (the credentials stayed behind, rightly): before,
    // the failure named only the URL the mission asked for, as if the API had answered.
    const other = await startServer((_req, res) => json(res, 401, { error: 'missing token' }));
    try {
      use((req, res) => {
        if (req.url === '/items') return redirect(res, 302, '/login?next=/items');
        if (req.url === '/orders') return redirect(res, 307, `${other.base}/orders`);
        if (req.url === '/moved') return redirect(res, 301, '/new');
        if (req.url === '/new') return json(res, 200, [1]);
        if (req.url === '/oauth/token') return json(res, 200, { access_token: 'A2', refresh_token: 'R2' });
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>Please sign in</html>');
      });
      // An oauth2 session that could refresh: a 401 from the origin its token never reached asks for none.
      const d = deps({ auth: new AuthSession('Api', { type: 'oauth2', accessToken: 'A1', refreshToken: 'R1', tokenEndpoint: `${server.base}/oauth/token` }) });
      const login = (await executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/items' }, d).catch((e: unknown) => e)) as FetchError;
      expect(login.message).toBe(`GET ${server.base}/items returned 200 (from ${server.base}/login?next=/items, where it was redirected): expected a JSON body but got: text/html "<html>Please sign in</html>"`);
      const away = (await executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/orders' }, d).catch((e: unknown) => e)) as FetchError;
      expect(away.message).toBe(
        `GET ${server.base}/orders failed with 401 after 1 attempt; the answer came from ${other.base}/orders, where the request was redirected — another origin, to which the source's credentials are not sent; the API answered: {"error":"missing token"}`,
      );
      expect(urls()).not.toContain('POST /oauth/token');
      const recorded: unknown[] = [];
      const ok = await executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/moved' }, d, { afterAttempt: (a) => void recorded.push(a.response) });
      expect(ok.body).toEqual([1]);
      expect(recorded).toEqual([expect.objectContaining({ status: 200, body: [1], redirectedTo: `${server.base}/new` })]);
    } finally {
      await other.close();
    }
  });

  it('a redirect loop fails after 5 hops, naming them; a 3xx without Location fails as before', async () => {
    use((req, res) => (req.url === '/bare' ? json(res, 302, {}) : redirect(res, 302, req.url === '/p' ? '/q' : '/p')));
    await expect(executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/p' }, deps())).rejects.toThrow(/more than 5 redirects/);
    expect(server.requests).toHaveLength(6);
    await expect(executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/bare' }, deps())).rejects.toThrow(/failed with 302/);
  });

  it('a POST is not redirected: its Idempotency-Key would go elsewhere; the failure names the Location', async () => {
    use((_req, res) => redirect(res, 307, '/elsewhere'));
    const post = executeRequest({ source: 'Api', method: 'POST', base: server.base, path: '/orders', body: { q: 1 }, idempotencyKey: 'idem-r' }, deps());
    await expect(post).rejects.toThrow(/failed with 307 .*redirected to \/elsewhere, which Reqon follows for GET and HEAD only/);
    expect(urls()).toEqual(['POST /orders']);
  });

  it('a POST answered 303 See Other goes on with a GET of its Location, without the body or the Idempotency-Key', async () => {
    // 303 says the POST was taken and its result is to be read with a GET (RFC 9110 §15.4.4), as
    // fetch() does; the request failed "failed with 303" after the POST had been applied.
    use((req, res) => (req.url === '/jobs' ? redirect(res, 303, '/jobs/7') : json(res, 200, { id: 7, status: 'done', method: req.method, body: req.body })));
    const r = await executeRequest({ source: 'Api', method: 'POST', base: server.base, path: '/jobs', body: { q: 1 }, idempotencyKey: 'idem-303' }, deps());
    expect(r).toMatchObject({ status: 200, body: { id: 7, status: 'done', method: 'GET', body: '' }, attempts: 1 });
    expect(urls()).toEqual(['POST /jobs', 'GET /jobs/7']);
    expect(server.requests[0]!.headers['idempotency-key']).toBe('idem-303');
    expect(server.requests[1]!.headers['idempotency-key']).toBeUndefined();
    expect(server.requests[1]!.headers['content-type']).toBeUndefined();
  });

  it('an answer echoing the credential has it replaced, and says how often (the run stores what the log holds)', async () => {
    use((req, res) => json(res, 200, { id: 'x', echo: req.headers.authorization, note: 'token long-secret-t0k ok' }));
    const r = await executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/me' }, deps({ auth: new AuthSession('Api', { type: 'bearer', token: 'long-secret-t0k' }) }));
    expect(r.body).toEqual({ id: 'x', echo: 'Bearer [REDACTED]', note: 'token [REDACTED] ok' });
    expect(r.decodeWarning).toBe('the answer held a credential of the run 2 time(s); each became [REDACTED] in the log and in what the run does with the answer (a secret never enters the log)');
  });

  it('one timeout covers an attempt with its redirects, not each hop anew', async () => {
    // Each hop answers after 150 ms: four of them pass a 400 ms timeout, though none alone does.
    use((req, res) => {
      const hop = Number(req.url!.slice(1));
      setTimeout(() => (hop < 4 ? redirect(res, 302, `/${hop + 1}`) : json(res, 200, { id: 'final' })), 150).unref();
    });
    const after: AfterAttempt[] = [];
    await expect(
      // The deadline is the run's clock's: a real one here (the others in this file only pretend to wait).
      executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/0', retry: { timeout: 400, maxAttempts: 1 } }, deps({ env: { ...deps().env, clock: new RealClock() } }), {
        afterAttempt: (a) => void after.push(a),
      }),
    ).rejects.toThrow(FetchError);
    expect(after[0]).toMatchObject({ error: { code: 'timeout' } });
    expect(server.requests.length).toBeLessThan(5);
  });

  it('a 3xx the request allows is its answer, not followed', async () => {
    use((_req, res) => redirect(res, 302, '/next'));
    const r = await executeRequest({ source: 'Api', method: 'GET', base: server.base, path: '/x', allow: [302] }, deps());
    expect(r).toMatchObject({ status: 302, allowed: true });
    expect(urls()).toEqual(['GET /x']);
  });
});
