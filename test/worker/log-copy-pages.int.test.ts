/**
 * `reqon log copy` in bounded memory (engine/cli/log-copy.ts), on each backend (source and target
 * on it): with a page of 2, every read of either log returns at most 2 items and nothing is read
 * whole, and the copy is the one a single page makes — runs, events, tables, deliveries and
 * firings each spanning several pages.
 *
 * Verification goes page against page and never says ✓ for what it did not compare: a row that
 * differs on the second page, a row too many or too few at the end, an event on the second page or
 * the last one, and with --append a source row the target holds differently — each fails it.
 *
 * Tables before runs (GUARANTEES.md, "Many machines"): a reader and a worker on the target look
 * between every two writes of the copy. No run is visible before every table is complete, and the
 * worker fires the copied (due) schedule only once the copy is done — never into tables still
 * being copied.
 */
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { jsonResponse } from '../../engine/env/fake-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import { copyLog, LogCopyError } from '../../engine/cli/log-copy.js';
import type { EventLog, ListRunsOptions, ReadOptions, TableReader, TableRow } from '../../engine/log/log.js';
import { registerSchedule } from '../../engine/worker/schedules.js';
import { Worker } from '../../engine/worker/worker.js';
import { backends, openTempLog, type Backend, type TempLog } from '../support/temp-log.js';
import { timeWorld, type TimeWorld } from '../time/support/time-fixtures.js';
import { OPTIONS, SCHEDULED, waitOn } from './support/copy-missions.js';
import { overriding } from '../support/log-overrides.js';

const ITEMS = [
  { id: 'a', n: 1 },
  { id: 'b', n: 2 },
  { id: 'c', n: 3 },
];
const STORES = `mission Stores {
  source Api { auth: none, base: "http://api.test" }
  store rows: sql("copy_rows")
  store docs: nosql("copy_docs")
  action A {
    get "/items"
    for item in response {
      store { id: item.id, n: item.n } -> rows { key: .id }
      store { id: item.id, tag: "t" } -> docs { key: .id }
    }
    post "/done" { body: { mission: "stores" } }
  }
  run A
}
`;
const PAGE = 2;

let world: TimeWorld | undefined;
const temps: TempLog[] = [];
const workers: Worker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) {
    w.stop();
    await w.drain();
  }
  for (const t of temps.splice(0)) await t.close();
  await world?.cleanup();
  world = undefined;
});

async function source(backend: Backend): Promise<TimeWorld> {
  world = await timeWorld({ backend, handler: async (req) => jsonResponse(200, req.url.endsWith('/items') ? ITEMS : { ok: true }) });
  return world;
}

async function emptyLog(backend: Backend): Promise<TempLog> {
  const t = await openTempLog(backend, {}, 'reqon-copy-target-');
  temps.push(t);
  return t;
}

function worker(w: TimeWorld, log: EventLog, owner: string): Worker {
  const made = new Worker({ log, env: w.env, dataDir: path.join(w.dir, 'data'), owner, pollMs: 100 });
  workers.push(made);
  return made;
}

/**
 * Runs (6: Stores, a claimed webhook's, a waiting one, three of a schedule), deliveries (4), firings
 * (3) and tables of 3 rows: each more than a page of 2. The schedule is left due, its workers stopped.
 */
async function fillSource(w: TimeWorld): Promise<void> {
  const deps = { log: w.log, env: w.env, dataDir: path.join(w.dir, 'data') };
  expect((await startRun(w.mission('stores.vague', STORES), OPTIONS, deps)).status).toBe('completed');
  expect((await startRun(w.mission('claimed.vague', waitOn('Claimed', '/hooks/a')), OPTIONS, deps)).status).toBe('suspended');
  expect(await w.log.deliverWebhook('/hooks/a', 'delivery-a', { id: 'from-a' }, w.env.clock.now())).toBe('accepted');
  expect((await startRun(w.mission('waiting.vague', waitOn('Waiting', '/hooks/b')), OPTIONS, deps)).status).toBe('suspended');
  for (const id of ['stray-1', 'stray-2', 'stray-3']) expect(await w.log.deliverWebhook('/hooks/nobody', id, { id }, w.env.clock.now())).toBe('accepted');
  await registerSchedule(w.log, w.mission('hourly.vague', SCHEDULED), OPTIONS, w.env.clock.now());
  const sourceWorker = worker(w, w.log, 'source-worker');
  for (let i = 0; i < 4; i++) {
    await w.env.clock.advance((await w.log.getSchedule('Hourly'))!.nextFireAt! - w.env.clock.now());
    if (i === 3) break;
    await sourceWorker.tick();
    await sourceWorker.drain();
  }
  const runs = await w.log.listRuns();
  expect(runs.map((r) => `${r.mission}:${r.status}`).sort()).toEqual(['Claimed:completed', 'Hourly:completed', 'Hourly:completed', 'Hourly:completed', 'Stores:completed', 'Waiting:suspended']);
}

