/**
 * Who may take a run over from an owner that stopped, in one process with a fake clock:
 * - a dead process on this host (by `$REQON_HOST_ID` when set, else the hostname): at once;
 * - a dead process on another host (whose PIDs this machine cannot see): only once its lease
 *   has expired by the log's clock — never before, whatever PID it names;
 * - an owner string not of the `host:pid:nonce` form: by lease expiry alone.
 * Every case ends with the run completed by the worker and its one POST applied once.
 * SQLite only: the fake clock stands for the log's clock here, and PostgreSQL's leases expire by
 * the server's clock, which no fake advances (test/worker/clock-skew-postgres.int.test.ts).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { hostId, ownerIsDead, parseOwner } from '../../engine/executor/owner.js';
import { prepareNewRun } from '../../engine/executor/run-start.js';
import { timeWorld, type TimeWorld } from '../time/support/time-fixtures.js';
import { deadPid } from '../support/dead-pid.js';

const TTL_MS = 30_000;
const MISSION = `mission Owned {
  source Api { auth: none, base: "http://api.test" }
  action A {
    post "/effects" { body: { id: "one" } }
  }
  run A
}
`;


let world: TimeWorld | undefined;
const savedHostId = process.env.REQON_HOST_ID;
afterEach(async () => {
  await world?.cleanup();
  world = undefined;
  if (savedHostId === undefined) delete process.env.REQON_HOST_ID;
  else process.env.REQON_HOST_ID = savedHostId;
});

/** A run created under `owner`'s lease that never ran a step: what a killed owner leaves. */
async function abandonedRun(w: TimeWorld, owner: string): Promise<string> {
  const files = w.mission('owned.vague', MISSION);
  const prepared = prepareNewRun(files, { sources: { Api: 'http://api.test' }, env: {} }, { log: w.log, env: w.env, dataDir: w.dir, owner, leaseTtlMs: TTL_MS });
  await w.log.createRun(prepared.run, prepared.owner, prepared.ttlMs, prepared.first);
  return prepared.run.runId;
}

describe('takeover of a dead owner', () => {
  it('a dead process on this host is taken over at once', async () => {
    world = await timeWorld();
    const runId = await abandonedRun(world, `${os.hostname()}:${deadPid()}:gone`);
    const worker = world.worker('this-host-worker');
    expect(await worker.tick()).toBe(1);
    await worker.drain();
    expect((await world.log.getRun(runId))?.status).toBe('completed');
    expect([...world.applied.values()]).toEqual([1]);
  });

  it('a dead process on another host waits for its lease to expire by the log clock, then is taken over', async () => {
    world = await timeWorld();
    const runId = await abandonedRun(world, `other-machine:${deadPid()}:gone`);
    const worker = world.worker('this-host-worker');
    expect(await worker.tick()).toBe(0);
    await world.env.clock.advance(TTL_MS - 1);
    expect(await worker.tick()).toBe(0);
    expect((await world.log.getRun(runId))?.owner).toMatch(/^other-machine:/);
    expect(world.applied.size).toBe(0);
    await world.env.clock.advance(2);
    expect(await worker.tick()).toBe(1);
    await worker.drain();
    const run = await world.log.getRun(runId);
    expect(run?.status).toBe('completed');
    expect(run?.leaseEpoch).toBe(2);
    expect([...world.applied.values()]).toEqual([1]);
  });

  it('REQON_HOST_ID is this host: a dead process of that name is taken at once, one of the real hostname is not', async () => {
    process.env.REQON_HOST_ID = 'machine-b';
    expect(hostId()).toBe('machine-b');
    world = await timeWorld();
    const ofB = await abandonedRun(world, `machine-b:${deadPid()}:gone`);
    const ofHostname = await abandonedRun(world, `${os.hostname()}:${deadPid()}:gone`);
    const worker = world.worker('b-worker');
    expect(await worker.tick()).toBe(1);
    await worker.drain();
    expect((await world.log.getRun(ofB))?.status).toBe('completed');
    expect((await world.log.getRun(ofHostname))?.status).toBe('running');
    await world.env.clock.advance(TTL_MS + 1);
    expect(await worker.tick()).toBe(1);
    await worker.drain();
    expect((await world.log.getRun(ofHostname))?.status).toBe('completed');
    expect([...world.applied.values()]).toEqual([1, 1]);
  });

  it('an owner that is not host:pid:nonce is never presumed dead', async () => {
    world = await timeWorld();
    const runId = await abandonedRun(world, 'some-tool');
    const worker = world.worker();
    expect(await worker.tick()).toBe(0);
    await world.env.clock.advance(TTL_MS + 1);
    expect(await worker.tick()).toBe(1);
    await worker.drain();
    expect((await world.log.getRun(runId))?.status).toBe('completed');
  });
});

describe('owner strings', () => {
  it('name a host and a pid, and a live pid here is alive', () => {
    expect(parseOwner('host-a:1234:abc')).toEqual({ host: 'host-a', pid: 1234 });
    expect(parseOwner('no-pid')).toBeNull();
    expect(parseOwner('h:0:x')).toBeNull();
    expect(ownerIsDead(`${hostId()}:${process.ppid}:x`)).toBe(false);
    expect(ownerIsDead(`${hostId()}:${deadPid()}:x`)).toBe(true);
    expect(ownerIsDead(`elsewhere:${deadPid()}:x`)).toBe(false);
  });

  it.runIf(process.platform === 'linux')('a process that exited but was never reaped (a zombie) is dead: it will never renew its lease', async () => {
    // `sleep 0.05` exits first; its parent is then `exec`'d into `sleep 5`, which never reaps it.
    const parent = spawn('sh', ['-c', 'sleep 0.05 & echo $!; exec sleep 5'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const [line] = (await once(parent.stdout!, 'data')) as [Buffer];
      const zombie = Number(line.toString().trim());
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(fs.readFileSync(`/proc/${zombie}/stat`, 'latin1')).toMatch(/\) Z /);
      expect(ownerIsDead(`${hostId()}:${zombie}:x`)).toBe(true);
      expect(ownerIsDead(`${hostId()}:${parent.pid}:x`)).toBe(false);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('a REQON_HOST_ID that cannot be part of an owner string is refused, saying why', () => {
    process.env.REQON_HOST_ID = 'a:b';
    expect(() => hostId()).toThrow(/REQON_HOST_ID must be 1–64 letters, digits.*"a:b"/);
  });
});
