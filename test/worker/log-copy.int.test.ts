/**
 * `reqon log copy` through the log contract (engine/cli/log-copy.ts): SQLite → SQLite, and
 * SQLite → PostgreSQL → SQLite where a PostgreSQL cluster runs.
 *
 * A source log holds: a completed run with sql, nosql and memory store writes; a run that claimed
 * a webhook delivery and completed; a run suspended on a wait; an unclaimed delivery on a path
 * nobody waits on; a schedule and its firing's run; a run whose owner died (lease expired). The
 * copy holds the same runs, events (seq by seq), tables, deliveries, schedules and firings; then,
 * on the target, the suspended run resumes from a new delivery, the abandoned run is taken over,
 * the copied delivery is a duplicate for its sender's retry, and the schedule does not fire its
 * copied firing again — every POST applied once.
 * Refused: a non-empty target (unless --append), a source run under a live lease. A target that
 * reads back differently fails verification (no ✓ it did not check).
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { jsonResponse } from '../../engine/env/fake-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import { prepareNewRun } from '../../engine/executor/run-start.js';
import { command as logCommand } from '../../engine/cli/commands/log.js';
import { copyLog, LogCopyError } from '../../engine/cli/log-copy.js';
import type { EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { registerSchedule } from '../../engine/worker/schedules.js';
import { Worker } from '../../engine/worker/worker.js';
import { hostId } from '../../engine/executor/owner.js';
import { deadPid } from '../support/dead-pid.js';
import { backends, tempLogTarget } from '../support/temp-log.js';
import { timeWorld, type TimeWorld } from '../time/support/time-fixtures.js';
import { OPTIONS, SCHEDULED, waitOn } from './support/copy-missions.js';

const ITEMS = [
  { id: 'a', n: 1 },
  { id: 'b', n: 2 },
  { id: 'c', n: 3 },
];
const STORES = `mission Stores {
  source Api { auth: none, base: "http://api.test" }
  store rows: sql("copy_rows")
  store docs: nosql("copy_docs")
  store mem: memory("mem")
  action A {
    get "/items"
    for item in response {
      store { id: item.id, n: item.n } -> rows { key: .id }
      store { id: item.id, tag: "t" } -> docs { key: .id }
      store { id: item.id } -> mem { key: .id }
    }
    post "/done" { body: { mission: "stores" } }
  }
  run A
}
`;

let world: TimeWorld | undefined;
const opened: EventLog[] = [];
afterEach(async () => {
  for (const log of opened.splice(0)) await log.close();
  await world?.cleanup();
  world = undefined;
});

async function target(w: TimeWorld, name: string): Promise<EventLog> {
  const log = await openLog(path.join(w.dir, name));
  opened.push(log);
  return log;
}

function worker(w: TimeWorld, log: EventLog, owner: string): Worker {
  return new Worker({ log, env: w.env, dataDir: path.join(w.dir, 'data'), owner, pollMs: 100 });
}

/** Fills the world's log with one of everything the copy must carry; returns the run ids. */
async function fillSource(w: TimeWorld): Promise<{ waiting: string; abandoned: string }> {
  const deps = { log: w.log, env: w.env, dataDir: path.join(w.dir, 'data') };
  expect((await startRun(w.mission('stores.vague', STORES), OPTIONS, deps)).status).toBe('completed');
  expect((await startRun(w.mission('claimed.vague', waitOn('Claimed', '/hooks/a')), OPTIONS, deps)).status).toBe('suspended');
  expect(await w.log.deliverWebhook('/hooks/a', 'delivery-a', { id: 'from-a' }, w.env.clock.now())).toBe('accepted');
  const waiting = (await startRun(w.mission('waiting.vague', waitOn('Waiting', '/hooks/b')), OPTIONS, deps)).runId;
  expect(await w.log.deliverWebhook('/hooks/nobody', 'stray', { id: 'stray' }, w.env.clock.now())).toBe('accepted');
  const schedule = await registerSchedule(w.log, w.mission('hourly.vague', SCHEDULED), OPTIONS, w.env.clock.now());
  await w.env.clock.advance(schedule.nextFireAt! - w.env.clock.now());
  const first = worker(w, w.log, 'source-worker');
  await first.tick();
  await first.drain();
  const prepared = prepareNewRun(w.mission('abandoned.vague', STORES), OPTIONS, { ...deps, owner: 'other-host:4242:gone', leaseTtlMs: 1000 });
  await w.log.createRun(prepared.run, prepared.owner, prepared.ttlMs, prepared.first);
  await w.env.clock.advance(1001);
  return { waiting, abandoned: prepared.run.runId };
}

