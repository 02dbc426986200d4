/**
 * The crash lab's state machine and verdict, with simulated run processes that write a real temp
 * SQLite log and send real requests through the lab's answer proxy to the demo API
 * (assets/demo/demo-api.mjs): the armed process dies after sending its POST, the resume re-sends it
 * with the same Idempotency-Key and finishes. The proxy answers the armed run from the reference
 * run's recording and counts its writes per key.
 * SQLite only: a simulated resume takes the lease over by passing a `now` an hour ahead, and
 * PostgreSQL's leases expire by the server's clock, whatever a caller passes.
 */
import { CRASH_POINT_FIRED } from '../../engine/journal/crash-points.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealClock } from '../../engine/env/real-env.js';
import type { NewEvent } from '../../engine/log/events.js';
import type { EventLog, Lease } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import type { CrashLabStatus } from '../../engine/protocol/protocol.js';
import type { CliProcess, ExitInfo, RunArgs } from '../../engine/server/cli-process.js';
import { CrashLab, pickCrashes } from '../../engine/server/crash-lab.js';
import { RunViews } from '../../engine/server/run-views.js';
// @ts-expect-error plain ESM JavaScript without type declarations
import { startDemoApi } from '../../assets/demo/demo-api.mjs';

interface DemoApi {
  url: string;
  close(): Promise<void>;
}