/** Every read through `log` is checked: no list it returns is longer than `max`, and nothing is read whole. */
function pagesOnly(log: EventLog, max: number, broke: string[]): EventLog {
  const check = (name: string, out: unknown) => {
    if (Array.isArray(out) && out.length > max && name !== 'listTables' && name !== 'listSchedules') broke.push(`${name} returned ${out.length} items`);
  };
  return new Proxy(log, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop);
      if (typeof value !== 'function') return value;
      const name = String(prop);
      return (...args: unknown[]) => {
        if (name === 'readTable' || name === 'allDeliveries') broke.push(`${name} reads whole`);
        if (name === 'read' && (args[1] as ReadOptions | undefined)?.limit === undefined) broke.push('read without a limit');
        if (name === 'listRuns' && ((args[0] as ListRunsOptions | undefined)?.limit ?? -1) < 0) broke.push('listRuns without a limit');
        if (name === 'scheduleFirings' && args[1] === undefined) broke.push('scheduleFirings without a page');
        const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!(result instanceof Promise)) return result;
        return result.then((out: unknown) => {
          check(name, out);
          if (name !== 'tableReader') return out;
          const reader = out as TableReader;
          return { next: async (n: number) => ((rows: TableRow[]) => (check('tableReader.next', rows), rows))(await reader.next(n)), close: () => reader.close() };
        });
      };
    },
  });
}

/** `log` with `restoreTable` changing what it writes of one table. */
function storing(log: EventLog, table: string, change: (rows: readonly TableRow[]) => TableRow[]): EventLog {
  return overriding(log, { restoreTable: (kind, name, rows) => log.restoreTable(kind, name, name === table ? change(rows) : rows) });
}

async function sameContents(from: EventLog, to: EventLog): Promise<void> {
  expect(await to.listTables()).toEqual(await from.listTables());
  for (const t of await from.listTables()) expect(await to.readTable(t.storeKind, t.table)).toEqual(await from.readTable(t.storeKind, t.table));
  const runs = await from.listRuns();
  expect((await to.listRuns()).map((r) => [r.runId, r.status, r.lastSeq, r.owner])).toEqual(runs.map((r) => [r.runId, r.status, r.lastSeq, null]));
  for (const run of runs) expect(await to.read(run.runId)).toEqual(await from.read(run.runId));
  expect(await to.allDeliveries()).toEqual(await from.allDeliveries());
  expect(await to.scheduleFirings('Hourly')).toEqual(await from.scheduleFirings('Hourly'));
  expect((await to.getSchedule('Hourly'))?.nextFireAt).toBe((await from.getSchedule('Hourly'))?.nextFireAt);
}