describe('reqon log copy', () => {
  it('copies every run, event, table, delivery, schedule and firing, verified; the copy carries on where the source stopped', async () => {
    world = await timeWorld({ handler: async (req) => jsonResponse(200, req.url.endsWith('/items') ? ITEMS : { ok: true }) });
    const w = world;
    const { waiting, abandoned } = await fillSource(w);
    const sourceRuns = await w.log.listRuns();
    expect(sourceRuns.map((r) => `${r.mission}:${r.status}`).sort()).toEqual(['Claimed:completed', 'Hourly:completed', 'Stores:completed', 'Stores:running', 'Waiting:suspended']);
    const applied = [...w.applied.values()];
    expect(applied).toEqual([1, 1, 1]);

    const to = await target(w, 'copy.db');
    const lines: string[] = [];
    const report = await copyLog(w.log, to, { now: w.env.clock.now(), progress: (l) => lines.push(l) });
    expect(report).toMatchObject({ runs: 5, deliveries: 2, schedules: 1, firings: 1 });
    expect(report.events).toBe(sourceRuns.reduce((n, r) => n + r.lastSeq, 0));
    expect(report.tables.map((t) => `${t.storeKind}:${t.table}:${t.rows}`).sort()).toEqual(['nosql:copy_docs:3', 'sql:copy_got:1', 'sql:copy_rows:3']);
    expect(lines).toContain('copied 5/5 runs (' + report.events + ' events)');
    expect(await to.readTable('sql', 'copy_rows')).toEqual(await w.log.readTable('sql', 'copy_rows'));
    // Its dead owner comes along, the lease run out: carried on in the target, it is a crash resume, as in the source.
    expect(await to.getRun(abandoned)).toMatchObject({ status: 'running', owner: 'other-host:4242:gone' });

    // The copy carries on: the sender's retry of a copied delivery is a duplicate, a new one
    // resumes the waiting run, the abandoned run is taken over, the schedule's copied firing is not fired again.
    expect(await to.deliverWebhook('/hooks/a', 'delivery-a', { id: 'from-a' }, w.env.clock.now())).toBe('duplicate');
    expect(await to.webhookInbox('/hooks/nobody')).toHaveLength(1);
    expect(await to.deliverWebhook('/hooks/b', 'delivery-b', { id: 'from-b' }, w.env.clock.now())).toBe('accepted');
    const carryOn = worker(w, to, 'target-worker');
    await carryOn.tick();
    await carryOn.drain();
    expect((await to.getRun(waiting))?.status).toBe('completed');
    expect((await to.getRun(abandoned))?.status).toBe('completed');
    expect((await to.read(abandoned)).filter((e) => e.type === 'run.resumed').map((e) => (e.payload as { reason: string }).reason)).toEqual(['crash']);
    expect((await to.listRuns()).filter((r) => r.mission === 'Hourly')).toHaveLength(1);
    expect(await to.readTable('sql', 'copy_got')).toEqual([
      { key: 'from-a', record: { id: 'from-a' } },
      { key: 'from-b', record: { id: 'from-b' } },
    ]);
    // Waiting's and Abandoned's POSTs, once each; the copied ones were not sent again.
    expect([...w.applied.values()]).toEqual([1, 1, 1, 1, 1]);
  });

  it('refuses a non-empty target unless --append, and a source run under a live lease', async () => {
    world = await timeWorld({ handler: async (req) => jsonResponse(200, req.url.endsWith('/items') ? ITEMS : { ok: true }) });
    const w = world;
    const deps = { log: w.log, env: w.env, dataDir: path.join(w.dir, 'data') };
    await startRun(w.mission('stores.vague', STORES), OPTIONS, deps);
    const to = await target(w, 'copy.db');
    await copyLog(w.log, to, { now: w.env.clock.now() });
    await expect(copyLog(w.log, to, { now: w.env.clock.now() })).rejects.toThrow(
      /^the target log is not empty: it holds run run_\S+, one of this log's own runs, copied there before \(by a copy that finished, or one killed between runs\); to copy again, start from an empty target/,
    );
    await expect(copyLog(w.log, to, { now: w.env.clock.now(), append: true })).rejects.toThrow(/^run run_\S+ is already in the target log$/);

    // A target with no run but a store table's rows (a pruned run's, which stay) is not empty
    // either: the copy's rows would have replaced them under a ✓.
    const kept = await target(w, 'kept-rows.db');
    await kept.restoreTable('sql', 'kept_rows', [{ key: 'k1', record: { id: 'k1', note: 'precious' } }]);
    await expect(copyLog(w.log, kept, { now: w.env.clock.now() })).rejects.toThrow(/^the target log is not empty \(it holds rows in sql table kept_rows\); copy into an empty log, or pass --append/);
    expect(await kept.readTable('sql', 'kept_rows')).toEqual([{ key: 'k1', record: { id: 'k1', note: 'precious' } }]);
    expect(await kept.listRuns()).toEqual([]);

    const prepared = prepareNewRun(w.mission('live.vague', STORES), OPTIONS, { ...deps, owner: 'busy-host:77:live', leaseTtlMs: 60_000 });
    await w.log.createRun(prepared.run, prepared.owner, prepared.ttlMs, prepared.first);
    const empty = await target(w, 'empty.db');
    await expect(copyLog(w.log, empty, { now: w.env.clock.now() })).rejects.toThrow(
      new RegExp(`^run ${prepared.run.runId} is owned by busy-host:77:live until .*: stop the workers on the source log before copying it`),
    );
    expect(await empty.listRuns()).toEqual([]);

    // A lease still current whose process on this host is gone (killed a moment ago) holds nothing back.
    const other = await target(w, 'other-source.db');
    const killed = prepareNewRun(w.mission('killed.vague', STORES), OPTIONS, { ...deps, log: other, owner: `${hostId()}:${deadPid()}:killed`, leaseTtlMs: 60_000 });
    await other.createRun(killed.run, killed.owner, killed.ttlMs, killed.first);
    const copied = await target(w, 'killed-copy.db');
    await copyLog(other, copied, { now: w.env.clock.now() });
    expect(await copied.getRun(killed.run.runId)).toMatchObject({ status: 'running', owner: killed.owner });
  });

  it("a target holding a table of a store's name that is no such store table is refused before anything is written (probe 113 K1)", async () => {
    world = await timeWorld({ handler: async (req) => jsonResponse(200, req.url.endsWith('/items') ? ITEMS : { ok: true }) });
    const w = world;
    await startRun(w.mission('stores.vague', STORES), OPTIONS, { log: w.log, env: w.env, dataDir: path.join(w.dir, 'data') });
    const file = path.join(w.dir, 'foreign.db');
    await (await target(w, 'foreign.db')).close();
    opened.pop();
    // The user's own table, named as the source's sql store.
    const db = new Database(file);
    db.exec('CREATE TABLE copy_rows (id INTEGER, note TEXT)');
    db.close();
    const to = await target(w, 'foreign.db');
    await expect(copyLog(w.log, to, { now: w.env.clock.now() })).rejects.toThrow(
      /^the target log cannot take sql table copy_rows: .*not a store table.*; rename or drop that table there, or copy into another database — nothing was copied$/,
    );
    // Nothing was written: no run, no delivery, no other table's rows.
    expect(await to.listRuns()).toEqual([]);
    expect(await to.deliveryPage({ limit: 1 })).toEqual([]);
    expect(await to.readTable('nosql', 'copy_docs')).toEqual([]);
  });

  it('a copy killed mid-run leaves that run owned for good (no worker carries on a half-copied run), and a second copy says what the first left', async () => {
    world = await timeWorld({ handler: async (req) => jsonResponse(200, req.url.endsWith('/items') ? ITEMS : { ok: true }) });
    const w = world;
    const deps = { log: w.log, env: w.env, dataDir: path.join(w.dir, 'data') };
    expect((await startRun(w.mission('stores.vague', STORES), OPTIONS, deps)).status).toBe('completed');
    const to = await target(w, 'killed.db');
    // The process dies at the run's second page: its first page is in the target, the rest is not.
    let commits = 0;
    const dying = new Proxy(to, {
      get(log, name) {
        if (name === 'commit') {
          return async (...args: Parameters<EventLog['commit']>) => {
            if (++commits === 2) throw new Error('killed');
            return log.commit(...args);
          };
        }
        const value = Reflect.get(log, name) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(log) : value;
      },
    });
    await expect(copyLog(w.log, dying, { now: w.env.clock.now(), pageSize: 3 })).rejects.toThrow('killed');
    const [half] = await to.listRuns();
    expect(half).toMatchObject({ status: 'running', owner: 'reqon-log-copy' });
    const copied = (await to.read(half!.runId)).length;
    expect(copied).toBeLessThan((await w.log.read(half!.runId)).length);

    // A year on, a worker on the target still leaves it alone.
    await w.env.clock.advance(365 * 86_400_000);
    const onTarget = worker(w, to, 'target-worker');
    await onTarget.tick();
    await onTarget.drain();
    expect(await to.getRun(half!.runId)).toMatchObject({ status: 'running', owner: 'reqon-log-copy' });
    expect(await to.read(half!.runId)).toHaveLength(copied);

    await expect(copyLog(w.log, to, { now: w.env.clock.now() })).rejects.toThrow(
      new RegExp(`^the target log holds an earlier copy that did not finish \\(run ${half!.runId} is still held by reqon-log-copy.*delete that database`),
    );
    // With --append (a target with runs of its own) it says the same, not "already in the target
    // log" (helper 39), and writes nothing.
    await expect(copyLog(w.log, to, { now: w.env.clock.now(), append: true })).rejects.toThrow(
      new RegExp(`^the target log holds an earlier --append copy that did not finish: run ${half!.runId} is still held by reqon-log-copy.*nothing was written now.*backup`),
    );
    expect(await to.read(half!.runId)).toHaveLength(copied);
  });

  it('--append of a log already copied is refused before anything is written: rows the target rewrote since are kept', async () => {
    let lists = 0;
    // The second listing (a run on the target after the first copy) rewrites row a.
    world = await timeWorld({ handler: async (req) => jsonResponse(200, req.url.endsWith('/items') ? (++lists === 1 ? ITEMS : [{ id: 'a', n: 99 }]) : { ok: true }) });
    const w = world;
    const deps = { log: w.log, env: w.env, dataDir: path.join(w.dir, 'data') };
    await startRun(w.mission('stores.vague', STORES), OPTIONS, deps);
    const to = await target(w, 'copy.db');
    await copyLog(w.log, to, { now: w.env.clock.now() });
    expect((await startRun(w.mission('own.vague', STORES), OPTIONS, { ...deps, log: to })).status).toBe('completed');
    const before = await to.readTable('sql', 'copy_rows');
    expect(before.find((r) => r.key === 'a')?.record).toEqual({ id: 'a', n: 99 });
    await expect(copyLog(w.log, to, { now: w.env.clock.now(), append: true })).rejects.toThrow(/^run run_\S+ is already in the target log$/);
    expect(await to.readTable('sql', 'copy_rows')).toEqual(before);
  });

  it('--append of a log whose table holds a key the target holds with another record is refused before anything is written', async () => {
    let lists = 0;
    // The target's own run stored key a with another record than the source's run did.
    world = await timeWorld({ handler: async (req) => jsonResponse(200, req.url.endsWith('/items') ? (++lists === 1 ? ITEMS : [{ id: 'a', n: 99 }]) : { ok: true }) });
    const w = world;
    const deps = { log: w.log, env: w.env, dataDir: path.join(w.dir, 'data') };
    await startRun(w.mission('stores.vague', STORES), OPTIONS, deps);
    const to = await target(w, 'shared.db');
    expect((await startRun(w.mission('own.vague', STORES), OPTIONS, { ...deps, log: to })).status).toBe('completed');
    const before = await to.readTable('sql', 'copy_rows');
    const runsBefore = await to.listRuns();
    await expect(copyLog(w.log, to, { now: w.env.clock.now(), append: true })).rejects.toThrow(
      /^sql table copy_rows holds key "a" in both logs with different records: appending would replace the target's record with the source's; nothing was written/,
    );
    expect(await to.readTable('sql', 'copy_rows')).toEqual(before);
    expect(await to.listRuns()).toEqual(runsBefore);
  });

  it('--append into a log with runs and table rows of its own: both kept, the copy verified', async () => {
    let lists = 0;
    // The second listing (the target's own run) answers another item: a row the source lacks.
    world = await timeWorld({ handler: async (req) => jsonResponse(200, req.url.endsWith('/items') ? (++lists === 1 ? ITEMS : [{ id: 'z', n: 9 }]) : { ok: true }) });
    const w = world;
    const deps = { log: w.log, env: w.env, dataDir: path.join(w.dir, 'data') };
    await startRun(w.mission('stores.vague', STORES), OPTIONS, deps);
    const to = await target(w, 'busy.db');
    expect((await startRun(w.mission('own.vague', STORES), OPTIONS, { ...deps, log: to })).status).toBe('completed');
    const report = await copyLog(w.log, to, { now: w.env.clock.now(), append: true });
    expect(report.runs).toBe(1);
    expect(await to.listRuns()).toHaveLength(2);
    expect((await to.readTable('sql', 'copy_rows')).map((r) => r.key).sort()).toEqual(['a', 'b', 'c', 'z']);
  });

  it('a target that reads back differently fails verification, naming the run and seq', async () => {
    world = await timeWorld({ handler: async (req) => jsonResponse(200, req.url.endsWith('/items') ? ITEMS : { ok: true }) });
    const w = world;
    const run = await startRun(w.mission('stores.vague', STORES), OPTIONS, { log: w.log, env: w.env, dataDir: path.join(w.dir, 'data') });
    const to = await target(w, 'copy.db');
    const read = to.read.bind(to);
    // A backend that loses one event's payload on the way.
    to.read = async (runId, opts) => (await read(runId, opts)).map((e) => (e.seq === 3 ? ({ ...e, payload: {} } as typeof e) : e));
    const failed = await copyLog(w.log, to, { now: w.env.clock.now() }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(LogCopyError);
    expect((failed as Error).message).toMatch(new RegExp(`^verification failed: run ${run.runId}, seq 3 \\(`));
  });

  it('the CLI command prints its progress and one checked ✓ line, and refuses a bad invocation clearly', async () => {
    world = await timeWorld({ handler: async (req) => jsonResponse(200, req.url.endsWith('/items') ? ITEMS : { ok: true }) });
    const w = world;
    await startRun(w.mission('stores.vague', STORES), OPTIONS, { log: w.log, env: w.env, dataDir: path.join(w.dir, 'data') });
    const out: string[] = [];
    const err: string[] = [];
    const io = { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t) };
    const to = path.join(w.dir, 'cli-copy.db');
    expect(await logCommand.run(['copy'], { from: w.dbPath, to }, io)).toBe(0);
    expect(out.join('')).toMatch(/^✓ copied and verified: 1 runs, \d+ events \(every seq compared\), 0 webhook deliveries, 0 schedules, 0 firings, 2 store tables \(6 rows\)\n$/);
    expect(err.join('')).toContain('copied 1/1 runs');
    out.length = 0;
    expect(await logCommand.run(['copy'], { from: w.dbPath, to }, io)).toBe(1);
    expect(out).toEqual([]);
    expect(err.join('')).toMatch(/reqon log copy: the target log is not empty/);
    await expect(logCommand.run(['move'], { from: w.dbPath, to }, io)).rejects.toThrow('reqon log: unknown action "move"; expected: copy');
    await expect(logCommand.run(['copy'], { from: w.dbPath }, io)).rejects.toThrow('reqon log copy needs --to LOG');
  });
});

