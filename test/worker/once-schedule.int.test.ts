/**
 * `reqon worker --once` with a schedule that is always due (`every 1 seconds`, a run that takes
 * longer than that): the pass fires what was due when it started, finishes those runs, and ends.
 * Before, each run's end found the next second's firing due, fired it, and the pass never ended.
 * On a fake clock that moves only when something sleeps (the API sleeps 1.5 s per request), on
 * every log backend. A guard stops the worker after a few runs so a regression fails, not hangs.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeEnv, jsonResponse, type FakeEnv } from '../../engine/env/fake-env.js';
import type { RunResult } from '../../engine/executor/run-mission.js';
import { registerSchedule } from '../../engine/worker/schedules.js';
import { Worker } from '../../engine/worker/worker.js';
import { backends, openTempLog, type TempLog } from '../support/temp-log.js';

const MISSION = `mission Tick {
  schedule: every 1 seconds
  source Api { auth: none, base: "http://fake.test" }
  store done: memory("done")
  action A {
    get "/slow"
    store { id: "x" } -> done { key: .id }
  }
  run A
}
`;

let t: TempLog | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe.each(backends)('%s', (backend) => {
  it('a --once pass fires the firing due at its start, finishes its run, and ends', async () => {
    t = await openTempLog(backend);
    const log = t.log;
    let env: FakeEnv | undefined;
    env = createFakeEnv({
      autoAdvance: true,
      handler: async () => {
        await env!.clock.sleep(1500); // the request takes longer than the schedule's period
        return jsonResponse(200, { ok: true });
      },
    });
    const file = path.join(t.dir, 'tick.vague');
    await registerSchedule(log, { entry: file, files: [{ path: file, text: MISSION }] }, { sources: {}, env: {} }, env.clock.now());
    await env.clock.sleep(1000); // the first firing is due when the pass starts
    const started = env.clock.now();

    const ended: RunResult[] = [];
    const lines: string[] = [];
    const worker: Worker = new Worker({
      log,
      env,
      dataDir: path.join(t.dir, 'data'),
      owner: 'once-worker',
      pollMs: 100,
      progress: (line) => lines.push(line),
      onRunEnd: (result) => {
        ended.push(result);
        if (ended.length >= 3) worker.stop(); // the guard: a pass that would not end
      },
    });
    await worker.loop(true);

    expect(worker.stopped, lines.join('\n')).toBe(false);
    expect(ended.map((r) => r.status)).toEqual(['completed']);
    const firings = await log.scheduleFirings('Tick');
    expect(firings.map((f) => f.dueAt)).toEqual([started]);
    // The schedule goes on: its next firing is left to the next pass (or a long-running worker).
    const next = (await log.getSchedule('Tick'))!.nextFireAt!;
    expect(next).toBeGreaterThan(started);
    expect(lines.filter((l) => l.startsWith('schedule Tick: fired'))).toHaveLength(1);
  });

  it("a schedule whose --auth file cannot be read fires a run that fails at its request, which the schedule's retry sees (helper 91)", async () => {
    // Before: every poll printed "cannot fire" and fired nothing — no run, no failure, no retry,
    // and `worker --once` exited as if all were well.
    t = await openTempLog(backend);
    const log = t.log;
    const env = createFakeEnv({ autoAdvance: true, handler: async () => jsonResponse(200, { ok: true }) });
    const file = path.join(t.dir, 'tick.vague');
    const text = MISSION.replace('every 1 seconds', 'every 1 hours').replace('auth: none', 'auth: bearer');
    await registerSchedule(log, { entry: file, files: [{ path: file, text }] }, { sources: {}, env: {}, authFile: path.join(t.dir, 'gone.json') }, env.clock.now());
    await env.clock.sleep(3_600_000);
    const ended: RunResult[] = [];
    const lines: string[] = [];
    const worker: Worker = new Worker({ log, env, dataDir: path.join(t.dir, 'data'), owner: 'once-worker', pollMs: 100, progress: (line) => lines.push(line), onRunEnd: (result) => void ended.push(result) });
    await worker.loop(true);
    expect(ended.map((r) => r.status), lines.join('\n')).toEqual(['failed']);
    const failed = ended[0] as Extract<RunResult, { status: 'failed' }>;
    expect(failed.error.message).toMatch(/source "Api" declares auth: bearer, and the run's --auth file could not be read: cannot read auth file .*gone\.json/);
    expect(lines.some((l) => /cannot fire/.test(l))).toBe(false);
    expect(await log.scheduleFirings('Tick')).toHaveLength(1);
  });
});