describe('crash lab', () => {
  let dir: string;
  let log: EventLog;
  let api: DemoApi;
  let counter = 0;
  const leases = new Map<string, Lease>();
  /** What the "mission" stores for order b; a test changes it to make the runs differ. */
  let recordB: Record<string, unknown> = { id: 'b', total: 2 };
  /** When set, an armed run's resume stores this instead (a resume that does not end like the crash-free run). */
  let resumedB: Record<string, unknown> | null = null;
  /**
   * When set, the resume suspends on a timer (exit 10) and a simulated worker wakes it: its
   * compare-and-set, then a gap before it takes the lease, then the rest of the run.
   */
  let workerWakesTimer: 'takes-lease' | 'dies' | null = null;
  /** Each simulated run's `--source` values: the lab points them at its proxy. */
  const sourcesOf = new Map<string, Record<string, string>>();
  /** A parseable owner whose process does not exist: the lab sees a dead owner after a "crash". */
  const owner = () => `test-lab:999999:${counter}`;

  const ev = (type: NewEvent['type'], stepPath: string, payload: unknown): NewEvent => ({ type, stepPath, payload, recordedAt: 1_700_000_000_000 + counter } as NewEvent);
  const commit = (runId: string, entries: NewEvent[]) => log.commit(leases.get(runId)!, entries.map((event) => ({ kind: 'event', event })), { durable: false });

  async function post(runId: string): Promise<void> {
    const key = `${runId}:Sync/1`;
    const url = `${sourcesOf.get(runId)!.Shop}/confirmations`;
    await commit(runId, [ev('http.request', 'Sync/1', { effectId: key, attempt: 1, idempotencyKey: key, request: { method: 'POST', url, headers: {} } })]);
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ orderId: 'a' }) });
    await res.json();
  }

  async function finish(runId: string, record = recordB): Promise<void> {
    await commit(runId, [
      ev('http.response', 'Sync/1', { effectId: `${runId}:Sync/1`, attempt: 1, response: { status: 201, headers: {}, body: {} }, durationMs: 1, verdict: 'success' }),
      ev('store.write', 'Sync/2', { effectId: `${runId}:Sync/2`, store: 'orders', key: 'b', record, op: 'set' }),
      ev('run.completed', '', { actionsRun: ['Sync'] }),
    ]);
    await log.commit(leases.get(runId)!, [], { durable: true, status: { status: 'completed' } });
  }

  /** The next armed process is killed by something else than its point (the studio's "Kill process"): it says nothing as it dies. */
  let killedOutside = false;

  function proc(runId: string, command: 'run' | 'resume', work: () => Promise<ExitInfo>): CliProcess {
    const exited = work();
    let said = '';
    // A process killed by its armed point says so as it dies (journal/crash-points.ts).
    const killedFromOutside = killedOutside;
    void exited.then((exit) => {
      if (exit.signal === 'SIGKILL' && !killedFromOutside) said = `reqon: crash point after-effect:1 ${CRASH_POINT_FIRED}\n`;
    });
    return { pid: 1000 + counter, runId, args: [command], exited, output: () => said, kill: () => true };
  }

  async function spawnRun(run: RunArgs): Promise<CliProcess> {
    counter += 1;
    const runId = `sim-${counter}`;
    const created = await log.createRun(
      { runId, mission: 'Demo', missionHash: 'h', missionFiles: { entry: run.missionPath, files: [{ path: run.missionPath, text: 'mission Demo {}' }] }, options: { sources: {}, env: {} }, createdAt: 1 },
      owner(),
      600_000,
      [ev('run.started', '', { mission: 'Demo', missionHash: 'h' })],
    );
    leases.set(runId, created.lease);
    sourcesOf.set(runId, run.sources ?? {});
    return proc(runId, 'run', async () => {
      await commit(runId, [ev('store.write', 'Sync/0', { effectId: `${runId}:Sync/0`, store: 'orders', key: 'a', record: { id: 'a', total: 1 }, op: 'set' })]);
      await post(runId);
      // The simulated mission reaches after-effect once: only that arming kills it.
      if (run.crashAt === 'after-effect:1') return { code: null, signal: 'SIGKILL' };
      await finish(runId);
      return { code: 0, signal: null };
    });
  }

  async function spawnResume(runId: string): Promise<CliProcess> {
    counter += 1;
    const lease = await log.acquire(runId, owner(), Date.now() + 3_600_000, 600_000);
    if (!('epoch' in lease)) throw new Error('lease refused');
    leases.set(runId, lease);
    return proc(runId, 'resume', async () => {
      await commit(runId, [ev('run.resumed', '', { reason: 'crash', owner: owner(), replayFromSeq: 3 })]);
      await post(runId); // replay re-sends the request whose outcome was not recorded: same key
      if (workerWakesTimer !== null && !(await log.read(runId)).some((e) => e.type === 'run.suspended')) {
        const wakeAt = Date.now() + 200;
        await log.commit(leases.get(runId)!, [{ kind: 'event', event: ev('run.suspended', 'Sync/2', { reason: 'timer', dueAt: wakeAt }) }], {
          durable: true,
          status: { status: 'suspended', waitingOn: 'timer:Sync/2', wakeAt, releaseLease: true },
        });
        void wakeAsWorker(runId, wakeAt);
        return { code: 10, signal: null };
      }
      await finish(runId, resumedB ?? recordB);
      return { code: 0, signal: null };
    });
  }

  /** The studio's worker waking a due timer: the run is `running` with no owner until it takes the lease. */
  async function wakeAsWorker(runId: string, wakeAt: number): Promise<void> {
    await new Promise((r) => setTimeout(r, Math.max(0, wakeAt - Date.now())));
    const run = (await log.getRun(runId))!;
    const outcome = await log.resumeSuspended(runId, 'timer:Sync/2', ev('run.resumed', '', { reason: 'manual', owner: 'timer', replayFromSeq: run.lastSeq }), run.lastSeq);
    if (outcome !== 'resumed') throw new Error(`the simulated worker could not wake the timer: ${outcome}`);
    if (workerWakesTimer === 'dies') return;
    await new Promise((r) => setTimeout(r, 1_000));
    const lease = await log.acquire(runId, `worker-host:${process.pid}:1`, Date.now(), 600_000);
    if (!('epoch' in lease)) throw new Error('the simulated worker lost the run it woke');
    leases.set(runId, lease);
    await finish(runId);
  }

  function lab({ scheduler = false, handoverGraceMs = undefined as number | undefined } = {}): { lab: CrashLab; pushes: CrashLabStatus[] } {
    const pushes: CrashLabStatus[] = [];
    const crashLab = new CrashLab({
      spawnRun,
      spawnResume,
      views: new RunViews(log, () => 0),
      clock: new RealClock(),
      labHost: 'test-lab',
      scheduler,
      ...(handoverGraceMs !== undefined ? { handoverGraceMs } : {}),
      // No verifier here: the verdict must say the replay was not checked, never pass it.
      verify: () => Promise.reject(new Error('no verifier in this test')),
      changed: (s) => pushes.push(s),
      newId: () => `lab-${++counter}`,
    });
    return { lab: crashLab, pushes };
  }

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-crash-lab-'));
    log = await openLog(path.join(dir, 'reqon.db'));
    api = (await startDemoApi()) as DemoApi;
  });

  afterAll(async () => {
    await api.close();
    await log.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const plan = () => ({ mode: 'single' as const, run: { missionPath: 'demo.vague' }, upstreams: { Shop: api.url }, crashAt: 'after-effect:1', maxCrashes: 1 });

  it('kills, resumes and proves exactly-once against a crash-free reference run served the same answers', async () => {
    const { lab: crashLab, pushes } = lab();
    const started = crashLab.start(plan());
    expect(started.phase).toBe('reference');
    const done = await crashLab.settled(started.labId);
    expect(done.error).toBeNull();
    expect(done.phase).toBe('done');
    expect(done.processes.map((p) => `${p.command}:${p.signal ?? p.code}`)).toEqual(['run:SIGKILL', 'resume:0']);
    // Every check it made held, but the replay was not checked: not fully checked, never ✓.
    expect(done.verdict).toMatchObject({ ok: false, tested: true, storesEqual: true, duplicateEffects: 0, crashes: 1, finalStatus: 'completed' });
    expect(done.verdict!.explanation).toMatch(/^not fully checked after 1 crash\(es\): replay of the log not checked: no verifier in this test; what was checked held: /);
    // The resume re-sent the POST with its key: two requests at the proxy, one reference write matched.
    expect(done.verdict!.effects).toEqual([{ idempotencyKey: `${done.runId}:Sync/1`, requests: 2, effects: 1 }]);
    const checks = Object.fromEntries(done.verdict!.checks.map((c) => [c.name, c.ok]));
    expect(checks).toEqual({ completed: true, stores: true, writes: true, requests: true, replay: null });
    expect(done.verdict!.checks.find((c) => c.name === 'replay')!.label).toMatch(/not checked: no verifier in this test/);
    // The armed run's writes were answered by the proxy: the API applied only the reference run's.
    expect(pushes.map((p) => p.phase)).toEqual(expect.arrayContaining(['reference', 'armed', 'resuming', 'verifying', 'done']));
  });

  it('leaves a run the worker has just woken to the worker, rather than racing it for the lease', async () => {
    const { lab: crashLab } = lab({ scheduler: true });
    workerWakesTimer = 'takes-lease';
    try {
      const done = await crashLab.settled(crashLab.start(plan()).labId);
      expect(done.error).toBeNull();
      // Between the worker's compare-and-set and its lease the run is `running` with no owner: the lab followed it.
      expect(done.processes.map((p) => `${p.command}:${p.signal ?? p.code}`)).toEqual(['run:SIGKILL', 'resume:10']);
      expect(done.verdict).toMatchObject({ tested: true, finalStatus: 'completed', duplicateEffects: 0 });
    } finally {
      workerWakesTimer = null;
    }
  });

  it('carries on itself a run whose waker died before taking the lease, once the grace is over', async () => {
    const { lab: crashLab } = lab({ scheduler: true, handoverGraceMs: 500 });
    workerWakesTimer = 'dies';
    try {
      const done = await crashLab.settled(crashLab.start(plan()).labId);
      expect(done.error).toBeNull();
      expect(done.processes.map((p) => `${p.command}:${p.signal ?? p.code}`)).toEqual(['run:SIGKILL', 'resume:10', 'resume:0']);
      expect(done.verdict).toMatchObject({ tested: true, finalStatus: 'completed' });
    } finally {
      workerWakesTimer = null;
    }
  });

  it('reports store differences from the reference run', async () => {
    const { lab: crashLab } = lab();
    resumedB = { id: 'b', total: 3 };
    try {
      const done = await crashLab.settled(crashLab.start(plan()).labId);
      expect(done.verdict).toMatchObject({ ok: false, tested: true, storesEqual: false });
      expect(done.verdict!.storeDiff).toEqual([{ path: 'stores.orders.b.total', before: 2, after: 3, change: 'changed' }]);
      expect(done.verdict!.explanation).toContain('store difference');
    } finally {
      resumedB = null;
    }
  });

  it('calls a lab in which no crash happened "not tested", never a survivor', async () => {
    const { lab: crashLab } = lab();
    // The simulated run's armed process dies only when armed; with no kill the run just completes.
    const done = await crashLab.settled(crashLab.start({ ...plan(), crashAt: 'after-effect:5' }).labId);
    expect(done.phase).toBe('done');
    expect(done.verdict).toMatchObject({ ok: false, tested: false, crashes: 0 });
    expect(done.verdict!.explanation).toBe('not tested: no crash happened (after-effect:5 was never reached by the run)');
  });

  it('an armed process killed by something else than its point is a crash, never its pick\'s firing: not fully checked', async () => {
    const { lab: crashLab } = lab();
    killedOutside = true;
    try {
      const done = await crashLab.settled(crashLab.start(plan()).labId);
      expect(done.phase).toBe('done');
      expect(done.processes.map((p) => [p.command, p.signal ?? p.code, p.fired])).toEqual([
        ['run', 'SIGKILL', false],
        ['resume', 0, false],
      ]);
      expect(done.verdict).toMatchObject({ ok: false, tested: true, crashes: 1 });
      expect(done.verdict!.checks.find((c) => c.name === 'picks')).toMatchObject({ ok: null });
      expect(done.verdict!.explanation).toMatch(/^not fully checked after 1 crash\(es\): .*not tested: 1 of the 1 picked crash point\(s\) never fired \(after-effect:1\)/);
    } finally {
      killedOutside = false;
    }
  });

  it('chaos picks are points the reference run reached, in the order it reached them', async () => {
    const { lab: crashLab } = lab();
    const done = await crashLab.settled(crashLab.start(plan()).labId);
    const events = await log.read(done.referenceRunId!);
    expect(pickCrashes(events, 99, Math.random)).toEqual(['before-effect:1', 'mid-store:1', 'before-effect:2', 'after-effect:1', 'before-effect:3', 'mid-store:2']);
    const some = pickCrashes(events, 3, Math.random);
    expect(some).toHaveLength(3);
    const all = pickCrashes(events, 99, Math.random);
    expect(some.map((p) => all.indexOf(p))).toEqual([...some.map((p) => all.indexOf(p))].sort((a, b) => a - b));
  });

  it('answers not-found for an unknown lab', () => {
    expect(() => lab().lab.status('lab-nope')).toThrow(/no crash lab "lab-nope"/);
  });
});