describe.each(backends)('reqon log copy in pages on %s', (backend) => {
  it('copies in pages of 2 what one page copies: no read returns more than a page, nothing is read whole, both verified', async () => {
    const w = await source(backend);
    await fillSource(w);
    const to = await emptyLog(backend);
    const broke: string[] = [];
    const lines: string[] = [];
    const report = await copyLog(pagesOnly(w.log, PAGE, broke), pagesOnly(to.log, PAGE, broke), { now: w.env.clock.now(), pageSize: PAGE, progress: (l) => lines.push(l) });
    expect(broke).toEqual([]);
    expect(report).toMatchObject({ runs: 6, deliveries: 4, schedules: 1, firings: 3 });
    expect(report.tables.map((t) => `${t.storeKind}:${t.table}:${t.rows}`)).toEqual(['nosql:copy_docs:3', 'sql:copy_got:1', 'sql:copy_rows:3']);
    expect(lines).toEqual([
      'copied 4 webhook deliveries',
      'copied nosql table copy_docs (3 rows)',
      'copied sql table copy_got (1 rows)',
      'copied sql table copy_rows (3 rows)',
      `copied 6/6 runs (${report.events} events)`,
      'copied 3 schedule firings',
      'copied 1 schedules; verifying',
    ]);
    await sameContents(w.log, to.log);

    const whole = await emptyLog(backend);
    expect(await copyLog(w.log, whole.log, { now: w.env.clock.now() })).toEqual(report);
  });

  it("pages a run's events by their bytes too: a page of events never holds much more than pageBytes", async () => {
    const w = await source(backend);
    await fillSource(w);
    const to = await emptyLog(backend);
    const reads: { limit?: number; maxBytes?: number; got: number }[] = [];
    const recording = (log: EventLog) =>
      overriding(log, {
        read: async (runId, opts) => {
          const got = await log.read(runId, opts);
          reads.push({ ...(opts?.limit !== undefined ? { limit: opts.limit } : {}), ...(opts?.maxBytes !== undefined ? { maxBytes: opts.maxBytes } : {}), got: got.length });
          return got;
        },
      });
    // Every payload is more than a byte: a budget of 1 makes each page of events one event, from
    // either log, while pages of runs, rows and deliveries stay 1,000 long.
    const report = await copyLog(recording(w.log), recording(to.log), { now: w.env.clock.now(), pageSize: 1000, pageBytes: 1 });
    expect(reads.length).toBeGreaterThan(2 * report.events);
    expect(reads.every((r) => r.limit === 1000 && r.maxBytes === 1 && r.got <= 1)).toBe(true);
    await sameContents(w.log, to.log);
    const whole = await emptyLog(backend);
    expect(await copyLog(w.log, whole.log, { now: w.env.clock.now() })).toEqual(report);
    await expect(copyLog(w.log, (await emptyLog(backend)).log, { now: w.env.clock.now(), pageBytes: 0 })).rejects.toThrow('copyLog: pageBytes must be a positive whole number but got: 0');
  });

  it('a long copy says how far it is, every 50 pages of a table, copying and verifying', async () => {
    const from = await emptyLog(backend);
    const rows = Array.from({ length: 101 }, (_, i) => ({ key: `k${i}`, record: { n: i } }));
    await from.log.restoreTable('sql', 'big', rows);
    const to = await emptyLog(backend);
    const lines: string[] = [];
    const report = await copyLog(from.log, to.log, { now: 1_000, pageSize: 1, progress: (l) => lines.push(l) });
    expect(report.tables).toEqual([{ storeKind: 'sql', table: 'big', rows: 101 }]);
    expect(lines).toEqual([
      'copied 0 webhook deliveries',
      'copying sql table big (50 rows so far)',
      'copying sql table big (100 rows so far)',
      'copied sql table big (101 rows)',
      'copied 0 schedule firings',
      'copied 0 schedules; verifying',
      'verifying sql table big (50 rows so far)',
      'verifying sql table big (100 rows so far)',
    ]);
    expect(await to.log.readTable('sql', 'big')).toEqual(rows);
  });

  it('verification goes page against page: a difference on the second page, a row too many or too few, an event on the second or last page, fails it', async () => {
    const w = await source(backend);
    const run = await startRun(w.mission('stores.vague', STORES), OPTIONS, { log: w.log, env: w.env, dataDir: path.join(w.dir, 'data') });
    const lastSeq = (await w.log.getRun(run.runId))!.lastSeq;
    expect(lastSeq).toBeGreaterThan(2 * PAGE);
    const copyInto = async (change: (log: EventLog) => EventLog, append = false) => {
      const to = await emptyLog(backend);
      return copyLog(w.log, change(to.log), { now: w.env.clock.now(), pageSize: PAGE, append }).catch((e: unknown) => e);
    };
    const failure = (what: string) => expect.objectContaining({ name: 'LogCopyError', message: `verification failed: ${what}` });

    // Row 3 ("c") is on the table's second page.
    const changed = await copyInto((log) => storing(log, 'copy_rows', (rows) => rows.map((r) => (r.key === 'c' ? { key: 'c', record: { ...r.record, n: 99 } } : r))));
    expect(changed).toBeInstanceOf(LogCopyError);
    expect(changed).toEqual(failure(`sql table copy_rows holds 3 of the source's rows in the target, 3 in the source, or they differ: the record under key "c" (row 3) differs`));
    const more = await copyInto((log) => storing(log, 'copy_docs', (rows) => (rows.some((r) => r.key === 'c') ? [...rows, { key: 'd', record: { id: 'd' } }] : [...rows])));
    expect(more).toEqual(failure(`nosql table copy_docs holds 4 of the source's rows in the target, 3 in the source, or they differ`));
    const fewer = await copyInto((log) => storing(log, 'copy_rows', (rows) => rows.filter((r) => r.key !== 'c')));
    expect(fewer).toEqual(failure(`sql table copy_rows holds 2 of the source's rows in the target, 3 in the source, or they differ`));

    // A backend that reads one event back wrong: seq 3 is on the second page, lastSeq on the last.
    for (const seq of [PAGE + 1, lastSeq]) {
      const misread = await copyInto((log) =>
        overriding(log, { read: async (runId, opts) => (await log.read(runId, opts)).map((e) => (e.seq === seq ? ({ ...e, payload: { lost: true } } as unknown as typeof e) : e)) }),
      );
      expect(misread).toBeInstanceOf(LogCopyError);
      expect((misread as Error).message).toMatch(new RegExp(`^verification failed: run ${run.runId}, seq ${seq} \\(`));
    }

    // --append: the target's own rows may sit between the source's, but a source row held differently fails.
    const appendTo = async (change: (log: EventLog) => EventLog) => {
      const to = await emptyLog(backend);
      await to.log.restoreTable('sql', 'copy_rows', [{ key: 'own', record: { id: 'own' } }]);
      return copyLog(w.log, change(to.log), { now: w.env.clock.now(), pageSize: 1, append: true }).catch((e: unknown) => e);
    };
    const appended = await appendTo((log) => log);
    expect(appended).toMatchObject({ runs: 1, tables: expect.arrayContaining([{ storeKind: 'sql', table: 'copy_rows', rows: 3 }]) });
    const heldWrong = await appendTo((log) => storing(log, 'copy_rows', (rows) => rows.map((r) => (r.key === 'c' ? { key: 'c', record: { id: 'c' } } : r))));
    expect(heldWrong).toEqual(failure(`sql table copy_rows holds 3 of the source's rows in the target, 3 in the source, or they differ: the record under key "c" differs`));
    const heldNot = await appendTo((log) => storing(log, 'copy_rows', (rows) => rows.filter((r) => r.key !== 'b')));
    expect(heldNot).toEqual(failure(`sql table copy_rows holds 2 of the source's rows in the target, 3 in the source, or they differ: key "b" is not in the target`));
  });

  it('tables before runs: a reader and a worker on the target, looking between every two writes of the copy, see no run before every table is complete', async () => {
    const w = await source(backend);
    await fillSource(w);
    // Runs older than the copier's lease (7 days), as a log worth moving has: its lease on each run
    // must still hold on the target until the run's last commit drops it.
    await w.env.clock.advance(8 * 86_400_000);
    const due = (await w.log.getSchedule('Hourly'))!.nextFireAt!;
    expect(due).toBeLessThanOrEqual(w.env.clock.now());
    const sourceTables = new Map<string, TableRow[]>();
    for (const t of await w.log.listTables()) sourceTables.set(`${t.storeKind}:${t.table}`, await w.log.readTable(t.storeKind, t.table));
    const copiedRuns = (await w.log.listRuns()).length;

    const to = await emptyLog(backend);
    // Another connection, as a worker on another machine has; it ticks (and finishes what it starts) at each look.
    const other = await to.openAnother();
    const targetWorker = worker(w, other, 'target-worker');
    const looks: { runs: number; rows: number; complete: boolean }[] = [];
    const look = async () => {
      await targetWorker.tick();
      await targetWorker.drain();
      const runs = (await other.listRuns()).length;
      let rows = 0;
      let complete = true;
      for (const [id, expected] of sourceTables) {
        const [kind, table] = id.split(':') as ['sql' | 'nosql', string];
        const now = await other.readTable(kind, table);
        rows += now.length;
        if (!isDeepStrictEqual(now, expected)) complete = false;
      }
      looks.push({ runs, rows, complete });
    };
    const writes = new Set(['deliverWebhook', 'restoreTable', 'createRun', 'commit', 'restoreFirings', 'upsertSchedule']);
    const watched = new Proxy(to.log, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop);
        if (typeof value !== 'function') return value;
        const call = (...args: unknown[]) => (value as (...a: unknown[]) => unknown).apply(target, args);
        return writes.has(String(prop)) ? async (...args: unknown[]) => (await look(), call(...args)) : call;
      },
    });
    const report = await copyLog(w.log, watched, { now: w.env.clock.now(), pageSize: PAGE });
    expect(report.runs).toBe(copiedRuns);
    await look();

    expect(looks.filter((l) => l.runs > 0 && !l.complete)).toEqual([]);
    // Not vacuous: the looks saw tables half copied, and runs some but not all there.
    const allRows = [...sourceTables.values()].reduce((n, rows) => n + rows.length, 0);
    expect(looks.some((l) => l.runs === 0 && l.rows > 0 && l.rows < allRows)).toBe(true);
    expect(looks.some((l) => l.runs > 0 && l.runs < copiedRuns)).toBe(true);
    // The worker fired the due schedule at the look after the copy, not during it.
    expect(looks.slice(0, -1).every((l) => l.runs <= copiedRuns)).toBe(true);
    expect(looks[looks.length - 1]!.runs).toBe(copiedRuns + 1);
    expect((await other.scheduleFirings('Hourly')).map((f) => f.dueAt)).toContain(due);
    expect([...w.applied.values()].every((n) => n === 1)).toBe(true);
  });
});
