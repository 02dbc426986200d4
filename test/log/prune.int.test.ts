/**
 * Retention (`reqon prune`, engine/log/prune.ts) on both backends: what goes (whole finished
 * runs: row, every event, the webhook deliveries they claimed), what stays (every run that can
 * resume, shared sql tables, unclaimed deliveries, schedules, a mission's latest checkpoint, a
 * failed scheduled run a retry waits on), the compare-and-set against a run taken or resumed
 * after it was listed, events deleted a chunk at a time and a stopped prune carried on.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../engine/log/events.js';
import type { CommitEntry, EventLog, Lease, RunStatus } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { pruneLog, type PruneTotals } from '../../engine/log/prune.js';
import { copyLog } from '../../engine/cli/log-copy.js';
import { backends, openTempLog, type Backend, type TempLog } from '../support/temp-log.js';
import { newRun, started, storeWrite, value } from './helpers.js';

const TTL = 600_000;
/** Lease judgement on SQLite (PostgreSQL uses its own clock): leases taken at createdAt 1000 are live. */
const NOW = 2_000;

/** `api`: the URL a run's --source fetched it from, when not the mission's base (286268e). */
function checkpoint(key: string, syncedAt: number, recordedAt: number, api?: string): CommitEntry {
  return { kind: 'event', event: { type: 'checkpoint.advanced', stepPath: 'main/2', payload: { key, syncedAt, ...(api ? { api } : {}) }, recordedAt } };
}

function ended(status: 'completed' | 'failed', at: number): CommitEntry {
  const event: NewEvent =
    status === 'completed'
      ? { type: 'run.completed', stepPath: '', payload: { actionsRun: ['Main'] }, recordedAt: at }
      : { type: 'run.failed', stepPath: '', payload: { error: { code: 'boom', message: 'boom' } }, recordedAt: at };
  return { kind: 'event', event };
}

async function countRows(t: TempLog, sql: string): Promise<number> {
  if (t.backend === 'sqlite') {
    const db = new Database(t.dbPath, { readonly: true });
    try {
      return (db.prepare(sql).get() as { n: number }).n;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: t.target });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>(sql)).rows[0]!.n);
  } finally {
    await client.end();
  }
}

