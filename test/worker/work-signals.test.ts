/**
 * A worker on a log that signals new work (`watchWork`, LISTEN/NOTIFY on PostgreSQL) does not
 * poll busily, yet misses nothing. With a fake clock and an idle poll of an hour:
 * - a webhook delivered by another process wakes a waiting run at the signal, with no time passing
 *   — and without the signal it is not seen until the idle poll;
 * - a 10-minute timer wakes the worker at its due instant, not an hour later;
 * - a log whose listening fails is polled at `pollMs`, and the worker says so.
 * The SQLite log (no signals) is exercised by the rest of the time suite.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startRun } from '../../engine/executor/run-mission.js';
import type { EventLog } from '../../engine/log/log.js';
import { Worker } from '../../engine/worker/worker.js';
import { timeWorld, type TimeWorld } from '../time/support/time-fixtures.js';

const HOUR = 3_600_000;
let world: TimeWorld | undefined;
let running: { worker: Worker; loop: Promise<void> } | undefined;

afterEach(async () => {
  running?.worker.stop();
  await running?.loop;
  running = undefined;
  await world?.cleanup();
  world = undefined;
});

/** Gives `log` a `watchWork` driven by the test; returns the function that signals. */
function signalling(log: EventLog): { signal(): void; listeners(): number } {
  const listeners = new Set<() => void>();
  log.watchWork = async (listener) => {
    listeners.add(listener);
    return async () => void listeners.delete(listener);
  };
  return { signal: () => listeners.forEach((l) => l()), listeners: () => listeners.size };
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function startLoop(w: TimeWorld, opts: { pollMs: number; idlePollMs: number }, progress?: (line: string) => void): Worker {
  const worker = new Worker({ log: w.log, env: w.env, dataDir: path.join(w.dir, 'data'), owner: 'signalled-worker', ...opts, ...(progress ? { progress } : {}) });
  running = { worker, loop: worker.loop(false) };
  return worker;
}

const WAIT = `mission Hook {
  store got: memory("got")
  action A {
    wait { path: "/signal", timeout: 86400000 }
    store response -> got { key: .id }
  }
  run A
}
`;

describe('a worker woken by work signals', () => {
  it('a delivered webhook wakes the waiting run at the signal; without it, nothing is seen before the idle poll', async () => {
    world = await timeWorld();
    const w = world;
    const signals = signalling(w.log);
    const first = await startRun(w.mission('hook.vague', WAIT), { sources: {}, env: {} }, { log: w.log, env: w.env, dataDir: w.dir });
    expect(first.status).toBe('suspended');
    startLoop(w, { pollMs: 100, idlePollMs: HOUR });
    await until('the worker to listen', async () => signals.listeners() === 1);
    await new Promise((r) => setTimeout(r, 50));

    expect(await w.log.deliverWebhook('/signal', 'd-1', { id: 'a' }, w.env.clock.now())).toBe('accepted');
    await new Promise((r) => setTimeout(r, 300));
    expect((await w.log.getRun(first.runId))?.status).toBe('suspended');

    signals.signal();
    await until('the run to complete', async () => (await w.log.getRun(first.runId))?.status === 'completed');
    expect(w.env.clock.now()).toBe((await w.log.getRun(first.runId))!.createdAt);
  });

  it('a timer wakes the worker at its due instant, not at the idle poll', async () => {
    world = await timeWorld();
    const w = world;
    signalling(w.log);
    const mission = `mission Timer {
  source Api { auth: none, base: "http://api.test" }
  action A {
    pause { duration: "10m" }
    post "/after" { body: { step: 2 } }
  }
  run A
}
`;
    const first = await startRun(w.mission('timer.vague', mission), { sources: { Api: 'http://api.test' }, env: {} }, { log: w.log, env: w.env, dataDir: w.dir });
    expect(first.status).toBe('suspended');
    const due = (await w.log.getRun(first.runId))!.wakeAt!;
    startLoop(w, { pollMs: 100, idlePollMs: HOUR });
    await new Promise((r) => setTimeout(r, 50));
    await w.env.clock.advance(due - w.env.clock.now());
    await until('the run to complete', async () => (await w.log.getRun(first.runId))?.status === 'completed');
    expect(w.env.clock.now()).toBe(due);
    expect([...w.applied.values()]).toEqual([1]);
  });

  it('a log that cannot listen is polled at pollMs, and the worker says so', async () => {
    world = await timeWorld();
    const w = world;
    w.log.watchWork = async () => {
      throw new Error('connection refused');
    };
    const first = await startRun(w.mission('hook.vague', WAIT), { sources: {}, env: {} }, { log: w.log, env: w.env, dataDir: w.dir });
    const lines: string[] = [];
    startLoop(w, { pollMs: 100, idlePollMs: HOUR }, (line) => lines.push(line));
    await until('the worker to start polling', async () => lines.length > 0);
    expect(lines[0]).toBe('not listening for new work (connection refused): polling every 100 ms');
    expect(await w.log.deliverWebhook('/signal', 'd-1', { id: 'a' }, w.env.clock.now())).toBe('accepted');
    await w.env.clock.advance(100);
    await until('the run to complete', async () => (await w.log.getRun(first.runId))?.status === 'completed');
  });
});
