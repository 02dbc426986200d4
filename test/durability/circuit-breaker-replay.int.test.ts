/**
 * A source's circuit breaker under replay (GUARANTEES 13). Its state is the process's, not the
 * log's, so a request it refused was logged only as the step's failure: a replay — a resume,
 * a worker's, `reqon verify` of the very run — found a request asked for where the log had a
 * failure and ended in a non-determinism error (found by helper 33). Now a refusal is recorded
 * where the request would be (an `http.error` "circuit-open", nothing sent) and refused again on
 * replay, and the breaker is told of every replayed attempt at the instant it was made, so a run
 * killed while the circuit opens refuses after its resume what a crash-free run refused (POSTs:
 * their intents and answers are in the log before the next step, where a GET's may not be). On
 * both backends; and the time the run was down counts (an open circuit half-opens after it).
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified } from '../../engine/executor/verify-report.js';
import type { StoredEvent } from '../../engine/log/events.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';
import { builtCli, describeResult, runCli, runIdOf } from './support/cli-build.js';

const MISSION = `mission Breaker {
  source Api {
    auth: none,
    base: "http://127.0.0.1:1",
    circuitBreaker: { failureThreshold: 2, resetTimeout: 600000, successThreshold: 1, failureWindow: 600000 }
  }
  store out: memory("out")
  action Send {
    for x in [1, 2, 3, 4] {
      post "/things" { body: { x: x }, retry: { maxAttempts: 1 } }
      store { id: x, ok: true } -> out { key: .id }
    }
    store { id: "end" } -> out { key: .id }
  }
  run Send
}
`;

/** Each iteration's fetch failure code, in order. */
function failures(events: StoredEvent[]): string[] {
  return events.filter((e) => e.type === 'step.failed' && /^Send\/0\[\d\]\/0$/.test(e.stepPath)).map((e) => (e as StoredEvent<'step.failed'>).payload.error.code);
}

let cli: string;
beforeAll(() => {
  cli = builtCli();
}, 180_000);

