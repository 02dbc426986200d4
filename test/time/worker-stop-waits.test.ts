/**
 * A stopping worker does not sit out its runs' waits. On a fake clock that never moves unless the
 * test moves it:
 * - a POST answered 503 with `Retry-After: 3600`: `stop()` ends the worker while the step waits,
 *   with no time passing; the run is released with its attempt in the log and no failure; a
 *   second worker carries it on, waits out the rest of the hour (not a fresh hour, not nothing),
 *   and the POST is applied once;
 * - an action's `retry` directive with a 10-minute delay: the same, the rest of the delay waited
 *   out by the worker that carries the run on;
 * - a request waiting for its source's rate limit to reset (`x-ratelimit-remaining: 0`): the same.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { jsonResponse, type FakeHandler } from '../../engine/env/fake-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import { Worker } from '../../engine/worker/worker.js';
import { timeWorld, type TimeWorld } from './support/time-fixtures.js';

const HOUR = 3_600_000;
let world: TimeWorld | undefined;

afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Answers the first POST with `first`, every later one 201; records when each arrived. */
function busyOnce(first: ReturnType<typeof jsonResponse>, arrivals: number[], now: () => number): FakeHandler {
  return async (req) => {
    if (req.method !== 'POST') return jsonResponse(200, []);
    arrivals.push(now());
    return arrivals.length === 1 ? first : jsonResponse(201, { ok: true });
  };
}

/** Starts the run (a 1 s pause first, so a worker wakes it), lets `first` wake it and waits for `reached`. */
async function stopWhileWaiting(w: TimeWorld, text: string, reached: (types: string[]) => boolean): Promise<{ runId: string; stoppedAt: number }> {
  const started = await startRun(w.mission('m.vague', text), { sources: { Api: 'http://api.test' }, env: {} }, { log: w.log, env: w.env, dataDir: w.dir });
  expect(started.status).toBe('suspended');
  // What a `--once` pass counts as runs it could not carry on (exit 1): a stop is none (helper 95).
  const erred: unknown[] = [];
  const first = new Worker({ log: w.log, env: w.env, dataDir: path.join(w.dir, 'data'), owner: 'first', pollMs: 100, onRunError: (_runId, error) => erred.push(error) });
  const loop = first.loop(false);
  await w.env.clock.advance(1_000);
  await until('the run to wait', async () => reached((await w.log.read(started.runId)).map((e) => e.type)));
  const stoppedAt = w.env.clock.now();
  first.stop();
  await loop; // no clock moves: before the fix this never returned
  expect(erred).toEqual([]);
  const run = await w.log.getRun(started.runId);
  expect(run).toMatchObject({ status: 'running', owner: null });
  const types = (await w.log.read(started.runId)).map((e) => e.type);
  expect(types.filter((t) => t === 'step.failed' || t === 'action.failed' || t === 'run.failed')).toEqual([]);
  return { runId: started.runId, stoppedAt };
}

/** A second worker carries the run on; the clock is moved to just before `dueAt`, then past it. */
async function carryOn(w: TimeWorld, runId: string, dueAt: number, arrivals: number[]): Promise<void> {
  // Polling once a minute of the fake clock: moving it an hour wakes the worker 60 times, not 36,000.
  const second = new Worker({ log: w.log, env: w.env, dataDir: path.join(w.dir, 'data'), owner: 'second', pollMs: 60_000 });
  const loop = second.loop(false);
  await until('the second worker to hold the run', async () => (await w.log.getRun(runId))?.owner?.includes('second') === true);
  await w.env.clock.advance(dueAt - 1_000 - w.env.clock.now());
  await new Promise((r) => setTimeout(r, 100));
  expect(arrivals, 'nothing is sent before the wait is over').toHaveLength(1);
  await w.env.clock.advance(2_000);
  await until('the run to complete', async () => (await w.log.getRun(runId))?.status === 'completed');
  second.stop();
  await loop;
  expect(arrivals).toHaveLength(2);
  expect(arrivals[1]).toBeGreaterThanOrEqual(dueAt);
  expect(arrivals[1]).toBeLessThan(dueAt + 2_000);
}

