/**
 * Power-loss simulation. With auto-checkpoint off, everything the log writes goes to the WAL in
 * order, so "the machine died after the last fsync" is the database file plus the WAL cut at the
 * size it had when a durable commit returned (the OS may also have flushed part of what came
 * after — modelled by cutting a few bytes into the next frame). Each such copy must open as a
 * clean prefix of the log: every durably committed event present, seqs without gaps, store
 * tables matching their store.write events, nothing torn.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { openLog } from '../../engine/log/open-log.js';
import { newRun, openTempLog, started, storeWrite, tempDir, value, type TempLog } from './helpers.js';

let t: TempLog;
let copies: string[] = [];
beforeEach(async () => {
  t = await openTempLog('sqlite', { walAutocheckpoint: 0 }); // power loss cuts a SQLite file's unsynced pages
  copies = [];
});
afterEach(async () => {
  await t.cleanup();
  for (const dir of copies) fs.rmSync(dir, { recursive: true, force: true });
});

interface CommitPoint {
  walSize: number;
  lastSeq: number;
  durable: boolean;
}

/** What survives a power cut at `walBytes`: the db file and the WAL cut there (no -shm: rebuilt on open). */
function crashCopy(walBytes: number): string {
  const dir = tempDir('reqon-powerloss-');
  copies.push(dir);
  fs.copyFileSync(t.dbPath, path.join(dir, 'reqon.db'));
  const wal = fs.readFileSync(`${t.dbPath}-wal`);
  fs.writeFileSync(path.join(dir, 'reqon.db-wal'), wal.subarray(0, walBytes));
  return path.join(dir, 'reqon.db');
}

describe('power loss', () => {
  it('every durable commit survives a cut of the un-fsynced WAL tail; the log is a clean prefix', async () => {
    const walSize = () => fs.statSync(`${t.dbPath}-wal`).size;
    const points: CommitPoint[] = [];
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 600_000, [started()]);
    points.push({ walSize: walSize(), lastSeq: 1, durable: true });
    let seq = 1;
    for (let i = 0; i < 40; i++) {
      const durable = i % 3 === 2;
      const entries = [value({ i, pad: 'x'.repeat((i * 97) % 3000) })];
      if (i % 4 === 0) entries.push(storeWrite({ key: `k${i % 8}`, op: i % 8 === 0 ? 'set' : 'upsert', record: { i, [`f${i % 5}`]: i } }));
      await t.log.commit(lease, entries, { durable });
      seq += entries.length;
      points.push({ walSize: walSize(), lastSeq: seq, durable });
    }
    // The un-fsynced tail after the last durable commit.
    await t.log.commit(lease, [value('tail')], { durable: false });
    points.push({ walSize: walSize(), lastSeq: ++seq, durable: false });
    const original = await t.log.read('r1');
    expect(original.length).toBe(seq);
    expect(points.filter((p) => p.durable).length).toBe(1 + 13);

    for (const [index, point] of points.entries()) {
      if (!point.durable) continue;
      const next = points[index + 1]!;
      // Cut exactly after the durable commit; into the middle of the next commit's first frame;
      // one byte short of the next commit's end (its commit frame torn); just after the next commit.
      const cuts: [number, number][] = [
        [point.walSize, point.lastSeq],
        [point.walSize + 1_000, point.lastSeq],
        [next.walSize - 1, point.lastSeq],
        [next.walSize, next.lastSeq],
      ];
      for (const [cut, expectedSeq] of cuts) {
        const copy = await openLog(crashCopy(cut));
        try {
          const events = await copy.read('r1');
          expect(events.length, `WAL cut at ${cut} bytes`).toBe(expectedSeq);
          expect(events).toEqual(original.slice(0, events.length));
          expect((await copy.getRun('r1'))?.lastSeq).toBe(events.length);
          expect(await copy.readTable('sql', 'orders')).toEqual(foldStore(events));
        } finally {
          await copy.close();
        }
      }
    }
  });
});

/** The sql store's expected contents: the last store.write per key, sorted by key. */
function foldStore(events: StoredEvent[]): { key: string; record: Record<string, unknown> }[] {
  const rows = new Map<string, Record<string, unknown>>();
  for (const event of events) {
    if (event.type !== 'store.write') continue;
    const payload = event.payload as StoredEvent<'store.write'>['payload'];
    rows.set(payload.key, payload.record as Record<string, unknown>);
  }
  return [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, record]) => ({ key, record }));
}
