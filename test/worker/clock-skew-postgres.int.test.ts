/**
 * Clock skew and partitions between workers and the PostgreSQL log (GUARANTEES "Many machines"):
 * - leases are by the database's clock: a worker whose clock runs an hour ahead cannot take a
 *   live lease (on SQLite, one machine and one clock, the same worker would: shown for contrast);
 *   one whose clock runs an hour behind still takes over a lease that expired;
 * - timers are by the workers' clocks: a worker an hour ahead wakes a one-hour pause at once;
 * - a worker cut off from the database (partitioned, paused) past its lease is fenced: another
 *   takes the run over, and the cut-off worker's next commit writes nothing (LeaseLostError).
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeEnv, jsonResponse } from '../../engine/env/fake-env.js';
import { continueRun, RunUnavailableError, startRun } from '../../engine/executor/run-mission.js';
import { prepareNewRun } from '../../engine/executor/run-start.js';
import { LeaseLostError, type MissionFiles } from '../../engine/log/log.js';
import { Worker } from '../../engine/worker/worker.js';
import { backends, openTempLog, type Backend, type TempLog } from '../support/temp-log.js';

const HOUR = 3_600_000;
let temp: TempLog | undefined;
afterEach(async () => {
  await temp?.close();
  temp = undefined;
});

const MISSION = `mission Skew {
  source Api { auth: none, base: "http://api.test" }
  action A {
    post "/effects" { body: { id: "one" } }
  }
  run A
}
`;

function files(dir: string, text = MISSION): MissionFiles {
  const entry = path.join(dir, 'skew.vague');
  return { entry, files: [{ path: entry, text }] };
}

/** A run held by a process on another machine, its lease `ttlMs` long by the log's clock. */
async function heldRun(t: TempLog, ttlMs: number): Promise<string> {
  const env = createFakeEnv({ now: Date.now() });
  const prepared = prepareNewRun(files(t.dir), { sources: { Api: 'http://api.test' }, env: {} }, { log: t.log, env, dataDir: t.dir, owner: 'other-machine:4242:x', leaseTtlMs: ttlMs });
  await t.log.createRun(prepared.run, prepared.owner, prepared.ttlMs, prepared.first);
  return prepared.run.runId;
}

function skewedWorker(t: TempLog, skewMs: number) {
  const env = createFakeEnv({ now: Date.now() + skewMs, handler: async () => jsonResponse(200, { ok: true }) });
  return { env, worker: new Worker({ log: t.log, env, dataDir: path.join(t.dir, 'data'), owner: `skewed:${process.pid}:w` }) };
}

const expire = () => new Promise((r) => setTimeout(r, 1_200));

describe.each(backends.filter((b): b is Backend => b === 'postgres'))('clock skew on %s', (backend) => {
  it('a worker an hour ahead cannot take a live lease', async () => {
    temp = await openTempLog(backend);
    const runId = await heldRun(temp, 60_000);
    const { env, worker } = skewedWorker(temp, HOUR);
    expect(await worker.tick()).toBe(0);
    const taken = await continueRun(runId, {}, { log: temp.log, env, dataDir: temp.dir, owner: 'skewed:1:w' }).catch((e: unknown) => e);
    expect(taken).toBeInstanceOf(RunUnavailableError);
    expect((taken as RunUnavailableError).reason).toBe('owned');
    expect((await temp.log.getRun(runId))?.owner).toBe('other-machine:4242:x');
  });

  it('a worker an hour behind takes over a lease that expired by the database clock', async () => {
    temp = await openTempLog(backend);
    const runId = await heldRun(temp, 1_000);
    await expire();
    const { worker } = skewedWorker(temp, -HOUR);
    expect(await worker.tick()).toBe(1);
    await worker.drain();
    const run = await temp.log.getRun(runId);
    expect(run?.status).toBe('completed');
    expect(run?.leaseEpoch).toBe(2);
  });

  it('timers are by the workers’ clocks: a worker an hour ahead wakes a one-hour pause at once', async () => {
    temp = await openTempLog(backend);
    const env = createFakeEnv({ now: Date.now() });
    const text = MISSION.replace('  action A {\n', '  action A {\n    pause { duration: "1h" }\n');
    const first = await startRun(files(temp.dir, text), { sources: { Api: 'http://api.test' }, env: {} }, { log: temp.log, env, dataDir: temp.dir });
    expect(first.status).toBe('suspended');
    const { worker } = skewedWorker(temp, HOUR);
    expect(await worker.tick()).toBe(1);
    await worker.drain();
    expect((await temp.log.getRun(first.runId))?.status).toBe('completed');
  });

  it('a worker cut off past its lease is fenced: the run is taken over and its late commit writes nothing', async () => {
    temp = await openTempLog(backend);
    const env = createFakeEnv({ now: Date.now() });
    const prepared = prepareNewRun(files(temp.dir), { sources: {}, env: {} }, { log: temp.log, env, dataDir: temp.dir, owner: 'cut-off:1:a', leaseTtlMs: 1_000 });
    const { lease } = await temp.log.createRun(prepared.run, prepared.owner, prepared.ttlMs, prepared.first);
    await expire();
    const other = await temp.openAnother();
    const taken = await other.acquire(lease.runId, 'machine-b:2:b', env.clock.now(), 30_000);
    expect('epoch' in taken && taken.epoch).toBe(2);
    const late = await temp.log
      .commit(lease, [{ kind: 'event', event: { type: 'step.started', stepPath: 'A/0', payload: {}, recordedAt: env.clock.now() } as never }], { durable: true })
      .catch((e: unknown) => e);
    expect(late).toBeInstanceOf(LeaseLostError);
    expect((await temp.log.read(lease.runId)).map((e) => e.type)).toEqual(['run.started']);
  });
});

describe('clock skew on sqlite (one machine, one clock): for contrast', () => {
  it('the log takes the caller’s clock, so a worker an hour ahead would take the lease', async () => {
    temp = await openTempLog('sqlite');
    const runId = await heldRun(temp, 60_000);
    const { worker } = skewedWorker(temp, HOUR);
    expect(await worker.tick()).toBe(1);
    await worker.drain();
    expect((await temp.log.getRun(runId))?.leaseEpoch).toBe(2);
  });
});
