/**
 * LISTEN/NOTIFY on the PostgreSQL log (engine/log/postgres/work-signals.ts): a commit on one
 * connection (another process's, as far as the database knows) signals a worker listening on
 * another — a delivered webhook, a released run, a registered schedule — and a worker with a fake
 * clock that never moves and an idle poll of an hour wakes a waiting run from the signal alone.
 * Skipped, with the reason printed, where no PostgreSQL cluster could be started.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeEnv } from '../../engine/env/fake-env.js';
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
});
