/**
 * A sql store write never fails because of a field's name (GUARANTEES 5): a name SQLite cannot
 * take as a column — one holding a NUL, or ill-formed UTF-16 (two lone surrogates both become
 * U+FFFD in UTF-8 and would collide on one column) — is kept in `_record` only, and the record is
 * stored as it is. Before, the ALTER TABLE failed and the whole commit it rode in rolled back.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newRun, openTempLog, started, storeWrite, type TempLog } from './helpers.js';

let t: TempLog;

beforeEach(async () => {
  t = await openTempLog();
});

afterEach(async () => {
  await t.cleanup();
});

describe('sql store field names that cannot be columns', () => {
  it('are stored in _record as they are, the other fields projected, and the commit lands whole', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    const record = { id: 1, ['a\u0000b']: 'nul', ['\uD800']: 'lone high', ['\uD801']: 'another lone high', ['\uDC00x']: 'lone low', ok: 'yes', ['😀']: 'pair' };
    await t.log.commit(lease, [storeWrite({ key: 'k1', record: { id: 0 } })], { durable: false });
    await t.log.commit(lease, [storeWrite({ key: 'k2', record }), storeWrite({ key: 'k3', record: { id: 3, ok: 'also' } })], { durable: false });
    const rows = await t.log.readTable('sql', 'orders');
    expect(rows.map((r) => r.key)).toEqual(['k1', 'k2', 'k3']);
    expect(rows[1]!.record).toEqual(record);
    const db = new Database(t.dbPath, { readonly: true });
    try {
      const columns = (db.prepare("SELECT name FROM pragma_table_info('orders')").all() as { name: string }[]).map((c) => c.name).sort();
      expect(columns).toEqual(['_seq', '_key', '_record', 'id', 'ok', '😀'].sort());
      expect(db.prepare("SELECT ok FROM orders WHERE _key = 'k2'").get()).toEqual({ ok: 'yes' });
    } finally {
      db.close();
    }
    expect((await t.log.read('r1')).filter((e) => e.type === 'store.write')).toHaveLength(3);
  });
});