describe.each(backends.filter((b) => b === 'postgres'))('reqon log copy to and from %s', (backend) => {
  it('SQLite → PostgreSQL → SQLite: both copies verified, the tables and every event the same, the copy carries on on PostgreSQL', async () => {
    world = await timeWorld({ handler: async (req) => jsonResponse(200, req.url.endsWith('/items') ? ITEMS : { ok: true }) });
    const w = world;
    const { waiting, abandoned } = await fillSource(w);
    const pg = await tempLogTarget(backend, 'reqon-copy-pg-');
    try {
      const shared = await openLog(pg.target);
      opened.push(shared);
      const there = await copyLog(w.log, shared, { now: w.env.clock.now() });
      const back = await target(w, 'back.db');
      // PostgreSQL's leases run by its own clock, not the world's: the abandoned run's copied one ran out just now.
      const again = await copyLog(shared, back, { now: Date.now() });
      expect(again).toEqual(there);
      for (const t of there.tables) expect(await back.readTable(t.storeKind, t.table)).toEqual(await w.log.readTable(t.storeKind, t.table));
      for (const run of await w.log.listRuns()) expect(await back.read(run.runId)).toEqual(await w.log.read(run.runId));

      expect(await shared.deliverWebhook('/hooks/b', 'delivery-b', { id: 'from-b' }, w.env.clock.now())).toBe('accepted');
      const carryOn = worker(w, shared, 'pg-worker');
      await carryOn.tick();
      await carryOn.drain();
      expect((await shared.getRun(waiting))?.status).toBe('completed');
      expect((await shared.getRun(abandoned))?.status).toBe('completed');
      expect((await shared.read(abandoned)).filter((e) => e.type === 'run.resumed').map((e) => (e.payload as { reason: string }).reason)).toEqual(['crash']);
      expect(w.applied.size).toBe(5);
      expect([...w.applied.values()].every((n) => n === 1)).toBe(true);
    } finally {
      for (const log of opened.splice(0)) await log.close();
      await pg.drop();
    }
  });
});
