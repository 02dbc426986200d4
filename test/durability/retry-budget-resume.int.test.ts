/**
 * One retry budget, crash or not (GUARANTEES 4): a request's live attempts after a resume continue
 * the count of the attempts its log recorded, so a POST allowed 3 attempts is sent at most 3
 * times however often the run is killed, and fails where a run that never crashed fails. Before,
 * every resume started the count again: killed in the backoff after its first 500, the run was
 * answered on a 4th attempt and completed where a crash-free run failed (and its log no longer
 * verified). An attempt killed in flight (sent, its answer never logged) is made again under the
 * same number and key: its answer is the one a run without the crash would have had.
 * Found by helper 33. Helper 35 found three more ways a resume got more than the budget: a GET's
 * retried attempts were not in the log before its backoff (so a kill in it started the count
 * again), a resume sent the next attempt at once where the run would have waited out its delay
 * (a 429's Retry-After then answered 429 again), and a credential refresh made before the crash
 * was forgotten. Counting a logged refresh as an exchange made was wrong in turn (helper 36): the
 * verdict is logged before the exchange, which the kill may cut short.
 * On both backends.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified } from '../../engine/executor/verify-report.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';
import { builtCli, describeResult, killableRun, runCli, runIdOf, type KillableRun } from './support/cli-build.js';

const MISSION = `mission Budget {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store out: memory("out")
  action Send {
    post "/things" { body: { v: 1 }, retry: { maxAttempts: 3, backoff: constant, initialDelay: 400 } }
    store { id: "one", ok: response.ok } -> out { key: .id }
  }
  run Send
}
`;

let cli: string;
beforeAll(() => {
  cli = builtCli();
}, 180_000);

describe.each(backends)('the retry budget of a resumed request (%s)', (backend) => {
  let h: Conformance;
  beforeEach(async () => {
    h = await openConformance({ backend });
  });
  afterEach(async () => {
    await h.close();
  });

  const posts = () => h.api.requests.filter((r) => r.method === 'POST').length;

  /** `reqon run` of `text` in a child the test kills when an API handler says. */
  const killable = (text: string, extra: string[] = []) =>
    killableRun(cli, ['run', h.mission('budget', text).entry, '--db', h.dbPath, '--source', `Api=${h.api.url}`, ...extra], { cwd: h.dir });

  /** A crash-free run against an API that answers 500 `failures` times, then 201. */
  async function crashFree(failures: number): Promise<{ status: string; message: string; posts: number }> {
    const reference = await openConformance({ backend });
    try {
      let calls = 0;
      reference.api.on('POST /things', () => (++calls <= failures ? { status: 500, body: { error: 'down' } } : { status: 201, body: { ok: true } }));
      const result = await reference.start(reference.mission('budget', MISSION));
      return { status: result.status, message: result.status === 'failed' ? result.error.message : '', posts: calls };
    } finally {
      await reference.close();
    }
  }

  it('killed in the backoff after its first 500: at most 3 attempts in all, and it fails as a crash-free run does', { timeout: 120_000 }, async () => {
    const clean = await crashFree(3);
    expect(clean).toMatchObject({ status: 'failed', posts: 3 });
    expect(clean.message).toMatch(/failed with 500 after 3 attempts/);

    // The API kills the run while it sleeps before attempt 2: attempt 1's 500 is in the log.
    let calls = 0;
    let run: KillableRun | undefined;
    h.api.on('POST /things', () => {
      if (++calls === 1) run?.kill(150);
      return calls <= 3 ? { status: 500, body: { error: 'down' } } : { status: 201, body: { ok: true } };
    });
    run = killable(MISSION);
    const runId = await run.died;
    expect(calls).toBe(1);

    const resumed = await h.resume(runId, { by: 'api' });
    expect(resumed.status).toBe('failed');
    expect(resumed.status === 'failed' ? resumed.error.message : '').toMatch(/failed with 500 after 3 attempts/);
    expect(posts()).toBe(3);
    const attempts = (await h.events(runId)).filter((e) => e.type === 'http.request').map((e) => (e.payload as { attempt: number }).attempt);
    expect(attempts).toEqual([1, 2, 3]);
    expect(fullyVerified(await verifyRun(h.log, runId, { env: h.env }))).toBe(true);
  });

  it('killed in flight: the attempt is made again under its number and key, and the budget holds', { timeout: 120_000 }, async () => {
    const clean = await crashFree(2);
    expect(clean).toMatchObject({ status: 'completed', posts: 3 });

    let calls = 0;
    h.api.on('POST /things', () => (++calls <= 2 ? { status: 500, body: { error: 'down' } } : { status: 201, body: { ok: true } }));
    // after-effect:1 — attempt 1 answered (500), killed before its answer is logged.
    const killed = await runCli(cli, ['run', h.mission('budget', MISSION).entry, '--db', h.dbPath, '--source', `Api=${h.api.url}`, '--crash-at', 'after-effect:1'], { cwd: h.dir });
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runId = runIdOf(killed);

    const resumed = await h.resume(runId, { by: 'api' });
    // The lost answer's request is sent again (the API's 2nd 500, which the crash-free run had on
    // attempt 2 — taken here on attempt 1), then attempt 2 gets the 201... after which nothing is left.
    expect(resumed.status).toBe('completed');
    const requests = (await h.events(runId)).filter((e) => e.type === 'http.request').map((e) => e.payload as { attempt: number; idempotencyKey?: string });
    expect(requests.map((r) => r.attempt)).toEqual([1, 1, 2]);
    expect(new Set(h.api.requests.map((r) => String(r.headers['idempotency-key']))).size).toBe(1);
    expect(await h.store(runId, 'out')).toEqual({ one: { id: 'one', ok: true } });
    expect(fullyVerified(await verifyRun(h.log, runId, { env: h.env }))).toBe(true);
  });

  it('a GET killed in its backoff: its attempts were in the log, and the budget holds', { timeout: 120_000 }, async () => {
    const GET = MISSION.replace('post "/things" { body: { v: 1 },', 'get "/things" {');
    let calls = 0;
    let run: KillableRun | undefined;
    h.api.on('GET /things', () => {
      if (++calls === 2) run?.kill(150);
      return calls <= 4 ? { status: 500, body: { error: 'down' } } : { body: { ok: true } };
    });
    run = killable(GET);
    const runId = await run.died;
    expect(calls).toBe(2);
    const resumed = await h.resume(runId, { by: 'api' });
    // The crash-free run fails after 3 attempts; so does this one, with 3 GETs in all.
    expect(resumed.status).toBe('failed');
    expect(resumed.status === 'failed' ? resumed.error.message : '').toMatch(/failed with 500 after 3 attempts/);
    expect(calls).toBe(3);
  });

  it('a 429 killed in its Retry-After: the resume waits the rest of it out', { timeout: 120_000 }, async () => {
    const TWO = MISSION.replace('maxAttempts: 3, backoff: constant, initialDelay: 400', 'maxAttempts: 2');
    let first = 0;
    let run: KillableRun | undefined;
    h.api.on('POST /things', () => {
      const now = Date.now();
      if (first === 0) {
        first = now;
        run?.kill(200);
      }
      // A window of 2 s from the first request in which the API answers 429, then 201.
      return now - first < 2000 ? { status: 429, headers: { 'retry-after': '2' }, body: { error: 'slow down' } } : { status: 201, body: { ok: true } };
    });
    run = killable(TWO);
    const runId = await run.died;
    const resumed = await h.resume(runId, { by: 'api' });
    expect(resumed.status).toBe('completed');
    expect(posts()).toBe(2);
  });

  it('killed while a refresh exchanges its token: the resume exchanges and completes, as the run without the crash', { timeout: 120_000 }, async () => {
    const OAUTH = MISSION.replace('auth: none', 'auth: oauth2');
    const authFile = path.join(h.dir, 'auth.json');
    fs.writeFileSync(authFile, JSON.stringify({ Api: { type: 'oauth2', accessToken: 'expired', refreshToken: 'r', tokenEndpoint: `${h.api.url}/token` } }));
    let tokens = 0;
    let run: KillableRun | undefined;
    // Only a token the endpoint issued is accepted (helper 36: the resume failed 401 here when a
    // refresh in the log was taken as an exchange made).
    h.api.on('POST /things', (req) => (String(req.headers['authorization']).startsWith('Bearer issued-') ? { status: 201, body: { ok: true } } : { status: 401, body: { error: 'expired' } }));
    h.api.on('POST /token', async () => {
      if (++tokens === 1) run?.kill(100);
      await new Promise((resolve) => setTimeout(resolve, 800));
      return { body: { access_token: `issued-${tokens}`, refresh_token: `r-${tokens}`, expires_in: 3600 } };
    });
    run = killable(OAUTH, ['--auth', authFile]);
    const runId = await run.died;
    const resumed = await h.resume(runId, { by: 'api' });
    expect(resumed.status, resumed.status === 'failed' ? resumed.error.message : '').toBe('completed');
    // Within the budget: the killed attempt's 401, the resume's 401 on the old token, then the 201.
    const attempts = (await h.events(runId)).filter((e) => e.type === 'http.request').map((e) => (e.payload as { attempt: number }).attempt);
    expect(attempts.length).toBeLessThanOrEqual(3);
    expect(await h.store(runId, 'out')).toEqual({ one: { id: 'one', ok: true } });
  });
});