describe.each(backends)('%s: prune', (backend: Backend) => {
  let t: TempLog;
  let log: EventLog;
  beforeEach(async () => {
    t = await openTempLog(backend);
    log = t.log;
  });
  afterEach(async () => {
    await t.close();
  });

  /** A run with `events` value events, then ended at `at` (lease released), or left as `status`. */
  async function runOf(runId: string, opts: { events?: number; end?: 'completed' | 'failed'; at?: number; entries?: CommitEntry[] } = {}): Promise<Lease> {
    const at = opts.at ?? 1_500;
    const { lease } = await log.createRun(newRun(runId), 'w1', TTL, [started()]);
    const body = [...Array.from({ length: opts.events ?? 3 }, (_, i) => value(i, 1_100)), ...(opts.entries ?? [])];
    for (let i = 0; i < body.length; i += 2000) await log.commit(lease, body.slice(i, i + 2000), { durable: false, returnEvents: false });
    if (opts.end) await log.commit(lease, [ended(opts.end, at)], { durable: true, status: { status: opts.end, releaseLease: true } });
    return lease;
  }

  async function left(runId: string, status: RunStatus): Promise<void> {
    const run = await log.getRun(runId);
    expect(run?.status, runId).toBe(status);
    const events = await log.read(runId);
    expect(events.map((e) => e.seq), runId).toEqual(Array.from({ length: run!.lastSeq }, (_, i) => i + 1));
  }

  it('removes whole finished runs older than the horizon and keeps every run that can resume', async () => {
    await log.deliverWebhook('/hooks/a', 'ev-claimed', { n: 1 }, 1_000);
    await log.deliverWebhook('/hooks/a', 'ev-waiting', { n: 2 }, 1_000);
    await runOf('done', { end: 'completed', entries: [storeWrite({ key: 'k1', record: { id: 'k1' } }), { kind: 'claim-webhook', path: '/hooks/a', eventId: 'ev-claimed', waitId: 'w1' }] });
    await runOf('broke', { end: 'failed' });
    await runOf('recent', { end: 'completed', at: 9_000 });
    // Crashed mid-run: running, no owner — a worker resumes it.
    const crashed = await runOf('crashed');
    await log.release(crashed);
    // Running under a live lease.
    await runOf('live');
    // Suspended on a timer, on a pause, on a webhook wait.
    for (const [id, waitingOn, wakeAt] of [['timer', 'pause:t1', 99_000_000], ['paused', 'pause:p1', null], ['waiting', 'wait:/hooks/a', null]] as const) {
      const lease = await runOf(id);
      await log.commit(lease, [value('x', 1_200)], { durable: true, status: { status: 'suspended', waitingOn, wakeAt, releaseLease: true } });
    }
    // Finished, then taken again by someone (a live lease on a completed run): never pruned under it.
    await runOf('retaken', { end: 'completed' });
    expect('epoch' in (await log.acquire('retaken', 'w2', NOW, TTL))).toBe(true);

    const summary = await pruneLog(log, { finishedBefore: 5_000, now: () => NOW });
    expect(summary).toMatchObject({ runs: 2, deliveries: 1, changedMeanwhile: 0, keptForCheckpoint: 0, dryRun: false, stopped: false });
    // done: run.started, 3 values, store.write, run.completed (a claim is no event); broke: 1 + 3 + 1.
    expect(summary.events).toBe(6 + 5);
    expect(summary.bytes).toBeGreaterThan(0);
    expect(summary.space!.storedBytes).toBeGreaterThan(0);
    for (const id of ['done', 'broke']) {
      expect(await log.getRun(id)).toBeUndefined();
      expect(await log.read(id)).toEqual([]);
    }
    await left('recent', 'completed');
    await left('crashed', 'running');
    await left('live', 'running');
    await left('timer', 'suspended');
    await left('paused', 'suspended');
    await left('waiting', 'suspended');
    await left('retaken', 'completed');
    // The shared sql table keeps the row the pruned run wrote; the unclaimed delivery stays.
    expect(await log.readTable('sql', 'orders')).toEqual([{ key: 'k1', record: { id: 'k1' } }]);
    expect((await log.allDeliveries()).map((d) => d.eventId)).toEqual(['ev-waiting']);
    // So a sender's late retry of the claimed delivery is no duplicate any more.
    expect(await log.webhookDelivered('/hooks/a', 'ev-claimed')).toBe(false);
    expect(await countRows(t, 'SELECT count(*) AS n FROM reqon_pruned_runs')).toBe(0);
    // A second pass finds nothing more.
    expect((await pruneLog(log, { finishedBefore: 5_000, now: () => NOW })).runs).toBe(0);
  });

  it('a dry run lists exactly what a prune then removes, and deletes nothing', async () => {
    for (const id of ['a', 'b', 'c']) await runOf(id, { end: id === 'b' ? 'failed' : 'completed', events: 4 });
    await runOf('d');
    const listed: string[] = [];
    const dry = await pruneLog(log, { finishedBefore: 5_000, now: () => NOW, dryRun: true, onRun: (r) => listed.push(r.runId) });
    expect(listed.sort()).toEqual(['a', 'b', 'c']);
    expect(dry).toMatchObject({ dryRun: true, runs: 3, events: 3 * 6 });
    for (const id of ['a', 'b', 'c']) await left(id, id === 'b' ? 'failed' : 'completed');
    const gone: string[] = [];
    const real = await pruneLog(log, { finishedBefore: 5_000, now: () => NOW, onRun: (r) => gone.push(r.runId) });
    expect(gone.sort()).toEqual(listed);
    expect(real.events).toBe(dry.events);
  });

  it('a run taken, written or resumed after it was listed keeps its row and every event (the compare-and-set)', async () => {
    for (const id of ['quiet', 'resumed', 'touched']) await runOf(id, { end: 'completed' });
    const listed = await log.prunableRuns({ finishedBefore: 5_000, now: NOW, limit: 10 });
    expect(listed.map((r) => r.runId).sort()).toEqual(['quiet', 'resumed', 'touched']);
    // Between listing and deleting: one is taken and carried on (running again), one taken and let go.
    const taken = await log.acquire('resumed', 'w2', NOW, TTL);
    if (!('epoch' in taken)) throw new Error('not taken');
    await log.commit(taken, [value('again', 1_600)], { durable: true, status: { status: 'running' } });
    const touched = await log.acquire('touched', 'w2', NOW, TTL);
    if (!('epoch' in touched)) throw new Error('not taken');
    await log.release(touched);
    const pruned = await log.pruneRuns(listed, 5_000, NOW);
    expect(pruned.runIds).toEqual(['quiet']);
    await left('resumed', 'running');
    await left('touched', 'completed');
    expect(await log.read('quiet')).toHaveLength(5);
    await log.deletePrunedEvents(100);
    expect(await log.read('quiet')).toEqual([]);
  });

  it('racing acquires and a prune: a run is either pruned (the acquire takes nothing) or kept whole (the acquire holds it)', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `r${i}`);
    for (const id of ids) await runOf(id, { end: 'completed' });
    const listed = await log.prunableRuns({ finishedBefore: 5_000, now: NOW, limit: 100 });
    const other = await t.openAnother();
    const [pruned, ...acquired] = await Promise.all([
      log.pruneRuns(listed, 5_000, NOW),
      ...ids.filter((_, i) => i % 2 === 0).map((id) => other.acquire(id, 'w2', NOW, TTL).then((l) => ('epoch' in l ? id : null), (e: Error) => e.name)),
    ]);
    const gone = new Set(pruned.runIds);
    for (const [k, outcome] of acquired.entries()) {
      const id = ids[k * 2]!;
      // Pruned: the acquire took nothing. (On PostgreSQL an acquire that waited on the deleting
      // transaction's row lock answers "held" rather than "not found": its fallback read sees
      // the statement's snapshot. Either way it holds no lease.)
      if (gone.has(id)) expect(outcome === 'RunNotFoundError' || outcome === null, `${id}: ${String(outcome)}`).toBe(true);
      else {
        expect(outcome).toBe(id);
        await left(id, 'completed');
      }
    }
    // Runs nobody raced for all went.
    for (const id of ids.filter((_, i) => i % 2 === 1)) expect(gone.has(id)).toBe(true);
  });

  it("keeps the run holding a mission's latest checkpoint, so the next sync carries on from it", async () => {
    await runOf('sync1', { end: 'completed', entries: [checkpoint('orders', 100, 1_200)] });
    await runOf('sync2', { end: 'completed', entries: [checkpoint('orders', 300, 1_200), checkpoint('users', 50, 1_200)] });
    await runOf('sync3', { end: 'completed', entries: [checkpoint('orders', 200, 1_200), checkpoint('users', 70, 1_200)] });
    const summary = await pruneLog(log, { finishedBefore: 5_000, now: () => NOW });
    // sync2 holds orders' newest, sync3 users' newest: both kept; sync1 holds neither.
    expect(summary).toMatchObject({ runs: 1, keptForCheckpoint: 2 });
    expect(await log.getRun('sync1')).toBeUndefined();
    expect((await log.lastCheckpoint('demo.vague', 'orders'))?.syncedAt).toBe(300);
    expect((await log.lastCheckpoint('demo.vague', 'users'))?.syncedAt).toBe(70);
  });

  it('keeps no run for a checkpoint that does not count: a failure of its run followed it, or its run failed (helper 91)', async () => {
    // Before: a checkpoint with no mark (none of its mission's ever counted) kept its run for ever —
    // every run of a mission that never synced cleanly, whatever its age.
    const failedStep: CommitEntry = { kind: 'event', event: { type: 'step.failed', stepPath: 'main/3', payload: { stepType: 'Fetch', error: { code: 'http-status', message: 'POST /x failed with 500' } }, recordedAt: 1_300 } };
    await runOf('tolerated1', { end: 'completed', entries: [checkpoint('orders', 100, 1_200), failedStep] });
    await runOf('tolerated2', { end: 'completed', entries: [checkpoint('orders', 200, 1_200), failedStep] });
    await runOf('failed', { end: 'failed', entries: [checkpoint('orders', 300, 1_200)] });
    expect(await log.checkpointMarks()).toEqual([]);
    const summary = await pruneLog(log, { finishedBefore: 5_000, now: () => NOW });
    expect(summary).toMatchObject({ runs: 3, keptForCheckpoint: 0 });
    // A clean one among them: it alone is kept for its checkpoint.
    await runOf('clean', { end: 'completed', entries: [checkpoint('orders', 150, 1_200)] });
    await runOf('tolerated3', { end: 'completed', entries: [checkpoint('orders', 400, 1_200), failedStep] });
    expect(await pruneLog(log, { finishedBefore: 5_000, now: () => NOW })).toMatchObject({ runs: 1, keptForCheckpoint: 1 });
    expect(await log.getRun('clean')).toBeDefined();
    expect(await log.getRun('tolerated3')).toBeUndefined();
  });

  it("keeps the newest checkpoint of each API a key was fetched from, so no API's next sync starts over", async () => {
    const staging = 'http://127.0.0.1:4010';
    // The mission's own API (no api recorded) and a staging URL given with --source, one key.
    await runOf('prod1', { end: 'completed', entries: [checkpoint('Api:/orders', 100, 1_200)] });
    await runOf('prod2', { end: 'completed', entries: [checkpoint('Api:/orders', 200, 1_200)] });
    await runOf('stage1', { end: 'completed', entries: [checkpoint('Api:/orders', 300, 1_200, staging)] });
    await runOf('stage2', { end: 'completed', entries: [checkpoint('Api:/orders', 250, 1_200, staging)] });
    expect(await log.checkpointMarks()).toEqual(
      expect.arrayContaining([
        { mission: 'demo.vague', key: 'Api:/orders', syncedAt: 200 },
        { mission: 'demo.vague', key: 'Api:/orders', api: staging, syncedAt: 300 },
      ]),
    );
    const dry: string[] = [];
    const preview = await pruneLog(log, { finishedBefore: 5_000, now: () => NOW, dryRun: true, onRun: (r) => dry.push(r.runId) });
    expect(dry.sort()).toEqual(['prod1', 'stage2']);
    expect(preview).toMatchObject({ runs: 2, keptForCheckpoint: 2 });
    const summary = await pruneLog(log, { finishedBefore: 5_000, now: () => NOW });
    // prod2 holds the base URL's newest (200), stage1 staging's (300): both kept, whatever the other API's is.
    expect(summary).toMatchObject({ runs: 2, keptForCheckpoint: 2 });
    expect(await log.getRun('prod1')).toBeUndefined();
    expect(await log.getRun('stage2')).toBeUndefined();
    expect(await log.getRun('prod2')).toBeDefined();
    expect(await log.getRun('stage1')).toBeDefined();
    expect((await log.lastCheckpoint('demo.vague', 'Api:/orders'))?.syncedAt).toBe(200);
    expect((await log.lastCheckpoint('demo.vague', 'Api:/orders', staging))?.syncedAt).toBe(300);
  });

  it('keeps a failed scheduled run while a retry of it is due, and prunes it once the retry exists', async () => {
    const mission = 'demo.vague';
    const base = newRun('x');
    await log.upsertSchedule({
      mission,
      spec: { trigger: { kind: 'every', everyMs: 60_000 }, retry: { maxRetries: 2, delaySeconds: 1 } },
      specHash: 'h',
      missionHash: base.missionHash,
      missionFiles: base.missionFiles,
      options: base.options,
      firstFireAt: 1_000,
      at: 1_000,
    });
    const fire = async (runId: string, attempt: number) => {
      const fired = await log.fireSchedule({ mission, dueAt: 1_000, attempt, nextFireAt: 61_000, missed: 0, firedAt: 1_000, run: newRun(runId), first: [started()], owner: 'w1', ttlMs: TTL });
      if (fired.outcome !== 'started') throw new Error(`not started: ${fired.outcome}`);
      await log.commit(fired.lease, [ended('failed', 1_500)], { durable: true, status: { status: 'failed', releaseLease: true } });
    };
    await fire('s0', 0);
    expect((await log.retryCandidates(mission, 2)).map((c) => c.runId)).toEqual(['s0']);
    expect((await pruneLog(log, { finishedBefore: 5_000, now: () => NOW })).runs).toBe(0);
    await left('s0', 'failed');
    // The retry started (and failed too): s0 is no longer waited on; s1 is, until attempt 2.
    await fire('s1', 1);
    expect((await pruneLog(log, { finishedBefore: 5_000, now: () => NOW })).runs).toBe(1);
    expect(await log.getRun('s0')).toBeUndefined();
    await left('s1', 'failed');
    expect((await log.scheduleFirings(mission)).map((f) => f.runId)).toEqual(['s0', 's1']);
  });

  it("deletes a long run's events a chunk per transaction; a stopped prune is carried on by the next, and its id stays taken until then", async () => {
    await runOf('long', { end: 'completed', events: 5_000 });
    await runOf('short', { end: 'completed', events: 10 });
    const seen: PruneTotals[] = [];
    const txBefore = log.stats().transactions;
    let chunks = 0;
    const stopped = await pruneLog(log, {
      finishedBefore: 5_000,
      now: () => NOW,
      batchEvents: 1_000,
      progress: (p) => seen.push(p),
      shouldStop: () => seen.some((p) => p.events > 0) && ++chunks > 1,
    });
    expect(stopped.stopped).toBe(true);
    expect(stopped.runs).toBe(2);
    const eventsLeft = await countRows(t, "SELECT count(*) AS n FROM reqon_events WHERE run_id IN ('long', 'short')");
    expect(eventsLeft).toBeGreaterThan(0);
    expect(eventsLeft).toBe(5_000 + 2 + 10 + 2 - stopped.events);
    // Not a single transaction: at most 1,000 events went per transaction.
    expect(log.stats().transactions - txBefore).toBeGreaterThanOrEqual(2);
    // The half-pruned run's id cannot be taken by a new run meanwhile (its old events are still there).
    await expect(log.createRun(newRun('long'), 'w1', TTL, [started()])).rejects.toThrow(/still being deleted/);
    // A dry run meanwhile says what the stopped prune left queued (probe 112 K11: "0 runs (0 events)").
    expect(await log.queuedPrunedEvents()).toEqual({ runs: 2, events: eventsLeft });
    expect(await pruneLog(log, { finishedBefore: 5_000, now: () => NOW, dryRun: true })).toMatchObject({ runs: 0, events: 0, queued: { runs: 2, events: eventsLeft } });
    const rest = await pruneLog(log, { finishedBefore: 5_000, now: () => NOW, batchEvents: 1_000 });
    expect(rest).toMatchObject({ runs: 0, stopped: false });
    expect(stopped.events + rest.events).toBe(5_000 + 2 + 10 + 2);
    expect(await countRows(t, 'SELECT count(*) AS n FROM reqon_events')).toBe(0);
    expect(await countRows(t, 'SELECT count(*) AS n FROM reqon_pruned_runs')).toBe(0);
    expect(await log.queuedPrunedEvents()).toEqual({ runs: 0, events: 0 });
    // Done: the id is free again.
    await log.createRun(newRun('long'), 'w1', TTL, [started()]);
  });

  it('the database itself refuses to delete an event of a run that still has its row, even when the run is queued', async () => {
    await runOf('kept', { end: 'completed' });
    const sql = "DELETE FROM reqon_events WHERE run_id = 'kept'";
    const queue = "INSERT INTO reqon_pruned_runs (run_id, pruned_at, last_seq, deleted_to) VALUES ('kept', 1, 5, 0)";
    if (backend === 'sqlite') {
      const db = new Database(t.dbPath);
      try {
        expect(() => db.prepare(sql).run()).toThrow(/append-only/);
        expect(() => db.prepare(queue).run()).toThrow(/only in the transaction that deletes its row/);
      } finally {
        db.close();
      }
    } else {
      const client = new pg.Client({ connectionString: t.target });
      await client.connect();
      try {
        await expect(client.query(sql)).rejects.toThrow(/append-only/);
        await expect(client.query(queue)).rejects.toThrow(/only in the transaction that deletes its row/);
      } finally {
        await client.end();
      }
    }
    await left('kept', 'completed');
  });

  it('reqon log copy after a prune: copies what is left, with every table row, the pruned runs\' rows included, verified', async () => {
    await runOf('old-plain', { end: 'completed' });
    await runOf('kept', { end: 'completed', at: 9_000 });
    expect((await pruneLog(log, { finishedBefore: 5_000, now: () => NOW })).runs).toBe(1);
    const target = await openTempLog(backend);
    try {
      const report = await copyLog(log, target.log, { now: NOW });
      expect(report).toMatchObject({ runs: 1, events: 5, tables: [] });
      expect(await target.log.getRun('old-plain')).toBeUndefined();
      expect((await target.log.read('kept')).length).toBe(5);
    } finally {
      await target.close();
    }
    // A pruned run wrote rows of a shared sql table (sql tables outlive their runs) that a run still
    // in the log partly rewrote: no run left accounts for k9, and k1's row is the kept run's.
    await runOf('old-writer', {
      end: 'completed',
      entries: [storeWrite({ key: 'k9', record: { id: 'k9', n: 9 } }), storeWrite({ key: 'k1', record: { id: 'k1', n: 1 } })],
    });
    await runOf('new-writer', { end: 'completed', at: 9_000, entries: [storeWrite({ key: 'k1', record: { id: 'k1', n: 2 } }), storeWrite({ key: 'k2', record: { id: 'k2' } })] });
    expect((await pruneLog(log, { finishedBefore: 5_000, now: () => NOW })).runs).toBe(1);
    const rows = await log.readTable('sql', 'orders');
    expect(rows.map((r) => r.key)).toEqual(['k9', 'k1', 'k2']);
    const second = await openTempLog(backend);
    try {
      const report = await copyLog(log, second.log, { now: NOW });
      expect(report).toMatchObject({ runs: 2, tables: [{ storeKind: 'sql', table: 'orders', rows: 3 }] });
      expect(await second.log.readTable('sql', 'orders')).toEqual(rows);
      expect(rows[1]!.record).toEqual({ id: 'k1', n: 2 });
      expect(await second.log.getRun('old-writer')).toBeUndefined();
      // The kept writer's store.write events are copied as they are (their rows came with the table).
      const written = (await second.log.read('new-writer')).filter((e) => e.type === 'store.write');
      expect(written.map((e) => (e.payload as { key: string }).key)).toEqual(['k1', 'k2']);
    } finally {
      await second.close();
    }
  });

  it('space: vacuum makes SQLite give pages back (and every later prune as it goes); PostgreSQL runs VACUUM', async () => {
    for (let i = 0; i < 20; i++) await runOf(`big${i}`, { end: 'completed', events: 300 });
    const first = await pruneLog(log, { finishedBefore: 5_000, now: () => NOW, vacuum: true });
    expect(first.runs).toBe(20);
    if (backend === 'sqlite') {
      expect(first.space!.shrunkBytes).toBeGreaterThan(0);
      expect(first.space!.freeBytes).toBe(0);
      expect(first.space!.note).toMatch(/incremental auto-vacuum on/);
      for (let i = 0; i < 20; i++) await runOf(`more${i}`, { end: 'completed', events: 300 });
      // Another process holds the log open (an idle worker): the prune's freed pages still leave
      // the files, the WAL included (helper 91: the WAL grew by what was pruned, never cut back).
      const other = await openLog(t.dbPath);
      try {
        await other.listRuns({ limit: 1 });
        const onDisk = () => fs.statSync(t.dbPath).size + (fs.statSync(`${t.dbPath}-wal`, { throwIfNoEntry: false })?.size ?? 0);
        const before = onDisk();
        const next = await pruneLog(log, { finishedBefore: 5_000, now: () => NOW });
        expect(next.space!.shrunkBytes).toBeGreaterThan(0);
        expect(next.space!.freeBytes).toBe(0);
        expect(next.space!.note).not.toMatch(/another process was reading/);
        expect(onDisk()).toBeLessThan(before);
        expect(fs.statSync(`${t.dbPath}-wal`).size).toBe(0);
      } finally {
        await other.close();
      }
    } else {
      expect(first.space!.freeBytes).toBeNull();
      expect(first.space!.note).toMatch(/VACUUM ran on the log tables/);
      expect(first.space!.storedBytes).toBeGreaterThan(0);
    }
  });

  it('refuses bad arguments with a message naming them', async () => {
    await expect(log.prunableRuns({ finishedBefore: Number.NaN, now: NOW, limit: 1 })).rejects.toThrow(/finishedBefore must be whole milliseconds/);
    await expect(log.prunableRuns({ finishedBefore: 1, now: NOW, limit: 0 })).rejects.toThrow(/limit must be a positive whole number/);
    await expect(log.pruneRuns([{ runId: 'x' } as never], 1, NOW)).rejects.toThrow(/lastSeq must be the whole number/);
    await expect(log.deletePrunedEvents(-1)).rejects.toThrow(/maxEvents must be a positive whole number/);
  });
});
