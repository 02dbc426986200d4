/**
 * LISTEN/NOTIFY on the PostgreSQL log (engine/log/postgres/work-signals.ts): a commit on one
 * connection (another process's, as far as the database knows) signals a worker listening on
 * another — a delivered webhook, a released run, a registered schedule — and a worker with a fake
 * clock that never moves and an idle poll of an hour wakes a waiting run from the signal alone; a
 * worker whose every slot is busy when a timer it knew of comes due waits for a slot (it had spun
 * without yielding, starving its own runs).
 * Skipped, with the reason printed, where no PostgreSQL cluster could be started.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeEnv } from '../../engine/env/fake-env.js';
import { createRealEnv } from '../../engine/env/real-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import { prepareNewRun } from '../../engine/executor/run-start.js';
import { Worker } from '../../engine/worker/worker.js';
import { backends, openTempLog, type TempLog } from '../support/temp-log.js';

const pgOnly = backends.filter((b) => b === 'postgres');
let temp: TempLog | undefined;
afterEach(async () => {
  await temp?.close();
  temp = undefined;
});

async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const WAIT = `mission Hook {
  store got: sql("signal_got")
  action A {
    wait { path: "/signal", timeout: 86400000 }
    store response -> got { key: .id }
  }
  run A
}
`;

describe.each(pgOnly)('work signals on %s', (backend) => {
  it('commits on another connection signal the listener: a delivery, a released run, a registered schedule', async () => {
    temp = await openTempLog(backend);
    const other = await temp.openAnother();
    let signals = 0;
    const unwatch = await temp.log.watchWork!(() => signals++);
    try {
      await other.deliverWebhook('/x', 'e-1', { n: 1 }, 1);
      await until('a signal for the delivery', () => signals >= 1);
      const env = createFakeEnv();
      const files = { entry: path.join(temp.dir, 'hook.vague'), files: [{ path: path.join(temp.dir, 'hook.vague'), text: WAIT }] };
      const prepared = prepareNewRun(files, { sources: {}, env: {} }, { log: other, env, dataDir: temp.dir });
      const { lease } = await other.createRun(prepared.run, prepared.owner, prepared.ttlMs, prepared.first);
      const before = signals;
      await other.release(lease);
      await until('a signal for the release', () => signals > before);
      const afterRelease = signals;
      const { registerSchedule } = await import('../../engine/worker/schedules.js');
      const scheduled = { entry: files.entry, files: [{ path: files.entry, text: WAIT.replace('mission Hook {', 'mission Tick {\n  schedule: every 1 hours') }] };
      await registerSchedule(other, scheduled, { sources: {}, env: {} }, env.clock.now());
      await until('a signal for the schedule', () => signals > afterRelease);
    } finally {
      await unwatch();
    }
  });

  it('a worker whose clock never moves, idle poll one hour, completes a waiting run when another process delivers its webhook', async () => {
    temp = await openTempLog(backend);
    const env = createFakeEnv();
    const files = { entry: path.join(temp.dir, 'hook.vague'), files: [{ path: path.join(temp.dir, 'hook.vague'), text: WAIT }] };
    const first = await startRun(files, { sources: {}, env: {} }, { log: temp.log, env, dataDir: temp.dir });
    expect(first.status).toBe('suspended');
    const worker = new Worker({ log: temp.log, env, dataDir: path.join(temp.dir, 'data'), owner: 'listening-worker', pollMs: 100, idlePollMs: 3_600_000 });
    const loop = worker.loop(false);
    try {
      // Let the first tick find nothing and the worker go to sleep.
      await new Promise((r) => setTimeout(r, 200));
      expect((await temp.log.getRun(first.runId))?.status).toBe('suspended');
      const other = await temp.openAnother();
      expect(await other.deliverWebhook('/signal', 'd-1', { id: 'a' }, env.clock.now())).toBe('accepted');
      await until('the run to complete', async () => (await temp!.log.getRun(first.runId))?.status === 'completed');
      expect(await temp.log.readTable('sql', 'signal_got')).toEqual([{ key: 'a', record: { id: 'a' } }]);
      expect(env.clock.now()).toBe((await temp.log.getRun(first.runId))!.createdAt);
    } finally {
      worker.stop();
      await loop;
    }
  });

  it('every slot busy when a timer it knew of comes due: the worker waits for a slot, its runs go on (it spun, starving them)', async () => {
    temp = await openTempLog(backend);
    // POST /slow answers after 2.5 s: the first run holds the worker's one slot past the second's timer.
    const server = http.createServer((req, res) => {
      req.resume();
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), 2500);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const env = createRealEnv({});
    const mission = (name: string, pause: string) => {
      const file = path.join(temp!.dir, `${name}.vague`);
      const text = `mission ${name} {\n  source Api { auth: none, base: "${base}" }\n  action A {\n    pause { duration: "${pause}" }\n    post "/slow" { body: {} }\n  }\n  run A\n}\n`;
      return { entry: file, files: [{ path: file, text }] };
    };
    const deps = { log: temp.log, env, dataDir: path.join(temp.dir, 'data') };
    const first = await startRun(mission('First', '1s'), { sources: {}, env: {} }, deps);
    const second = await startRun(mission('Second', '2s'), { sources: {}, env: {} }, deps);
    expect([first.status, second.status]).toEqual(['suspended', 'suspended']);
    const worker = new Worker({ ...deps, owner: 'one-slot', concurrency: 1, pollMs: 50, idlePollMs: 60_000 });
    let ticks = 0;
    let spun = false;
    const tick = worker.tick.bind(worker);
    // A spinning loop never yields to this test's timers: stop it from inside, and say so.
    worker.tick = async () => {
      if (++ticks > 500) {
        spun = true;
        worker.stop();
      }
      return tick();
    };
    const loop = worker.loop(false);
    try {
      await until('both runs completed', async () => spun || ((await temp!.log.getRun(first.runId))?.status === 'completed' && (await temp!.log.getRun(second.runId))?.status === 'completed'));
      expect(spun, `${ticks} ticks`).toBe(false);
    } finally {
      worker.stop();
      await loop;
      await new Promise((r) => server.close(r));
    }
  });
});