describe.each(backends)('a circuit breaker that opened, replayed (%s)', (backend) => {
  let h: Conformance;
  beforeEach(async () => {
    h = await openConformance({ backend });
    h.api.on('POST /things', { status: 500, body: { error: 'down' } });
  });
  afterEach(async () => {
    await h.close();
  });

  const run = (...extra: string[]) => runCli(cli, ['run', h.mission('breaker', MISSION).entry, '--db', h.dbPath, '--source', `Api=${h.api.url}`, ...extra], { cwd: h.dir });
  const sent = () => h.api.requests.filter((r) => r.method === 'POST').length;

  it('a crash-free run verifies, and is refused as it was', { timeout: 120_000 }, async () => {
    const clean = await run();
    expect(clean.code, describeResult(clean)).toBe(0);
    const runId = runIdOf(clean);
    expect(failures(await h.events(runId))).toEqual(['http-status', 'http-status', 'circuit-open', 'circuit-open']);
    expect(sent()).toBe(2);
    expect(fullyVerified(await verifyRun(h.log, runId, { env: h.env }))).toBe(true);
    // As an engine before the refusals were recorded logged it (the step's failure alone): it replays too.
    const before = (await h.events(runId)).filter((e) => !(e.type === 'http.error' && (e as StoredEvent<'http.error'>).payload.error.code === 'circuit-open'));
    const report = await verifyRun(h.log, runId, { env: h.env, events: before });
    expect(report.divergence).toBeNull();
    expect(report.replayed.length).toBe(report.original.length);
  });

  it.each([
    // after the loop: every refusal is in the log
    ['before-effect:3', 2],
    // POST 2 answered, killed before its answer is logged (POST 1's is): sent again, then the circuit opens
    ['after-effect:2', 3],
  ] as const)('killed at %s and resumed: the same failures, the same refusals', { timeout: 120_000 }, async (point, requests) => {
    const killed = await run('--crash-at', point);
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runId = runIdOf(killed);
    const resumed = await h.resume(runId, { by: 'api' });
    expect(resumed.status).toBe('completed');
    expect(failures(await h.events(runId))).toEqual(['http-status', 'http-status', 'circuit-open', 'circuit-open']);
    expect(sent()).toBe(requests);
    expect(await h.store(runId, 'out')).toEqual({ end: { id: 'end' } });
    expect(fullyVerified(await verifyRun(h.log, runId, { env: h.env }))).toBe(true);
  });

  // Helper 35: finished iterations taken as recorded hid their attempts from the breaker, so a
  // resume sent a POST the crash-free run's open circuit refused; helper 36: every source has a
  // breaker (5 failures in 60 s by default), declared or not. Loops with requests are walked.
  it.each([
    ['a declared breaker (3 failures)', 'circuitBreaker: { failureThreshold: 3, resetTimeout: 600000, successThreshold: 1, failureWindow: 600000 }', 5],
    ['the default breaker (5 failures)', '', 7],
  ] as const)('a loop whose finished iterations retried, %s: the resume refuses where a crash-free run does', { timeout: 120_000 }, async (_name, breaker, count) => {
    const LOOP = `mission Flaky {
  source Api {
    auth: none,
    base: "http://127.0.0.1:1"${breaker ? `,\n    ${breaker}` : ''}
  }
  store out: memory("out")
  action Send {
    for x in range(1, ${count + 1}) {
      post "/flaky" { body: { x: x }, retry: { maxAttempts: 3, initialDelay: 10 } }
      store { id: x } -> out { key: .id }
    }
    store { id: "end" } -> out { key: .id }
  }
  run Send
}
`;
    // Each x answers 500 once, then 201: the threshold's failure opens the circuit.
    const serve = (api: Conformance['api']) => {
      const seen = new Map<number, number>();
      api.on('POST /flaky', (req) => {
        const x = (req.body as { x: number }).x;
        seen.set(x, (seen.get(x) ?? 0) + 1);
        return seen.get(x) === 1 ? { status: 500, body: { error: 'flaky' } } : { status: 201, body: { ok: true } };
      });
    };
    const crashFree = async () => {
      const reference = await openConformance({ backend });
      try {
        serve(reference.api);
        const result = await reference.start(reference.mission('flaky', LOOP));
        return { status: result.status, store: await reference.store(result.runId, 'out'), sent: reference.api.requests.length };
      } finally {
        await reference.close();
      }
    };
    const clean = await crashFree();
    expect(clean.status).toBe('completed');
    // The circuit opened before the last x: some were refused.
    expect(Object.keys(clean.store).length).toBeLessThan(count + 1);
    serve(h.api);
    // before-effect:5: x=3's first attempt (each x: its attempts, then its store batch).
    const killed = await runCli(cli, ['run', h.mission('flaky', LOOP).entry, '--db', h.dbPath, '--source', `Api=${h.api.url}`, '--crash-at', 'before-effect:5'], { cwd: h.dir });
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runId = runIdOf(killed);
    const resumed = await h.resume(runId, { by: 'api' });
    expect(resumed.status).toBe(clean.status);
    expect(await h.store(runId, 'out')).toEqual(clean.store);
    // The crash-free run's POSTs, and x=3's first again (killed before it was sent, then sent).
    expect(h.api.requests.length).toBe(clean.sent);
    expect(fullyVerified(await verifyRun(h.log, runId, { env: h.env }))).toBe(true);
  });

  // GUARANTEES 13: time the run was down counts — an open circuit half-opens once its
  // resetTimeout is over, as it would have for a process that never died.
  it('killed with its circuit open: resumed at once it still refuses; resumed after resetTimeout it probes', { timeout: 120_000 }, async () => {
    const SHORT = `mission Downtime {
  source Api {
    auth: none,
    base: "http://127.0.0.1:1",
    circuitBreaker: { failureThreshold: 2, resetTimeout: 2000, successThreshold: 1, failureWindow: 600000 }
  }
  store out: memory("out")
  action Send {
    for x in [1, 2] {
      post "/things" { body: { x: x }, retry: { maxAttempts: 1 } }
    }
    store { id: "opened" } -> out { key: .id }
    post "/things" { body: { x: 3 }, retry: { maxAttempts: 1 } }
    store { id: "after", answer: response } -> out { key: .id }
  }
  run Send
}
`;
    // The circuit is per source and path: x 1 and 2 fail and open it; x 3 would succeed if sent.
    h.api.on('POST /things', (req) => ((req.body as { x: number }).x === 3 ? { status: 201, body: { ok: true } } : { status: 500, body: { error: 'down' } }));
    const afterSent = () => h.api.requests.filter((r) => (r.body as { x?: number }).x === 3).length;
    const killedAtAfter = async () => {
      // Effects 1 and 2 are the loop's POSTs (both 500: the circuit opens); 3 is the store step after them.
      const killed = await runCli(cli, ['run', h.mission('downtime', SHORT).entry, '--db', h.dbPath, '--source', `Api=${h.api.url}`, '--crash-at', 'before-effect:3'], { cwd: h.dir });
      expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
      return runIdOf(killed);
    };
    // Resumed at once: the circuit, rebuilt from the logged attempts, is still open.
    const soon = await killedAtAfter();
    const refused = await h.resume(soon, { by: 'api' });
    expect(refused.status === 'failed' && refused.error.code, JSON.stringify(refused)).toBe('circuit-open');
    expect(afterSent()).toBe(0);
    // Resumed after resetTimeout: half-open, so x 3's POST goes out as the probe and succeeds.
    const late = await killedAtAfter();
    await new Promise((r) => setTimeout(r, 2_500));
    const probed = await h.resume(late, { by: 'api' });
    expect(probed.status, JSON.stringify(probed)).toBe('completed');
    expect(afterSent()).toBe(1);
    expect(await h.store(late, 'out')).toEqual({ opened: { id: 'opened' }, after: { id: 'after', answer: { ok: true } } });
  });
});
