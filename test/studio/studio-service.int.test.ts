/**
 * The studio service against a real temp SQLite log (events written through engine/log's API)
 * and the fake CLI (spawning, exits, SIGKILL): queries, live pushes, resume and crash.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { NewEvent } from '../../engine/log/events.js';
import type { EventLog, Lease } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import type { PushChannel, Pushes } from '../../engine/protocol/protocol.js';
import { createStudioService, type StudioService } from '../../engine/server/studio-service.js';
import { StudioError } from '../../engine/server/studio-error.js';
import { sampleRun } from './event-builder.js';

const MISSION = 'mission Orders {\n  store orders: sql("orders")\n  action Sync {\n    get "/orders"\n  }\n  run Sync\n}\n';

const sampleEvents = (): NewEvent[] => sampleRun().events.map((e) => ({ type: e.type, stepPath: e.stepPath, payload: e.payload, recordedAt: e.recordedAt }) as NewEvent);

async function startRun(log: EventLog, runId: string, first: NewEvent): Promise<Lease> {
  const created = await log.createRun(
    {
      runId,
      mission: 'Orders',
      missionHash: 'h1',
      missionFiles: { entry: 'orders.vague', files: [{ path: 'orders.vague', text: MISSION }] },
      options: { sources: {}, env: {} },
      createdAt: first.recordedAt,
    },
    'test-writer',
    600_000,
    [first],
  );
  return created.lease;
}

describe('studio service', () => {
  let dir: string;
  let log: EventLog;
  let lease: Lease;
  let service: StudioService;
  const pushes: { channel: PushChannel; payload: unknown }[] = [];
  const events = sampleEvents();

  const waitForPush = async <P extends PushChannel>(channel: P, match: (p: Pushes[P]) => boolean): Promise<Pushes[P]> => {
    for (let i = 0; i < 100; i += 1) {
      const hit = pushes.find((p) => p.channel === channel && match(p.payload as Pushes[P]));
      if (hit !== undefined) return hit.payload as Pushes[P];
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no ${channel} push arrived; got ${pushes.map((p) => p.channel).join(', ')}`);
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-studio-service-'));
    const dbPath = path.join(dir, 'reqon.db');
    log = await openLog(dbPath);
    lease = await startRun(log, 'run-1', events[0]!);
    await log.commit(lease, events.slice(1, 20).map((event) => ({ kind: 'event', event })), { durable: false });
    service = await createStudioService({ dbPath, cliPath: path.join(__dirname, 'fixtures', 'fake-cli.mjs'), cwd: dir, pollIntervalMs: 20, worker: false });
    service.subscribe((channel, payload) => pushes.push({ channel, payload }));
  });

  afterAll(async () => {
    await service.close();
    await log.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lists runs and summarises them from their events', async () => {
    const { runs, total } = await service.handle('runs.list', {});
    expect(total).toBe(1);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ runId: 'run-1', mission: 'Orders', status: 'running', lastSeq: 20, steps: 3, effects: 3 });
  });

  it('stamps every summary with when it was composed, later ones higher: the renderer orders crossed answers and pushes by it', async () => {
    const first = await service.handle('run.get', { runId: 'run-1' });
    const listed = (await service.handle('runs.list', {})).runs[0]!;
    const again = await service.handle('run.get', { runId: 'run-1' });
    expect(first.composedAt).toBeGreaterThan(0);
    expect(listed.composedAt).toBeGreaterThan(first.composedAt!);
    expect(again.composedAt).toBeGreaterThan(listed.composedAt!);
    // Microseconds of the wall clock: a studio started later stamps past this one.
    expect(Math.abs(again.composedAt! / 1000 - Date.now())).toBeLessThan(60_000);
  });

  it('cuts an events page short by its payloads\' size, never below one event, and the next page goes on from there', async () => {
    // Helper 78: ten answers of ~60 MB in one page passed what one JSON text can hold: a 500.
    const sizes = events.slice(4, 10).map((e) => JSON.stringify(e.payload).length);
    const small = await createStudioService({ dbPath: path.join(dir, 'reqon.db'), cliPath: path.join(__dirname, 'fixtures', 'fake-cli.mjs'), cwd: dir, pollIntervalMs: 20, worker: false, prefetchRuns: 0, eventPageBytes: sizes[0]! + sizes[1]! });
    try {
      const first = await small.handle('run.events', { runId: 'run-1', fromSeq: 5, limit: 5 });
      expect(first.map((e) => e.seq)).toEqual([5, 6]);
      const next = await small.handle('run.events', { runId: 'run-1', fromSeq: 7, limit: 5 });
      expect(next[0]!.seq).toBe(7);
      expect(next.length).toBeLessThan(5);
      const tiny = await createStudioService({ dbPath: path.join(dir, 'reqon.db'), cliPath: path.join(__dirname, 'fixtures', 'fake-cli.mjs'), cwd: dir, pollIntervalMs: 20, worker: false, prefetchRuns: 0, eventPageBytes: 1 });
      try {
        expect((await tiny.handle('run.events', { runId: 'run-1', fromSeq: 5, limit: 5 })).map((e) => e.seq)).toEqual([5]);
      } finally {
        await tiny.close();
      }
    } finally {
      await small.close();
    }
    // The default holds a page of ordinary events whole.
    expect(await service.handle('run.events', { runId: 'run-1', fromSeq: 5, limit: 5 })).toHaveLength(5);
  });

  it('answers events, timeline, state at seq, state diff, source and crash points', async () => {
    const page = await service.handle('run.events', { runId: 'run-1', fromSeq: 5, limit: 3 });
    expect(page.map((e) => e.seq)).toEqual([5, 6, 7]);
    const timeline = await service.handle('run.timeline', { runId: 'run-1' });
    expect(timeline.lanes.map((l) => l.id)).toEqual(['0:Sync']);
    expect(timeline.bars).toHaveLength(4);
    const state = await service.handle('run.stateAt', { runId: 'run-1', seq: 14 });
    expect(state.stores).toEqual([{ name: 'orders', kind: 'sql', records: [{ key: 'a', record: { id: 'a', n: 1 } }] }]);
    expect(state.currentStep).toEqual({ stepPath: 'Sync.2', line: 7, file: 'orders.vague' });
    const beyond = await service.handle('run.stateAt', { runId: 'run-1', seq: 999 });
    expect(beyond.seq).toBe(20);
    const diff = await service.handle('run.stateDiff', { runId: 'run-1', fromSeq: 14, toSeq: 15 });
    expect(diff).toEqual([{ path: 'stores.orders.b', before: null, after: { id: 'b', n: 2 }, change: 'added' }]);
    const source = await service.handle('run.source', { runId: 'run-1' });
    // No source declared, none overridden: the crash lab has nothing to prefill.
    expect(source).toEqual({ entry: 'orders.vague', files: [{ path: 'orders.vague', text: MISSION }], sources: {}, declaredSources: {} });
    const points = await service.handle('crash.points', { runId: 'run-1' });
    expect(points.find((p) => p.point === 'mid-store')).toEqual({ point: 'mid-store', occurrences: 1 });
  });

  it('answers a timeline window: lanes and totals of the run, only the bars and markers inside it', async () => {
    const full = await service.handle('run.timeline', { runId: 'run-1' });
    const win = await service.handle('run.timelineWindow', { runId: 'run-1', axis: 'seq', from: 11, to: 14 });
    expect(win).toMatchObject({ runId: 'run-1', axis: 'seq', from: 11, to: 14, px: null, lastSeq: full.lastSeq, barCount: full.bars.length, markerCount: full.markers.length });
    expect(win.lanes.map((l) => l.id)).toEqual(full.lanes.map((l) => l.id));
    const inside = full.bars.filter((b) => b.startSeq <= 14 && b.endSeq >= 11);
    expect(inside.length).toBeGreaterThan(0);
    expect(inside.length).toBeLessThan(full.bars.length);
    expect(win.bars.map((b) => `${b.stepPath}:${b.startSeq}-${b.endSeq}`)).toEqual(inside.map((b) => `${b.stepPath}:${b.startSeq}-${b.endSeq}`));
    expect(win.markers.map((m) => m.seq)).toEqual(full.markers.filter((m) => m.seq >= 11 && m.seq <= 14).map((m) => m.seq));
    // The whole run at a pixel width: every bar is accounted for, and the same query is answered again unchanged.
    const whole = await service.handle('run.timelineWindow', { runId: 'run-1', px: 300 });
    expect(whole.bars.reduce((n, b) => n + b.merged, 0)).toBe(full.bars.length);
    expect(await service.handle('run.timelineWindow', { runId: 'run-1', px: 300 })).toEqual(whole);
  });

  it('refuses bad timeline windows with a bad-request that names the field', async () => {
    const ask = (req: Record<string, unknown>) => service.handle('run.timelineWindow', { runId: 'run-1', ...req } as never);
    await expect(ask({ from: 9, to: 3 })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringContaining('"from" (9) is after "to" (3)') });
    // A lone "from" past the run's end is checked against the run's extent.
    await expect(ask({ from: 5000 })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/"from" \(5000\) is after "to" .*run run-1/) });
    await expect(ask({ from: 'a' })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringContaining('"from" must be a finite number') });
    await expect(ask({ px: 0 })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringContaining('"px" must be an integer from 1 to 100000') });
    await expect(ask({ px: 1e9 })).rejects.toMatchObject({ code: 'bad-request' });
    await expect(ask({ axis: 'lines' })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringContaining('"axis" must be "seq" or "time"') });
    await expect(service.handle('run.timelineWindow', { runId: 'missing' })).rejects.toMatchObject({ code: 'not-found' });
  });

  it('rejects bad requests with a clear code', async () => {
    await expect(service.handle('run.get', { runId: 'missing' })).rejects.toMatchObject({ code: 'not-found' });
    await expect(service.handle('run.stateAt', { runId: 'run-1', seq: -1 })).rejects.toBeInstanceOf(StudioError);
    await expect(service.handle('run.start', {})).rejects.toMatchObject({ code: 'bad-request' });
    await expect(service.handle('run.crash', { runId: 'run-1' })).rejects.toMatchObject({ code: 'conflict' });
    await expect(service.handle('nope' as 'run.get', { runId: 'x' })).rejects.toMatchObject({ code: 'bad-request' });
    // An integer beyond 2^53 (1e308) is no limit: a bad-request naming the field, not a 500 from SQLite.
    await expect(service.handle('runs.list', { limit: 1e308 })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringMatching(/"limit" must be an integer/) });
    // A payload the log cannot hold (1e400 parsed as Infinity) is refused, not passed on as null.
    await expect(service.handle('run.resume', { runId: 'run-1', payload: { amount: Infinity } })).rejects.toMatchObject({
      code: 'bad-request',
      message: expect.stringMatching(/holds Infinity at \$\.amount/),
    });
  });

  it('streams appended events of a watched run and its new summary', async () => {
    await service.handle('run.watch', { runId: 'run-1' });
    await log.commit(lease, events.slice(20).map((event) => ({ kind: 'event', event })), { durable: false, status: { status: 'completed' } });
    // The push names the new seqs; the events themselves are read by request.
    const appended = await waitForPush('run.appended', (p) => p.runId === 'run-1' && p.lastSeq === 34);
    expect(appended.fromSeq).toBeGreaterThan(20);
    const tail = await service.handle('run.events', { runId: 'run-1', fromSeq: appended.fromSeq });
    expect(tail.at(-1)).toMatchObject({ seq: 34, type: 'run.completed' });
    const changed = await waitForPush('runs.changed', (p) => p.runId === 'run-1' && p.status === 'completed');
    expect(changed).toMatchObject({ lastSeq: 34, resumes: 2, crashesSurvived: 1 });
  });

  it('starts runs as CLI processes and reports how they exit', async () => {
    const { runId } = await service.handle('run.start', { missionText: 'mission SLOW { source Api { auth: none, base: "http://127.0.0.1:1" } action A { get "/x" } run A }' });
    expect(runId).toMatch(/^fake-\d+$/);
    const saved = fs.readdirSync(path.join(dir, 'studio-missions'));
    expect(saved).toHaveLength(1);
    await service.handle('run.crash', { runId: '__unknown__' }).catch((e: StudioError) => expect(e.code).toBe('not-found'));
    const exited = await waitForPush('process.exited', (p) => p.runId === runId);
    expect(exited).toMatchObject({ signal: null, code: 0 });
  });

  it('resumes with a payload and arms a crash on a resume', async () => {
    // The fake CLI changes no run row: the run stays suspended in the log for every call.
    const held = await startRun(log, 'run-paused', sampleEvents()[0]!);
    await log.commit(held, [], { durable: false, status: { status: 'suspended', wakeAt: null, waitingOn: 'pause:p1', releaseLease: true } });
    const logFile = path.join(dir, 'fake-cli.log');
    process.env['FAKE_CLI_LOG'] = logFile;
    try {
      const stay = await service.handle('run.resume', { runId: 'run-paused', payload: 'stay' });
      expect(stay).toEqual({ runId: 'run-paused', outcome: 'suspended' });
      const done = await service.handle('run.resume', { runId: 'run-paused' });
      expect(done.outcome).toBe('completed');
      await service.handle('run.crash', { runId: 'run-paused', crashAt: 'after-effect:2' });
      const killed = await waitForPush('process.exited', (p) => p.runId === 'run-paused' && p.signal === 'SIGKILL');
      expect(killed.code).toBeNull();
      const calls = fs.readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { args: string[]; db: string | null });
      // The log goes by $REQON_DB, never on the command line (a PostgreSQL URL may hold a password).
      expect(calls[0]).toEqual({ args: ['resume', 'run-paused', '--payload', '"stay"', '--json'], db: path.join(dir, 'reqon.db') });
      expect(calls[2]).toEqual({ args: ['resume', 'run-paused', '--crash-at', 'after-effect:2', '--json'], db: path.join(dir, 'reqon.db') });
    } finally {
      delete process.env['FAKE_CLI_LOG'];
    }
  });

  it('refuses to resume, or arm a crash point in, a run that has ended (helper 43: 200 and nothing armed)', async () => {
    const status = (await service.handle('run.get', { runId: 'run-1' })).status;
    expect(status).toBe('completed');
    await expect(service.handle('run.crash', { runId: 'run-1', crashAt: 'after-effect:1' })).rejects.toMatchObject({
      code: 'conflict',
      message: 'run run-1 is completed: no crash point can fire in it',
    });
    await expect(service.handle('run.resume', { runId: 'run-1' })).rejects.toMatchObject({ code: 'conflict', message: 'run run-1 is completed: nothing to resume' });
  });

  it('resumes a suspended run whose previous process is still exiting, once it has exited', async () => {
    const seeded = sampleEvents();
    const held = await startRun(log, 'run-exiting', seeded[0]!);
    await log.commit(held, [], { durable: false, status: { status: 'suspended', wakeAt: Date.now() + 3600_000, waitingOn: 'pause:p1', releaseLease: true } });
    const release = path.join(dir, 'release-hold');
    process.env['FAKE_CLI_RELEASE'] = release;
    try {
      // This resume's process suspends nothing new and stays alive until released: the studio answers 'running'.
      expect(await service.handle('run.resume', { runId: 'run-exiting', payload: 'hold' })).toEqual({ runId: 'run-exiting', outcome: 'running' });
      // The log says suspended while that process lives: a second resume waits for it instead of refusing.
      const second = service.handle('run.resume', { runId: 'run-exiting' });
      let settled = false;
      void second.then(() => (settled = true), () => (settled = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(settled).toBe(false);
      fs.writeFileSync(release, '');
      expect(await second).toEqual({ runId: 'run-exiting', outcome: 'completed' });
    } finally {
      // Release the held process even when an assertion failed, so no fake outlives the test.
      fs.writeFileSync(release, '');
      delete process.env['FAKE_CLI_RELEASE'];
    }
  });

  it('tells the renderer what it knows about itself', async () => {
    const info = await service.handle('studio.info', {});
    expect(info).toMatchObject({ dbPath: path.join(dir, 'reqon.db'), demoApiUrl: null });
    expect(typeof info.verifyAvailable).toBe('boolean');
  });
});

describe('studio service pushes', () => {
  const POLL_MS = 1000;
  let dir: string;
  let log: EventLog;
  let service: StudioService | undefined;
  let pushes: { channel: PushChannel; payload: { runId: string } }[];

  /** A service whose polls happen only when the test advances the faked interval. */
  const startService = async (): Promise<StudioService> => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    service = await createStudioService({ dbPath: path.join(dir, 'reqon.db'), cliPath: path.join(__dirname, 'fixtures', 'fake-cli.mjs'), cwd: dir, pollIntervalMs: POLL_MS, prefetchRuns: 0, worker: false });
    pushes = [];
    service.subscribe((channel, payload) => pushes.push({ channel, payload: payload as { runId: string } }));
    return service;
  };
  const pushesOf = (runId: string) => pushes.filter((p) => p.payload.runId === runId);
  const seqsOf = (push: { payload: unknown }) => {
    const { fromSeq, lastSeq } = push.payload as Pushes['run.appended'];
    return Array.from({ length: lastSeq - fromSeq + 1 }, (_, i) => fromSeq + i);
  };
  const seqs = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-studio-pushes-'));
    log = await openLog(path.join(dir, 'reqon.db'));
  });

  afterEach(async () => {
    await service?.close();
    vi.useRealTimers();
  });

  afterAll(async () => {
    await log.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('announces a run found by the list without pushing its history, then only what is appended', async () => {
    const events = sampleEvents();
    const lease = await startRun(log, 'run-found', events[0]!);
    await log.commit(lease, events.slice(1, 20).map((event) => ({ kind: 'event', event })), { durable: false });
    await startService();

    await vi.advanceTimersByTimeAsync(POLL_MS);
    await vi.waitFor(() => expect(pushesOf('run-found').map((p) => p.channel)).toEqual(['runs.changed']), { interval: 10 });
    expect(pushesOf('run-found')[0]!.payload).toMatchObject({ status: 'running', lastSeq: 20 });

    await log.commit(lease, events.slice(20).map((event) => ({ kind: 'event', event })), { durable: false, status: { status: 'completed' } });
    await vi.advanceTimersByTimeAsync(POLL_MS);
    await vi.waitFor(() => expect(pushesOf('run-found').map((p) => p.channel)).toEqual(['runs.changed', 'run.appended', 'runs.changed']), { interval: 10 });
    expect(seqsOf(pushesOf('run-found')[1]!)).toEqual(seqs(21, 34));
    expect(pushesOf('run-found')[2]!.payload).toMatchObject({ status: 'completed', lastSeq: 34 });
  });

  it('announces events and a new status that a request read into the view before the poll did', async () => {
    const events = sampleEvents();
    const lease = await startRun(log, 'run-read-first', events[0]!);
    await log.commit(lease, events.slice(1, 20).map((event) => ({ kind: 'event', event })), { durable: false });
    await startService();
    expect(await service!.handle('run.watch', { runId: 'run-read-first' })).toEqual({ runId: 'run-read-first', lastSeq: 20 });

    await log.commit(lease, events.slice(20).map((event) => ({ kind: 'event', event })), { durable: false, status: { status: 'completed' } });
    // The renderer asks for the run (its timeline, its summary) before the next poll comes round.
    expect(await service!.handle('run.get', { runId: 'run-read-first' })).toMatchObject({ status: 'completed', lastSeq: 34 });
    expect(pushesOf('run-read-first')).toEqual([]);

    await vi.advanceTimersByTimeAsync(POLL_MS);
    await vi.waitFor(() => expect(pushesOf('run-read-first').map((p) => p.channel)).toEqual(['run.appended', 'runs.changed']), { interval: 10 });
    expect(seqsOf(pushesOf('run-read-first')[0]!)).toEqual(seqs(21, 34));
    expect(pushesOf('run-read-first')[1]!.payload).toMatchObject({ status: 'completed', lastSeq: 34 });

    // Announced once: later polls with nothing new push nothing.
    await vi.advanceTimersByTimeAsync(POLL_MS * 3);
    await new Promise((r) => setTimeout(r, 50));
    expect(pushesOf('run-read-first')).toHaveLength(2);
  });
});
