/**
 * The log contract's paged reads, on each backend — what `reqon log copy` reads instead of whole
 * tables, so it runs in bounded memory. Each paged walk yields exactly what the whole read yields:
 * `tableReader` a table `max` rows at a time in insertion order (a rewritten key in its place, a
 * deleted and rewritten one at the end), `tableRows` rows by key with places in that order;
 * `listRuns`'s `after` pages the listing in either order through runs created at the same instant,
 * with a filter too; `deliveryPage` the inbox by (path, eventId); `scheduleFirings` by (dueAt,
 * attempt). Bad arguments are named.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventLog, RunRecord, ScheduleFiring, TableReader, TableRow } from '../../engine/log/log.js';
import type { NewEvent } from '../../engine/log/events.js';
import { eventPages, type EventPaging } from '../../engine/log/event-pages.js';
import { backends, openTempLog, type Backend, type TempLog } from '../support/temp-log.js';
import { newRun, started, storeWrite, value } from './helpers.js';

const TTL = 60_000;

async function drain(reader: TableReader, max: number): Promise<TableRow[][]> {
  const pages: TableRow[][] = [];
  try {
    for (let page = await reader.next(max); page.length > 0; page = await reader.next(max)) pages.push(page);
  } finally {
    await reader.close();
  }
  return pages;
}

describe.each(backends)('%s: paged reads', (backend: Backend) => {
  let t: TempLog;
  let log: EventLog;
  beforeEach(async () => {
    t = await openTempLog(backend);
    log = t.log;
  });
  afterEach(async () => {
    await t.close();
  });

  it('tableReader hands a table out in insertion order, max rows at a time; tableRows finds rows by key, placed in that order', async () => {
    const { lease } = await log.createRun(newRun('r1'), 'w1', TTL, [started()]);
    await log.commit(lease, ['k1', 'k2', 'k3', 'k4', 'k5'].map((key) => storeWrite({ key, record: { id: key } })), { durable: true });
    // k2 rewritten keeps its place; k3 deleted and written again goes to the end.
    await log.commit(
      lease,
      [storeWrite({ key: 'k2', record: { id: 'k2', v: 2 } }), storeWrite({ key: 'k3', record: {}, op: 'delete' }), storeWrite({ key: 'k3', record: { id: 'k3', again: true } })],
      { durable: true },
    );
    const whole = await log.readTable('sql', 'orders');
    expect(whole.map((r) => r.key)).toEqual(['k1', 'k2', 'k4', 'k5', 'k3']);
    for (const max of [1, 2, 3, 5, 6]) {
      const pages = await drain(await log.tableReader('sql', 'orders'), max);
      expect(pages.flat()).toEqual(whole);
      expect(pages.map((p) => p.length)).toEqual(Array.from({ length: Math.ceil(whole.length / max) }, (_, i) => Math.min(max, whole.length - i * max)));
    }
    expect(await drain(await log.tableReader('nosql', 'never_written'), 10)).toEqual([]);

    const placed = await log.tableRows('sql', 'orders', ['k3', 'absent', 'k1', 'k2']);
    expect(placed.sort((a, b) => a.place - b.place).map(({ key, record }) => ({ key, record }))).toEqual([whole[0], whole[1], whole[4]]);
    const all = await log.tableRows('sql', 'orders', whole.map((r) => r.key));
    expect(all.sort((a, b) => a.place - b.place).map((r) => r.key)).toEqual(whole.map((r) => r.key));
    expect(await log.tableRows('sql', 'orders', [])).toEqual([]);
    expect(await log.tableRows('nosql', 'never_written', ['k1'])).toEqual([]);

    const reader = await log.tableReader('sql', 'orders');
    await expect(reader.next(0)).rejects.toThrow(/tableReader.next: max must be a positive whole number but got: number \(0\)/);
    await reader.close();
    await expect(reader.next(1)).rejects.toThrow("tableReader of 'orders': next() after close()");
    await expect(log.tableReader('nosql', 'orders')).rejects.toThrow(/table 'orders' already exists in the log database and is a sql store table/);
    await expect(log.tableReader('memory' as 'sql', 'orders')).rejects.toThrow("tableReader: store kind must be 'sql' or 'nosql' but got: string (memory)");
    await expect(log.tableRows('sql', 'orders', 'k1' as unknown as string[])).rejects.toThrow(/tableRows: keys must be an array of strings/);
    // Readers give their connections back, closed or failed: more of them than a pool holds, and the log still reads.
    for (let i = 0; i < 10; i++) {
      await expect(log.tableReader('nosql', 'orders')).rejects.toThrow(/is a sql store table/);
      expect((await drain(await log.tableReader('sql', 'orders'), 2)).flat()).toEqual(whole);
    }
    expect(await log.readTable('sql', 'orders')).toEqual(whole);
  });

  it("read's maxBytes ends a page once its payloads hold that much, the crossing event included", async () => {
    const { lease } = await log.createRun(newRun('r1'), 'w1', TTL, [started()]);
    const big = 'x'.repeat(10_000);
    await log.commit(lease, [value(big), value(big), value('small'), value(big), value(big)], { durable: true });
    const whole = await log.read('r1');
    expect(whole).toHaveLength(6);
    const pages = async (maxBytes: number, limit = 100) => {
      const out: number[][] = [];
      for (let fromSeq = 1; fromSeq <= 6; ) {
        const page = await log.read('r1', { fromSeq, limit, maxBytes });
        expect(page.length).toBeGreaterThan(0);
        out.push(page.map((e) => e.seq));
        fromSeq = page[page.length - 1]!.seq + 1;
      }
      return out;
    };
    // Seq 1 is run.started and 4 the small one, of a few dozen bytes; the others a few dozen over
    // 10,000 each, so each of them fills a budget of 10,000 alone and ends its page.
    expect(await pages(10_000)).toEqual([[1, 2], [3], [4, 5], [6]]);
    expect(await pages(25_000)).toEqual([[1, 2, 3, 4, 5], [6]]);
    expect(await pages(1)).toEqual([[1], [2], [3], [4], [5], [6]]);
    expect(await pages(1_000_000)).toEqual([[1, 2, 3, 4, 5, 6]]);
    expect(await pages(1_000_000, 4)).toEqual([[1, 2, 3, 4], [5, 6]]);
    expect((await Promise.all([1, 4].map((fromSeq) => log.read('r1', { fromSeq, maxBytes: 1_000_000 })))).flat()).toEqual([...whole, ...whole.slice(3)]);
    expect(await log.read('r1', { fromSeq: 7, maxBytes: 10 })).toEqual([]);
    await expect(log.read('r1', { maxBytes: 0 })).rejects.toThrow("read 'r1': maxBytes must be a positive whole number but got: number (0)");
    await expect(log.read('r1', { maxBytes: 10, types: ['value.recorded'] })).rejects.toThrow('maxBytes cannot be combined with types');
  });

  it('eventPages: pages grow from the first size, end at the last seq, and a page cut short by its bytes is not the last', async () => {
    const { lease } = await log.createRun(newRun('r1'), 'w1', TTL, [started()]);
    await log.commit(lease, Array.from({ length: 20 }, (_, i) => value(i === 7 ? 'y'.repeat(10_000) : i)), { durable: true });
    const seqs = async (paging: EventPaging) => {
      const out: number[][] = [];
      for await (const page of eventPages(log, 'r1', paging)) out.push(page.map((e) => e.seq));
      return out;
    };
    const run = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    expect(await seqs({ size: 16, first: 1, lastSeq: 21 })).toEqual([[1], run(2, 5), run(6, 21)]);
    // Seq 9 holds 10 KB: a page of 1 KB ends with it, short of its count.
    expect(await seqs({ size: 100, bytes: 1000, lastSeq: 21 })).toEqual([run(1, 9), run(10, 21)]);
    expect(await seqs({ size: 100, bytes: 1000 })).toEqual([run(1, 9), run(10, 21)]);
    expect(await seqs({ size: 5, fromSeq: 19, lastSeq: 21 })).toEqual([[19, 20, 21]]);
    expect(await seqs({ size: 5, fromSeq: 22, lastSeq: 21 })).toEqual([]);
  });

  it('eventPages: a run pruned between two pages is an error naming it, never a cut or holed walk taken for the run (probe 112 K8, K12)', async () => {
    const { lease } = await log.createRun(newRun('r1'), 'w1', TTL, [started()]);
    await log.commit(lease, Array.from({ length: 20 }, (_, i) => value(i)), { durable: true });
    await log.commit(lease, [{ kind: 'event', event: { type: 'run.completed', stepPath: '', payload: {}, recordedAt: 3_000 } as NewEvent }], { durable: true, status: { status: 'completed', releaseLease: true } });
    const read: number[] = [];
    const walk = async () => {
      for await (const page of eventPages(log, 'r1', { size: 5, lastSeq: 22 })) {
        read.push(...page.map((e) => e.seq));
        if (read.length === 5) {
          // A prune takes the run now: its row first, then its events from seq 1 up, a chunk at a time.
          const runs = await log.prunableRuns({ finishedBefore: 10_000, now: 10_000, limit: 10 });
          expect((await log.pruneRuns(runs, 10_000, 10_000)).runIds).toEqual(['r1']);
          await log.deletePrunedEvents(12);
        }
      }
    };
    await expect(walk()).rejects.toThrow(/^run r1 was pruned while it was being read \(reqon prune, or a worker's --prune-completed-before\), after seq 5: what was read of it is incomplete$/);
    expect(read).toEqual([1, 2, 3, 4, 5]);
  });

  it("listRuns's after pages the listing in either order, through runs created at the same instant, with a filter too", async () => {
    const created: [string, number][] = [
      ['r-a', 1_000],
      ['r-b', 2_000],
      ['r-c', 2_000],
      ['r-d', 2_000],
      ['r-e', 2_000],
      ['r-f', 3_000],
      ['r-g', 500],
    ];
    for (const [runId, at] of created) {
      const { lease } = await log.createRun(newRun(runId, at), 'w1', TTL, [started(at)]);
      if (runId === 'r-c' || runId === 'r-e' || runId === 'r-g') await log.commit(lease, [], { durable: true, status: { status: 'completed', releaseLease: true } });
    }
    const walk = async (opts: { oldestFirst: boolean; status?: 'completed' }, limit: number): Promise<string[]> => {
      const seen: string[] = [];
      let after: { createdAt: number; runId: string } | undefined;
      for (;;) {
        const page: RunRecord[] = await log.listRuns({ ...opts, limit, ...(after ? { after } : {}) });
        seen.push(...page.map((r) => r.runId));
        const last = page[page.length - 1];
        if (page.length < limit || !last) return seen;
        after = { createdAt: last.createdAt, runId: last.runId };
      }
    };
    for (const oldestFirst of [true, false]) {
      const whole = (await log.listRuns({ oldestFirst })).map((r) => r.runId);
      expect(whole).toHaveLength(created.length);
      for (const limit of [1, 2, 3, 7]) expect(await walk({ oldestFirst }, limit)).toEqual(whole);
      const completed = (await log.listRuns({ oldestFirst, status: 'completed' })).map((r) => r.runId);
      expect(completed).toHaveLength(3);
      expect(await walk({ oldestFirst, status: 'completed' }, 1)).toEqual(completed);
    }
    expect((await log.listRuns({ oldestFirst: true })).map((r) => r.runId)).toEqual(['r-g', 'r-a', 'r-e', 'r-d', 'r-c', 'r-b', 'r-f']);
    await expect(log.listRuns({ after: { createdAt: 'x' as unknown as number, runId: 'r-a' } })).rejects.toThrow(/listRuns: after must be a run's \{ createdAt, runId \}/);
  });

  it('deliveryPage pages the inbox by (path, eventId), claimed or not; claimedDeliveries are the ones a run claimed', async () => {
    const ids: [string, string][] = [
      ['/b', 'e2'],
      ['/a', 'e5'],
      ['/a', 'e1'],
      ['/b', 'e1'],
      ['/c', 'e9'],
    ];
    for (const [i, [path, eventId]] of ids.entries()) expect(await log.deliverWebhook(path, eventId, { n: i }, 1_000 + i)).toBe('accepted');
    const { lease } = await log.createRun(newRun('r1'), 'w1', TTL, [started()]);
    await log.commit(lease, [{ kind: 'claim-webhook', path: '/b', eventId: 'e1', waitId: 'w' }], { durable: true });
    const byKey = (await log.allDeliveries()).sort((x, y) => (x.path === y.path ? (x.eventId < y.eventId ? -1 : 1) : x.path < y.path ? -1 : 1));
    for (const limit of [1, 2, 5]) {
      const seen = [];
      let after: { path: string; eventId: string } | undefined;
      for (;;) {
        const page = await log.deliveryPage({ limit, ...(after ? { after } : {}) });
        expect(page.length).toBeLessThanOrEqual(limit);
        seen.push(...page);
        const last = page[page.length - 1];
        if (page.length < limit || !last) break;
        after = { path: last.path, eventId: last.eventId };
      }
      expect(seen).toEqual(byKey);
    }
    expect(await log.claimedDeliveries('r1')).toEqual([{ path: '/b', eventId: 'e1', payload: { n: 3 }, receivedAt: 1_003, claimedRun: 'r1', claimedWait: 'w' }]);
    expect(await log.claimedDeliveries('nobody')).toEqual([]);
    await expect(log.deliveryPage({ limit: 0 })).rejects.toThrow('deliveryPage: limit must be a positive whole number but got: number (0)');
  });

  it('scheduleFirings pages by (dueAt, attempt)', async () => {
    const base = newRun('x');
    const mission = base.mission;
    await log.upsertSchedule({
      mission,
      spec: { trigger: { kind: 'every', everyMs: 60_000 } },
      specHash: 'h',
      missionHash: base.missionHash,
      missionFiles: base.missionFiles,
      options: base.options,
      firstFireAt: 1_000,
      at: 1_000,
    });
    const firing = (dueAt: number, attempt: number): ScheduleFiring => ({ mission, dueAt, attempt, firedAt: dueAt, outcome: 'skipped', runId: null, reason: 'max-concurrency', missed: 0 });
    await log.restoreFirings([firing(1_000, 0), firing(1_000, 1), firing(1_000, 2), firing(61_000, 0), firing(121_000, 0), firing(121_000, 1)]);
    const whole = await log.scheduleFirings(mission);
    expect(whole).toHaveLength(6);
    for (const limit of [1, 2, 4]) {
      const seen: ScheduleFiring[] = [];
      let after: { dueAt: number; attempt: number } | undefined;
      for (;;) {
        const page = await log.scheduleFirings(mission, { limit, ...(after ? { after } : {}) });
        seen.push(...page);
        const last = page[page.length - 1];
        if (page.length < limit || !last) break;
        after = { dueAt: last.dueAt, attempt: last.attempt };
      }
      expect(seen).toEqual(whole);
    }
    expect(await log.scheduleFirings('other.vague', { limit: 5 })).toEqual([]);
    await expect(log.scheduleFirings(mission, { limit: -1 })).rejects.toThrow('scheduleFirings: limit must be a positive whole number but got: number (-1)');
    await expect(log.scheduleFirings(mission, { after: { dueAt: 1_000 } as { dueAt: number; attempt: number } })).rejects.toThrow(/scheduleFirings: after must be a firing's \{ dueAt, attempt \}/);

    // Removed: gone from the list, its firings' history kept, and nothing fires it.
    expect(await log.removeSchedule(mission)).toBe(true);
    expect(await log.getSchedule(mission)).toBeUndefined();
    expect(await log.listSchedules()).toEqual([]);
    expect(await log.scheduleFirings(mission)).toHaveLength(6);
    // A worker claiming a firing it saw due before the removal finds the schedule gone: no run, no firing.
    const claimed = await log.fireSchedule({ mission, dueAt: 181_000, attempt: 0, nextFireAt: 241_000, missed: 0, firedAt: 181_000, run: newRun('late-firing'), first: [started()], owner: 'w1', ttlMs: 60_000 });
    expect(claimed).toEqual({ outcome: 'taken' });
    expect(await log.getRun('late-firing')).toBeUndefined();
    expect(await log.scheduleFirings(mission)).toHaveLength(6);
    expect(await log.removeSchedule(mission)).toBe(false);
  });
});
