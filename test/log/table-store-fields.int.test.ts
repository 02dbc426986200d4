/**
 * A sql store write never fails because of a field's name (GUARANTEES 5): a name the database
 * cannot take as a column — one holding a NUL, or ill-formed UTF-16 (two lone surrogates both
 * become U+FFFD in UTF-8 and would collide on one column), or (PostgreSQL) over 63 bytes — is kept
 * in `_record` only, and the record is stored as it is. Before, the ALTER TABLE failed and the
 * whole commit it rode in rolled back. On both backends; PostgreSQL's jsonb columns also refuse a
 * NUL or a lone surrogate in a *value*, which then stays in `_record` only.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backends, openTempLog, type Backend, type TempLog } from '../support/temp-log.js';
import { newRun, started, storeWrite } from './helpers.js';

async function columnsOf(t: TempLog): Promise<string[]> {
  if (t.backend === 'sqlite') {
    const db = new Database(t.dbPath, { readonly: true });
    try {
      return (db.prepare("SELECT name FROM pragma_table_info('orders')").all() as { name: string }[]).map((c) => c.name).sort();
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: t.target });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      "SELECT attname AS name FROM pg_attribute WHERE attrelid = to_regclass('orders') AND attnum > 0 AND NOT attisdropped",
    );
    return rows.map((r) => r.name).sort();
  } finally {
    await client.end();
  }
}

describe.each(backends)('%s: sql store field names that cannot be columns', (backend: Backend) => {
  let t: TempLog;
  beforeEach(async () => {
    t = await openTempLog(backend);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('are stored in _record as they are, the other fields projected, and the commit lands whole', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    const record = { id: 1, ['a\u0000b']: 'nul', ['\uD800']: 'lone high', ['\uD801']: 'another lone high', ['\uDC00x']: 'lone low', ok: 'yes', ['😀']: 'pair' };
    await t.log.commit(lease, [storeWrite({ key: 'k1', record: { id: 0 } })], { durable: false });
    await t.log.commit(lease, [storeWrite({ key: 'k2', record }), storeWrite({ key: 'k3', record: { id: 3, ok: 'also' } })], { durable: false });
    const rows = await t.log.readTable('sql', 'orders');
    expect(rows.map((r) => r.key)).toEqual(['k1', 'k2', 'k3']);
    expect(rows[1]!.record).toEqual(record);
    expect(await columnsOf(t)).toEqual(['_seq', '_key', '_record', 'id', 'ok', '😀'].sort());
    expect((await t.log.read('r1')).filter((e) => e.type === 'store.write')).toHaveLength(3);
  });

  it('a record of 480 fields of 100 characters is stored as it is (PostgreSQL: past 400 projected columns, in _record only)', async () => {
    // On PostgreSQL each projected value, toasted, still takes 18 bytes of its 8 kB row: 480 of them
    // did not fit ("row is too big") and the write failed, where SQLite stores it.
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    const record: Record<string, string> = {};
    for (let i = 0; i < 480; i++) record[`f${i}`] = `${i}:`.padEnd(100, 'abcdefghijklmnopqrstuvwxyz');
    await t.log.commit(lease, [storeWrite({ key: 'k1', record: { f0: 'small' } })], { durable: false });
    await t.log.commit(lease, [storeWrite({ key: 'wide', record })], { durable: false });
    const rows = await t.log.readTable('sql', 'orders');
    expect(rows.map((r) => r.key)).toEqual(['k1', 'wide']);
    expect(rows[1]!.record).toEqual(record);
    if (backend === 'postgres') expect((await columnsOf(t)).length).toBe(3 + 400);
  });

  it('values holding a NUL or a lone surrogate, and a 64-byte field name, are stored as they are', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    const long = 'f'.repeat(64);
    const record = { id: 1, nul: 'a\u0000b', lone: 'x\uD800y', deep: { s: '\u0000' }, ok: 'fine', [long]: 'long name' };
    await t.log.commit(lease, [storeWrite({ key: 'k1', record })], { durable: true });
    expect(await t.log.readTable('sql', 'orders')).toEqual([{ key: 'k1', record }]);
    const columns = await columnsOf(t);
    expect(columns).toEqual(expect.arrayContaining(['id', 'nul', 'lone', 'deep', 'ok']));
    // PostgreSQL truncates identifiers past 63 bytes, so such a field stays in _record there.
    expect(columns.includes(long)).toBe(backend === 'sqlite');
  });

  it.runIf(backend === 'postgres')('PostgreSQL: a key holding a NUL fails its own write with a message naming it; the log goes on', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    await expect(t.log.commit(lease, [storeWrite({ key: 'a\u0000b', record: { id: 1 } })], { durable: false })).rejects.toThrow(
      /key "a\\u0000b" holds a NUL character or a lone UTF-16 surrogate, which a PostgreSQL log cannot store as text/,
    );
    await expect(t.log.commit(lease, [storeWrite({ key: 'x\uD800', record: { id: 2 } })], { durable: false })).rejects.toThrow(/lone UTF-16 surrogate/);
    await t.log.commit(lease, [storeWrite({ key: 'k', record: { id: 3 } })], { durable: false });
    expect(await t.log.readTable('sql', 'orders')).toEqual([{ key: 'k', record: { id: 3 } }]);
    expect((await t.log.read('r1')).map((e) => e.seq)).toEqual([1, 2]);
  });
});

describe('sqlite: projected columns as plain SQL reads them', () => {
  let t: TempLog;
  beforeEach(async () => {
    t = await openTempLog('sqlite');
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('an integer field is an INTEGER (exact to 2^53), a fraction a REAL (helper 87: every number was a REAL)', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    await t.log.commit(
      lease,
      [
        storeWrite({ key: '1', record: { id: 1, qty: 42, price: 9.5, active: true } }),
        storeWrite({ key: '1234567890123456', record: { id: 1234567890123456, qty: -0, price: 1e300, active: false } }),
        storeWrite({ key: 'big', record: { id: 1e18, qty: -(2 ** 63), price: 1e19, active: true } }),
      ],
      { durable: false },
    );
    const db = new Database(t.dbPath, { readonly: true });
    try {
      const rows = db.prepare('SELECT _key, typeof(id) AS t, CAST(id AS TEXT) AS text, typeof(qty) AS q, typeof(price) AS p, typeof(active) AS b, active FROM orders ORDER BY _seq').all();
      expect(rows).toEqual([
        { _key: '1', t: 'integer', text: '1', q: 'integer', p: 'real', b: 'integer', active: 1 },
        { _key: '1234567890123456', t: 'integer', text: '1234567890123456', q: 'integer', p: 'real', b: 'integer', active: 0 },
        // Past 2^53 as its JSON writes it (helper 89: 1.0e+18); past SQLite's 64-bit integers a REAL.
        { _key: 'big', t: 'integer', text: '1000000000000000000', q: 'integer', p: 'real', b: 'integer', active: 1 },
      ]);
    } finally {
      db.close();
    }
  });

  it('a field whose name differs only in case from one with a column stays in _record only (SQLite names ignore case)', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    await t.log.commit(lease, [storeWrite({ key: 'a', record: { Name: 'ACME LTD', name: 'acme' } }), storeWrite({ key: 'b', record: { name: 'beta' } })], { durable: false });
    expect(await t.log.readTable('sql', 'orders')).toEqual([
      { key: 'a', record: { Name: 'ACME LTD', name: 'acme' } },
      { key: 'b', record: { name: 'beta' } },
    ]);
    const db = new Database(t.dbPath, { readonly: true });
    try {
      expect(db.prepare(`SELECT "Name" AS col, json_extract(_record, '$.name') AS lower FROM orders ORDER BY _seq`).all()).toEqual([
        { col: 'ACME LTD', lower: 'acme' },
        { col: null, lower: 'beta' },
      ]);
    } finally {
      db.close();
    }
  });
});