describe('a worker fenced out of a run it carried (stalled past its lease)', () => {
  it('leaves the run to the process that took it over: no error counted, nothing tried again (probe 109 K4: a --once pass exited 1)', async () => {
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    let sent = 0;
    world = await timeWorld({
      handler: async () => {
        sent++;
        await answered;
        return jsonResponse(201, { ok: true });
      },
    });
    const w = world;
    const started = await startRun(w.mission('m.vague', `mission Taken {
  source Api { auth: none, base: "http://placeholder.test" }
  action A {
    pause { duration: "1s" }
    post "/things" { body: { n: 1 } }
  }
  run A
}
`), { sources: { Api: 'http://api.test' }, env: {} }, { log: w.log, env: w.env, dataDir: w.dir });
    const erred: unknown[] = [];
    const lines: string[] = [];
    const worker = new Worker({ log: w.log, env: w.env, dataDir: path.join(w.dir, 'data'), owner: 'stalled', pollMs: 100, onRunError: (_runId, error) => erred.push(error), progress: (line) => lines.push(line) });
    const loop = worker.loop(false);
    await w.env.clock.advance(1_000);
    await until('the POST to be in flight', async () => sent === 1);
    // Another process takes the run over, as if this worker had stalled past its lease.
    const taken = await w.log.acquire(started.runId, 'thief', w.env.clock.now() + 3_600_000, 60_000);
    expect('epoch' in taken).toBe(true);
    answer();
    await until('the worker to be fenced out', async () => lines.some((l) => l.startsWith(`${started.runId}: lease lost to the process that took it over`)));
    worker.stop();
    await loop;
    expect(erred).toEqual([]);
    expect((await w.log.getRun(started.runId))!.owner).toBe('thief');
  });
});

describe('a stopping worker', () => {
  it("stops at once while a POST waits out an hour's Retry-After; the next worker waits out the rest and the POST is applied once", async () => {
    const arrivals: number[] = [];
    let now = () => 0;
    world = await timeWorld({ handler: (req) => busyOnce(jsonResponse(503, { error: 'busy' }, { 'retry-after': '3600' }), arrivals, now)(req) });
    const w = world;
    now = () => w.env.clock.now();
    const { runId } = await stopWhileWaiting(
      w,
      `mission Busy {
  source Api { auth: none, base: "http://placeholder.test" }
  action A {
    pause { duration: "1s" }
    post "/things" { body: { n: 1 }, retry: { maxAttempts: 3, maxDelay: 7200000 } }
  }
  run A
}
`,
      (types) => types.includes('http.response'),
    );
    expect(arrivals).toHaveLength(1);
    await carryOn(w, runId, arrivals[0]! + HOUR, arrivals);
    expect([...w.applied.values()]).toEqual([1]);
  });

  it("stops at once during an action retry's delay; the next worker waits out the rest of it", async () => {
    const arrivals: number[] = [];
    let now = () => 0;
    world = await timeWorld({ handler: (req) => busyOnce(jsonResponse(503, { state: 'pending' }), arrivals, now)(req) });
    const w = world;
    now = () => w.env.clock.now();
    const { runId } = await stopWhileWaiting(
      w,
      `mission Again {
  source Api { auth: none, base: "http://placeholder.test" }
  action A {
    pause { duration: "1s" }
    post "/things" { body: { n: 1 }, allow: [503] }
    match response {
      { state: "pending" } -> retry { maxAttempts: 3, delay: 600000 },
      _ -> continue
    }
  }
  run A
}
`,
      (types) => types.includes('action.retrying'),
    );
    const retrying = (await w.log.read(runId)).find((e) => e.type === 'action.retrying')!;
    expect(retrying.payload).toMatchObject({ delayMs: 600_000 });
    await carryOn(w, runId, retrying.recordedAt + 600_000, arrivals);
  });

  it('stops at once while the next request waits for the rate limit to reset; the next worker waits out the rest, the POST applied once', async () => {
    const arrivals: number[] = [];
    let now = () => 0;
    // The first POST's answer says none are left until 120 s from now.
    world = await timeWorld({ handler: (req) => busyOnce(jsonResponse(201, { ok: true }, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '120' }), arrivals, now)(req) });
    const w = world;
    now = () => w.env.clock.now();
    const { runId } = await stopWhileWaiting(
      w,
      `mission Limited {
  source Api { auth: none, base: "http://placeholder.test" }
  action A {
    pause { duration: "1s" }
    post "/things" { body: { n: 1 } }
    post "/things" { body: { n: 2 } }
  }
  run A
}
`,
      // The limiter's sleep (the worker's own polls sleep 100 ms).
      () => w.env.clock.sleeps.some((ms) => ms >= 60_000),
    );
    expect(arrivals).toHaveLength(1);
    await carryOn(w, runId, arrivals[0]! + 120_000, arrivals);
    expect([...w.applied.values()]).toEqual([1, 1]);
  });
});
