/**
 * GUARANTEES 14: replay takes a recorded answer as the mission's retry and `allow` settings take
 * it now. A run whose POST was answered 500 and retried to a 201 diverges against an edit that
 * would not have retried (`maxAttempts: 1`) or would have kept the 500 (`allow: [500]`), where it
 * had verified clean, answering the edit with the recorded 201; the mission as it was verifies
 * whole. On both backends.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified } from '../../engine/executor/verify-report.js';
import { openConformance, writeAuthFile, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const mission = (options: string) => `mission Acks {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    post "/acks" { body: { v: 1 }, ${options} }
    store { id: "one", ok: response.ok ?? "no" } -> out { key: .id }
  }
  run A
}
`;
const ORIGINAL = 'retry: { maxAttempts: 3, initialDelay: 10 }';

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe.each(backends)('%s: edits of retry and allow settings', (backend) => {
  it('diverge where they take a recorded answer otherwise; the settings as they were verify whole', async () => {
    c = await openConformance({ backend });
    let calls = 0;
    c.api.on('POST /acks', () => (++calls === 1 ? { status: 500, body: { error: 'flaky' } } : { status: 201, body: { ok: true } }));
    const result = await c.start(c.mission('acks', mission(ORIGINAL)));
    expect(result.status).toBe('completed');
    expect(calls).toBe(2);
    expect(fullyVerified(await verifyRun(c.log, result.runId, { env: c.env }))).toBe(true);
    // A longer delay or more attempts take every recorded answer as before.
    for (const same of ['retry: { maxAttempts: 5, initialDelay: 50 }', 'retry: { maxAttempts: 2, initialDelay: 10 }, allow: [404]']) {
      const report = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('same', mission(same)) });
      expect(report.divergence, same).toBeNull();
    }
    for (const [edit, now] of [
      ['retry: { maxAttempts: 1 }', 'a failure'],
      ['allow: [500], retry: { maxAttempts: 3, initialDelay: 10 }', 'an allowed answer'],
    ] as const) {
      const report = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', mission(edit)) });
      expect(report.ok, edit).toBe(false);
      expect(report.divergence).toMatchObject({ stepPath: 'A/0', cause: 'edit' });
      expect(report.divergence!.change).toBe(`the retry or allow settings of POST /acks changed: attempt 1's 500 was taken as retried, and would now be ${now}`);
    }
  });
});

describe.each(backends)('%s: edits of allow on a 401', (backend) => {
  const get = (options: string, auth = 'none') => `mission Guard {
  source Api { auth: ${auth}, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    get "/me" { ${options} }
    store { id: "me", status: response.error ?? response.name } -> out { key: .id }
  }
  run A
}
`;

  it('a 401 the run allowed diverges against a mission that no longer allows it', async () => {
    c = await openConformance({ backend });
    c.api.on('GET /me', { status: 401, body: { error: 'expired' } });
    const result = await c.start(c.mission('guard', get('allow: [401]')));
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'out')).toEqual({ me: { id: 'me', status: 'expired' } });
    const report = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', get('allow: [404]')) });
    expect(report.ok).toBe(false);
    expect(report.divergence!.change).toBe("the retry or allow settings of GET /me changed: attempt 1's 401 was taken as an allowed answer, and would now be a failure");
  });

  it('a 401 the run answered with a credential refresh diverges against a mission that allows it', async () => {
    c = await openConformance({ backend });
    c.api
      .on('POST /oauth/token', { status: 200, body: { access_token: 'A2', refresh_token: 'R2' } })
      .on('GET /me', (req) => (req.headers.authorization === 'Bearer A2' ? { status: 200, body: { name: 'ada' } } : { status: 401, body: { error: 'expired' } }));
    const authFile = writeAuthFile(c.dir, { Api: { type: 'oauth2', accessToken: 'A1', refreshToken: 'R1', tokenEndpoint: `${c.api.url}/oauth/token` } });
    const result = await c.start(c.mission('guard', get('', 'oauth2')), { authFile });
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'out')).toEqual({ me: { id: 'me', status: 'ada' } });
    expect((await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('same', get('allow: [404]', 'oauth2')) })).divergence).toBeNull();
    const report = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', get('allow: [401]', 'oauth2')) });
    expect(report.ok).toBe(false);
    expect(report.divergence!.change).toBe("the retry or allow settings of GET /me changed: attempt 1's 401 was taken as a credential refresh, and would now be an allowed answer");
  });
});

describe.each(backends)('%s: edits of a source timeout or maxResponseBytes', (backend) => {
  const limited = (settings: string) => `mission Sized {
  source Api { auth: none, base: "http://127.0.0.1:9"${settings} }
  store out: memory("out")
  action A {
    get "/big"
    store { id: "n", n: length(response.items) } -> out { key: .id }
  }
  run A
}
`;

  it('are not passed as verified: the log holds neither an answer\'s time to its last byte nor its size on the wire', async () => {
    c = await openConformance({ backend });
    c.api.on('GET /big', { body: { items: Array.from({ length: 50 }, (_, i) => ({ id: i, pad: 'x'.repeat(20) })) } });
    const result = await c.start(c.mission('sized', limited('')));
    expect(result.status).toBe('completed');
    expect(fullyVerified(await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('same', limited('')) }))).toBe(true);
    const edited = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', limited(', maxResponseBytes: 100, timeout: 5')) });
    expect(edited.divergence).toBeNull();
    expect(fullyVerified(edited)).toBe(false);
    expect(edited.unchecked).toEqual([
      "source Api's timeout (the default → 5): its recorded answers were not measured against the edit, as the log holds neither their time to the last byte nor their size on the wire",
      "source Api's maxResponseBytes (the default → 100): its recorded answers were not measured against the edit, as the log holds neither their time to the last byte nor their size on the wire",
    ]);
  });
});

describe.each(backends)('%s: edits of a request\'s own timeout, or its retry\'s', (backend) => {
  const timed = (source: string, request: string) => `mission Timed {
  source Api { auth: none, base: "http://127.0.0.1:9"${source} }
  store out: memory("out")
  action A {
    get "/slow"${request}
    store { id: "n", n: length(response.items) } -> out { key: .id }
  }
  run A
}
`;

  it('are not passed as verified: a fresh run of the edit may time out where the recorded answers came', async () => {
    c = await openConformance({ backend });
    c.api.on('GET /slow', { body: { items: [1, 2, 3] } });
    const result = await c.start(c.mission('timed', timed('', '')));
    expect(result.status).toBe('completed');
    expect(fullyVerified(await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('same', timed('', '')) }))).toBe(true);
    const cases = [
      ['', ' { timeout: 50 }', "the request timeouts of action A ([timeout as the source, retry timeout as the source] → [timeout 50, retry timeout as the source])"],
      ['', ' { retry: { maxAttempts: 2, timeout: 50 } }', "the request timeouts of action A ([timeout as the source, retry timeout as the source] → [timeout as the source, retry timeout 50])"],
      [', retry: { timeout: 50 }', '', "source Api's retry timeout (the default → 50)"],
    ] as const;
    for (const [source, request, said] of cases) {
      const edited = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', timed(source, request)) });
      expect(edited.divergence).toBeNull();
      expect(fullyVerified(edited)).toBe(false);
      expect(edited.unchecked).toHaveLength(1);
      expect(edited.unchecked[0]).toContain(said);
    }
  });
});

describe.each(backends)('%s: edits of a source circuitBreaker', (backend) => {
  const guarded = (breaker: string) => `mission Guarded {
  source Api { auth: none, base: "http://127.0.0.1:9"${breaker} }
  store out: memory("out")
  action A {
    for i in range(0, 5) {
      post "/fail" { body: { n: i }, retry: { maxAttempts: 1 } }
    }
  }
  run A
}
`;
  const BREAKER = ', circuitBreaker: { failureThreshold: 2, resetTimeout: 60 }';

  it('are not passed as verified: the breaker\'s recorded decisions are replayed, not decided again', async () => {
    c = await openConformance({ backend });
    c.api.on('POST /fail', { status: 503, body: { error: 'down' } });
    const result = await c.start(c.mission('guarded', guarded(BREAKER)));
    expect(result.status).toBe('completed');
    // Two POSTs went out; the breaker refused the other three.
    expect(c.api.lines().filter((l) => l === 'POST /fail')).toHaveLength(2);
    // The same settings written elsewhere in the file are the same breaker.
    const moved = guarded(BREAKER).replace('mission Guarded {', 'mission Guarded {\n');
    expect(fullyVerified(await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('same', moved) }))).toBe(true);
    for (const [edit, shown] of [
      [', circuitBreaker: { failureThreshold: 50, resetTimeout: 60 }', '{ failureThreshold: 2, resetTimeout: 60 } → { failureThreshold: 50, resetTimeout: 60 }'],
      ['', '{ failureThreshold: 2, resetTimeout: 60 } → none'],
    ] as const) {
      const edited = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', guarded(edit)) });
      expect(edited.divergence).toBeNull();
      expect(fullyVerified(edited)).toBe(false);
      expect(edited.unchecked).toEqual([
        `source Api's circuitBreaker (${shown}): the requests it let through and the attempts it refused were replayed as recorded, not decided again by the edited breaker`,
      ]);
    }
  });
});

describe.each(backends)('%s: an edited rateLimit', (backend) => {
  const limited = (limit: string) => `mission Limited {
  source Api { auth: none, base: "http://127.0.0.1:9"${limit} }
  store out: memory("out")
  action A {
    get "/a"
    get "/b"
    store { id: "one", ok: response.ok } -> out { key: .id }
  }
  run A
}
`;
  it("is not passed as verified (helper 75: a run that waited out the limit verified against `strategy: fail`)", async () => {
    c = await openConformance({ backend });
    c.api.on('GET /a', { body: { ok: true } });
    c.api.on('GET /b', { body: { ok: true } });
    const result = await c.start(c.mission('limited', limited(', rateLimit: { strategy: pause, maxWait: 5 }')));
    expect(result.status).toBe('completed');
    const edited = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', limited(', rateLimit: { strategy: fail }')) });
    expect(edited.divergence).toBeNull();
    expect(fullyVerified(edited)).toBe(false);
    expect(edited.unchecked).toEqual([
      "source Api's rateLimit ({ maxWait: 5, strategy: pause } → { strategy: fail }): its requests were replayed as they were sent, not paced, held or failed again by the edited limit",
    ]);
    const same = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('same', limited(',\n  rateLimit: { strategy: pause, maxWait: 5 }')) });
    expect(fullyVerified(same)).toBe(true);
  });

  it('that would wait out a recorded Retry-After the run failed on: diverges at once, never sleeps it out (probe 107 K2)', { timeout: 20_000 }, async () => {
    c = await openConformance({ backend });
    c.api.on('GET /a', { status: 503, headers: { 'retry-after': '400' }, body: { error: 'busy' } });
    const result = await c.start(c.mission('busy', limited('')));
    // 400 s is past the default maxWait (300 s): the run failed at once.
    expect(result.status).toBe('failed');
    // Before, this slept 400 s (the test's own time limit stops it).
    const edited = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('patient', limited(', rateLimit: { maxWait: 1000 }')) });
    // The edit would have waited and asked again where the run failed.
    expect(edited.divergence).toMatchObject({ stepPath: 'A/0', asked: 'a http.request event at A/0' });
  });
});

describe.each(backends)('%s: an edited auth kind', (backend) => {
  it("is not passed as verified (helper 75: a run answered 401 without credentials verified against `auth: bearer`)", async () => {
    c = await openConformance({ backend });
    c.api.on('GET /x', { status: 401, body: { error: 'unauthorized' } });
    const text = (auth: string) => `mission Auth {
  source Api { auth: ${auth}, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    get "/x" { allow: [401] }
    store { id: "one", error: response.error } -> out { key: .id }
  }
  run A
}
`;
    const result = await c.start(c.mission('auth', text('none')));
    expect(result.status).toBe('completed');
    const edited = await verifyRun(c.log, result.runId, { env: { ...c.env, vars: { ...c.env.vars, REQON_API_TOKEN: 'tok-1234567890' } }, missionFiles: c.mission('edited', text('bearer')) });
    expect(edited.divergence).toBeNull();
    expect(fullyVerified(edited)).toBe(false);
    expect(edited.unchecked).toEqual([
      "source Api's auth (none → bearer): the credentials a request carries are no part of its identity, so whether the API would have answered the edited requests otherwise was not checked",
    ]);
  });
});

describe.each(backends)('%s: an edit that allows a 3xx where the run followed a redirect', (backend) => {
  const get = (options: string) => `mission Moved {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    get "/start" { ${options} }
    store response -> out { key: .id }
  }
  run A
}
`;

  it('is not passed as verified: the log holds the last hop\'s answer, not the redirect the edit would answer with (probe 107 K1)', async () => {
    c = await openConformance({ backend });
    c.api.on('GET /start', { status: 302, headers: { location: '/final' }, raw: '' });
    c.api.on('GET /final', { status: 200, body: [{ id: 'from-final' }] });
    const result = await c.start(c.mission('moved', get('retry: { maxAttempts: 1 }')));
    expect(result.status).toBe('completed');
    expect(fullyVerified(await verifyRun(c.log, result.runId, { env: c.env }))).toBe(true);
    // An allow that takes no 3xx changes nothing of a followed redirect: checked whole.
    expect(fullyVerified(await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('same', get('retry: { maxAttempts: 1 }, allow: [404]')) }))).toBe(true);
    // Before: ✓ — yet run live, the edit takes the 302's empty body as its answer and stores nothing.
    const report = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', get('retry: { maxAttempts: 1 }, allow: [302]')) });
    expect(report.divergence).toBeNull();
    expect(fullyVerified(report)).toBe(false);
    expect(report.unchecked).toContainEqual(expect.stringMatching(/^the 3xx answers the requests of action A allow \(\[none\] → \[302\]\): the run followed a redirect there/));
  });

  it('back to its own URL (a cookie check, a warm-up) as well: not passed as verified (probe 109 K3)', async () => {
    c = await openConformance({ backend });
    let calls = 0;
    c.api.on('GET /start', () => (++calls === 1 ? { status: 302, headers: { location: '/start' }, raw: '' } : { status: 200, body: [{ id: 'second-look' }] }));
    const result = await c.start(c.mission('self', get('retry: { maxAttempts: 1 }')));
    expect(result.status).toBe('completed');
    expect(calls).toBe(2);
    const report = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', get('retry: { maxAttempts: 1 }, allow: [302]')) });
    expect(fullyVerified(report)).toBe(false);
    expect(report.unchecked).toContainEqual(expect.stringMatching(/^the 3xx answers the requests of action A allow \(\[none\] → \[302\]\)/));
  });
});
