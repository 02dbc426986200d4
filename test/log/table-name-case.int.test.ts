/**
 * A sql/nosql store's table name is one table whatever its letter case, on both backends: SQLite
 * matches identifiers without regard to case, so `sql("Orders")` and `sql("orders")` are one table
 * there, and they were two on PostgreSQL (quoted identifiers). One mission must mean the same on
 * both, and `reqon log copy` must neither split nor merge a table on the way: PostgreSQL now
 * names a store table in lower case (what an unquoted `SELECT … FROM Orders` finds too).
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { copyLog } from '../../engine/cli/log-copy.js';
import { backends, openTempLog, type Backend, type TempLog } from '../support/temp-log.js';
import { newRun, started, storeWrite } from './helpers.js';

const opened: TempLog[] = [];
async function temp(backend: Backend): Promise<TempLog> {
  const t = await openTempLog(backend);
  opened.push(t);
  return t;
}
afterEach(async () => {
  for (const t of opened.splice(0)) await t.close();
});

const to = (table: string, key: string, record: Record<string, unknown>) => storeWrite({ key, record, table, store: table });

describe.each(backends)('%s', (backend) => {
  it('"Orders", "orders" and "ORDERS" are one table: written, read and listed as one', async () => {
    const t = await temp(backend);
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    await t.log.commit(lease, [to('Orders', 'a', { n: 1 })], { durable: false });
    await t.log.commit(lease, [to('orders', 'b', { n: 2 })], { durable: false });
    // In one commit, interleaved: applied in order, as one table (the last write of a key wins).
    await t.log.commit(lease, [to('ORDERS', 'a', { n: 3 }), to('orders', 'a', { n: 4 }), to('Orders', 'c', { n: 5 })], { durable: false });
    const expected = [
      { key: 'a', record: { n: 4 } },
      { key: 'b', record: { n: 2 } },
      { key: 'c', record: { n: 5 } },
    ];
    for (const name of ['Orders', 'orders', 'ORDERS']) expect(await t.log.readTable('sql', name), name).toEqual(expected);
    const tables = await t.log.listTables();
    expect(tables).toHaveLength(1);
    expect(tables[0]!.storeKind).toBe('sql');
    expect(tables[0]!.table.toLowerCase()).toBe('orders');
    // A nosql store of the same name in another case is the same table, so refused alike.
    await expect(t.log.commit(lease, [storeWrite({ key: 'x', record: {}, table: 'oRdErS', store: 'docs', storeKind: 'nosql' })], { durable: false })).rejects.toThrow(
      /already exists in the log database and is a sql store table, so it cannot hold a nosql store/,
    );
  });

  for (const target of backends) {
    it(`reqon log copy to ${target} carries a table written as "Orders" and "orders" as the one table it is`, async () => {
      const from = await temp(backend);
      const { lease } = await from.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
      await from.log.commit(lease, [to('Orders', 'a', { n: 1 }), to('orders', 'b', { n: 2 })], { durable: true });
      await from.log.commit(lease, [], { durable: true, status: { status: 'completed', releaseLease: true } });
      const into = await temp(target);
      const report = await copyLog(from.log, into.log, { now: Date.now() });
      expect(report.tables.map((x) => [x.storeKind, x.table.toLowerCase(), x.rows])).toEqual([['sql', 'orders', 2]]);
      const rows = [
        { key: 'a', record: { n: 1 } },
        { key: 'b', record: { n: 2 } },
      ];
      for (const name of ['Orders', 'orders']) expect(await into.log.readTable('sql', name), name).toEqual(rows);
      expect(await into.log.listTables()).toHaveLength(1);
    });
  }
});

describe.runIf(backends.includes('postgres'))('postgres: a log written before store tables were named in lower case', () => {
  async function sql(target: string, statements: string[]): Promise<void> {
    const client = new pg.Client({ connectionString: target });
    await client.connect();
    try {
      for (const s of statements) await client.query(s);
    } finally {
      await client.end();
    }
  }
  /** A store table as an older engine made it, under the name as the mission wrote it. */
  const legacyTable = (name: string, key: string, n: number) => [
    `CREATE TABLE "${name}" (_seq BIGINT GENERATED ALWAYS AS IDENTITY, _key TEXT PRIMARY KEY, _record TEXT NOT NULL, n jsonb)`,
    `INSERT INTO "${name}" (_key, _record, n) VALUES ('${key}', '{"n":${n}}', '${n}')`,
  ];

  it('"Orders" is renamed "orders" when the log is opened: its rows are read under either name', async () => {
    const t = await temp('postgres');
    await sql(t.target, [...legacyTable('Orders', 'a', 1), 'DELETE FROM reqon_schema_version WHERE version = 6']);
    const again = await t.openAnother();
    expect(await again.readTable('sql', 'Orders')).toEqual([{ key: 'a', record: { n: 1 } }]);
    expect(await again.listTables()).toEqual([{ storeKind: 'sql', table: 'orders' }]);
  });

  it('"Orders" beside "orders": the log is not opened, the message says which tables and what to do, nothing renamed', async () => {
    const t = await temp('postgres');
    await sql(t.target, [...legacyTable('Orders', 'a', 1), ...legacyTable('orders', 'b', 2), 'DELETE FROM reqon_schema_version WHERE version = 6']);
    await expect(t.openAnother()).rejects.toThrow(
      /^cannot set up the run log in postgres:\/\/\S+: store tables "Orders" and orders are one table to this engine .*; merge the rows you want into orders and drop "Orders", or rename "Orders"/,
    );
    const client = new pg.Client({ connectionString: t.target });
    await client.connect();
    try {
      const { rows } = await client.query<{ relname: string }>(`SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname ILIKE 'orders' ORDER BY relname`);
      expect(rows.map((r) => r.relname)).toEqual(['Orders', 'orders']);
    } finally {
      await client.end();
    }
  });
});
