/**
 * sql/nosql store tables list in insertion order (reference §B.4): a write is an upsert on `_key`,
 * so a rewritten key keeps its row and its place, and every projected column is set by the update
 * — also one another process added after this one cached the table's columns, which a stale
 * cache would leave holding the old value.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLog } from '../../engine/log/open-log.js';
import { newRun, openTempLog, started, storeWrite, type TempLog } from '../log/helpers.js';

let t: TempLog;

beforeEach(async () => {
  t = await openTempLog();
});

afterEach(async () => {
  await t.cleanup();
});

describe('store tables in insertion order', () => {
  it('lists sql and nosql tables in write order, a rewritten key in its place, set and upsert alike', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    const keys = ['10', '2', '11', 'b', '1', 'a'];
    for (const storeKind of ['sql', 'nosql'] as const) {
      const table = `${storeKind}_t`;
      await t.log.commit(lease, keys.map((key) => storeWrite({ storeKind, table, key, record: { id: key, v: 1 } })), { durable: false });
      await t.log.commit(
        lease,
        [
          storeWrite({ storeKind, table, key: '2', record: { v: 2 }, op: 'upsert' }),
          storeWrite({ storeKind, table, key: '10', record: { id: '10' }, op: 'set' }),
          storeWrite({ storeKind, table, key: '0', record: { id: '0' } }),
        ],
        { durable: false },
      );
      const rows = await t.log.readTable(storeKind, table);
      expect(rows.map((r) => r.key)).toEqual([...keys, '0']);
      expect(rows[0]!.record).toEqual({ id: '10' });
      expect(rows[1]!.record).toEqual({ id: '2', v: 2 });
    }
    const db = new Database(t.dbPath, { readonly: true });
    try {
      // A set that drops a field leaves its projected column NULL, as the replace it stands for.
      expect(db.prepare("SELECT _seq, v FROM sql_t WHERE _key = '10'").get()).toEqual({ _seq: 1, v: null });
      expect(db.prepare('SELECT _key FROM nosql_t ORDER BY _seq').pluck().all()).toEqual([...keys, '0']);
    } finally {
      db.close();
    }
  });

  it('sets a column another process added since, instead of leaving its old value', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    await t.log.commit(lease, [storeWrite({ key: 'k', record: { id: 'k', a: 1 } })], { durable: false });
    const other = await openLog(t.dbPath);
    try {
      const second = await other.createRun(newRun('r2'), 'w2', 30_000, [started()]);
      await other.commit(second.lease, [storeWrite({ key: 'k', record: { id: 'k', a: 1, b: 'from the other' } })], { durable: false });
    } finally {
      await other.close();
    }
    // This log's cached columns predate `b`; its write of `k` without `b` must clear the column.
    await t.log.commit(lease, [storeWrite({ key: 'k', record: { id: 'k', a: 2 } })], { durable: false });
    const db = new Database(t.dbPath, { readonly: true });
    try {
      expect(db.prepare("SELECT a, b, _record FROM orders WHERE _key = 'k'").get()).toEqual({ a: 2, b: null, _record: '{"id":"k","a":2}' });
    } finally {
      db.close();
    }
  });
});
