/**
 * The crash lab armed at a point that lies after a timer `pause` the reference run got past. The
 * armed process suspends at the pause (exit 10) before reaching its point; the lab used to let the
 * run be carried on unarmed (by the studio's worker, or by its own resume without `--crash-at`) and
 * said "not tested: … was never reached by the run", which was false. The point now stays armed
 * until it fires: the lab holds the timer from the worker, resumes the run once it is due, armed,
 * and the verdict is real. With the worker and without it, with the real CLI. And the verdict's
 * words when the run was carried on unarmed all the same: "the run suspended … before reaching …",
 * never "never reached", never ✓.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CrashLabStatus } from '../../engine/protocol/protocol.js';
import { judgeLab } from '../../engine/server/crash-lab.js';
import { createStudioService, type StudioService } from '../../engine/server/studio-service.js';
import { builtEngine } from '../support/built-engine.js';
import { FakeApi } from '../support/fake-api.js';

const MISSION = `mission LabPause {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: sql("lab_pause_out")
  action A {
    get "/token"
    post "/first" { body: { t: response.tok } }
    store { id: "first", srv: response.id } -> out
    pause { duration: "1s" }
    get "/token"
    post "/second" { body: { t: response.tok } }
    store { id: "second", srv: response.id } -> out
  }
  run A
}
`;

describe.each([
  ['with the studio\'s worker', true],
  ['without a worker', false],
])('crash lab past a timer pause, %s', (_name, worker) => {
  let dir: string;
  let api: FakeApi;
  let service: StudioService;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-lab-pause-'));
    fs.writeFileSync(path.join(dir, 'pause.vague'), MISSION);
    fs.writeFileSync(path.join(dir, 'pause-now.vague'), MISSION.replace('duration: "1s"', 'duration: "1ms"'));
    fs.writeFileSync(path.join(dir, 'pause-long.vague'), MISSION.replace('duration: "1s"', 'duration: "2h"'));
    fs.writeFileSync(path.join(dir, 'wait-long.vague'), MISSION.replace('pause { duration: "1s" }', 'wait { path: "/hooks/go", timeout: 7200000 }'));
    let served = 0;
    api = await new FakeApi()
      .on('GET /token', () => ({ body: { tok: `t${++served}` } }))
      .on('POST /first', () => ({ body: { id: `first-${++served}` } }))
      .on('POST /second', () => ({ body: { id: `second-${++served}` } }))
      .start();
    service = await createStudioService({ dbPath: path.join(dir, 'reqon.db'), cliPath: builtEngine().cli, cwd: dir, pollIntervalMs: 50, worker, workerPollMs: 50 });
  }, 180_000);

  afterAll(async () => {
    await service?.close();
    await api?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the point armed across the suspension: the run crashes there, resumes and the verdict is real', async () => {
    const started = await service.handle('crashlab.start', { missionPath: 'pause.vague', sources: { Api: api.url }, crashAt: 'after-effect:4' });
    const done: CrashLabStatus = await service.labSettled(started.labId);
    expect(done.error).toBeNull();
    // Suspended at the pause, resumed armed (killed at its point), resumed to the end.
    expect(done.processes.map((p) => `${p.command}:${p.crashAt ?? '-'}:${p.signal ?? p.code}`)).toEqual([
      'run:after-effect:4:10',
      'resume:after-effect:4:SIGKILL',
      'resume:-:0',
    ]);
    expect(done.verdict).toMatchObject({ ok: true, tested: true, crashes: 1, finalStatus: 'completed' });
    expect(done.verdict!.explanation).toMatch(/^survived 1 crash/);
    // The armed run's pause was woken by the lab, not by the worker unarmed, and not before it was due.
    const events = await service.handle('run.events', { runId: done.runId! });
    const created = events.find((e) => e.type === 'pause.created')!;
    const resumed = events.find((e) => e.type === 'pause.resumed')!;
    expect((resumed.payload as { by: string }).by).toBe('cli');
    expect(resumed.recordedAt).toBeGreaterThanOrEqual((created.payload as { dueAt: number }).dueAt);
  }, 180_000);

  it('a timer hours away: the lab says so at once, not "not woken" ten minutes later', async () => {
    const t0 = Date.now();
    const started = await service.handle('crashlab.start', { missionPath: 'pause-long.vague', sources: { Api: api.url }, crashAt: 'after-effect:4' });
    const done: CrashLabStatus = await service.labSettled(started.labId);
    expect(done.verdict).toBeNull();
    expect(done.error).toMatch(/suspended on a timer due \S+ \(in about 120 minutes\): the crash lab carries a run past timers due within 10 minutes only/);
    expect(done.error).not.toMatch(/not woken/);
    expect(Date.now() - t0).toBeLessThan(120_000);
    // The reference run suspended there, through the lab's proxy, closed now: it is stopped, not
    // left for a worker to wake in two hours against a closed port (a run of junk failures).
    const suspended = /^run (\S+) suspended on a timer/.exec(done.error!)![1]!;
    expect(done.error).toContain(`The lab stopped run ${suspended} (failed), since its API was the lab's proxy`);
    const armed = await service.handle('run.get', { runId: suspended });
    expect(armed.status).toBe('failed');
    const events = await service.handle('run.events', { runId: suspended });
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', payload: { error: { code: 'crash-lab-stopped' } } });
    expect((events.at(-1)!.payload as { error: { message: string } }).error.message).toMatch(/^the crash lab gave up on it \(run \S+ suspended on a timer due/);
    expect(suspended).toBe(done.referenceRunId);
    // Its verify compares everything it did and says the stop is not checked (exit 3's report) —
    // never DIVERGED for a run.failed no step wrote (helper 89).
    const report = await service.handle('run.verify', { runId: suspended });
    expect(report.divergence).toBeNull();
    expect(report.unchecked.join('\n')).toMatch(/the run's end: the crash lab stopped it at seq \d+ \(the crash lab gave up on it/);
  }, 180_000);

  it('a wait hours away: the stopped run verifies as far as it went, never DIVERGED (helper 92)', async () => {
    // A replayed wait reads its clock again before it suspends: the walk met the lab's run.failed
    // there, and verify said DIVERGED ("please report it") where a stopped pause said "not checked".
    const started = await service.handle('crashlab.start', { missionPath: 'wait-long.vague', sources: { Api: api.url }, crashAt: 'after-effect:4' });
    const done: CrashLabStatus = await service.labSettled(started.labId);
    const suspended = /^run (\S+) suspended on a timer/.exec(done.error ?? '')?.[1];
    expect(suspended, done.error ?? '').toBeDefined();
    const events = await service.handle('run.events', { runId: suspended! });
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', payload: { error: { code: 'crash-lab-stopped' } } });
    const report = await service.handle('run.verify', { runId: suspended! });
    expect(report.divergence).toBeNull();
    expect(report.unchecked.join('\n')).toMatch(/the run's end: the crash lab stopped it at seq \d+/);
  }, 180_000);

  it.runIf(worker)('a timer due at once, which the worker may wake before the lab holds it: a real verdict, or one that says so — never "never reached"', async () => {
    const started = await service.handle('crashlab.start', { missionPath: 'pause-now.vague', sources: { Api: api.url }, crashAt: 'after-effect:4' });
    const done: CrashLabStatus = await service.labSettled(started.labId);
    expect(done.error).toBeNull();
    expect(done.verdict!.explanation).not.toMatch(/never reached/);
    if (done.verdict!.tested) {
      expect(done.verdict).toMatchObject({ ok: true, crashes: 1 });
    } else {
      expect(done.verdict!.ok).toBe(false);
      expect(done.verdict!.explanation).toMatch(/^not tested: the run suspended \(waiting on (a timer due|pause:)[^)]*\) before reaching after-effect:4, and another process \([^)]+\) carried it on without the crash point armed$/);
    }
  }, 180_000);
});

describe('the verdict of a run carried on unarmed past its suspension', () => {
  it('says the run suspended before reaching the point, not that the run never reached it, and no ✓', () => {
    const untested = 'the run suspended (waiting on pause:ef_1, due 2026-01-01T00:00:01.000Z) before reaching after-effect:4, and another process (vm:42:w1) carried it on without the crash point armed';
    const verdict = judgeLab({
      referenceRunId: 'reference',
      finalStatus: 'completed',
      failures: 0,
      referenceFailures: 0,
      crashes: 0,
      picks: ['after-effect:4'],
      fired: [],
      storeDiff: [],
      proxy: { keys: [], lost: [], unexpected: [], bodyUnmatched: [], matchedByInput: [], offProxy: [], abandonedServed: [], answered: 0 },
      verify: { runId: 'armed', ok: true, original: [], replayed: [], divergence: null, unchecked: [], runStatus: 'completed' },
      startDiffs: [],
      elsewhere: 0,
      untested,
    });
    expect(verdict).toMatchObject({ ok: false, tested: false });
    expect(verdict.explanation).toBe(`not tested: ${untested}`);
    expect(verdict.explanation).not.toMatch(/never reached/);
  });
});
