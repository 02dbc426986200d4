/**
 * `restoreTable` (the log contract's StoreTables), on each backend: rows read from one log's table
 * are written into another's as they were — in their order, each as a 'set' write would, with no
 * event — so `reqon log copy` can carry a table whose writers were pruned. A row the table cannot
 * take fails the whole call and writes nothing; bad arguments are named before any transaction.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventLog } from '../../engine/log/log.js';
import { backends, openTempLog, type Backend, type TempLog } from '../support/temp-log.js';
import { newRun, started, storeWrite } from './helpers.js';

describe.each(backends)('%s: restoreTable', (backend: Backend) => {
  let t: TempLog;
  let log: EventLog;
  beforeEach(async () => {
    t = await openTempLog(backend);
    log = t.log;
  });
  afterEach(async () => {
    await t.close();
  });

  it('writes the rows in their order with no event; a key already there is overwritten in its place', async () => {
    const rows = ['10', '2', 'b', '1'].map((key, i) => ({ key, record: { id: key, n: i, nested: { deep: [i] } } }));
    for (const storeKind of ['sql', 'nosql'] as const) {
      const table = `restored_${storeKind}`;
      await log.restoreTable(storeKind, table, rows);
      expect(await log.readTable(storeKind, table)).toEqual(rows);
      // A second batch: '2' rewritten keeps its place, 'z' goes to the end.
      await log.restoreTable(storeKind, table, [
        { key: '2', record: { id: '2', n: 20 } },
        { key: 'z', record: { id: 'z' } },
      ]);
      expect((await log.readTable(storeKind, table)).map((r) => [r.key, r.record['n']])).toEqual([
        ['10', 0],
        ['2', 20],
        ['b', 2],
        ['1', 3],
        ['z', undefined],
      ]);
    }
    expect(await log.listTables()).toEqual(
      expect.arrayContaining([
        { storeKind: 'sql', table: 'restored_sql' },
        { storeKind: 'nosql', table: 'restored_nosql' },
      ]),
    );
    expect(await log.listRuns()).toEqual([]);
  });

  it('a run then writes on top of the restored rows, as it would on rows it wrote itself', async () => {
    await log.restoreTable('sql', 'orders', [{ key: 'k1', record: { id: 'k1', total: 5 } }]);
    const { lease } = await log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    await log.commit(lease, [storeWrite({ key: 'k1', record: { status: 'paid' }, op: 'upsert' }), storeWrite({ key: 'k2', record: { id: 'k2' } })], { durable: true });
    expect(await log.readTable('sql', 'orders')).toEqual([
      { key: 'k1', record: { id: 'k1', total: 5, status: 'paid' } },
      { key: 'k2', record: { id: 'k2' } },
    ]);
  });

  it('a row the table cannot take fails the call and writes nothing; bad arguments are named', async () => {
    await log.restoreTable('sql', 'clash', [{ key: 'a', record: { id: 'a' } }]);
    // The same name as the other kind of table: refused as a store write would be.
    await expect(log.restoreTable('nosql', 'clash', [{ key: 'b', record: { id: 'b' } }])).rejects.toThrow();
    await expect(log.restoreTable('sql', 'fresh', [{ key: 'ok', record: { id: 'ok' } }, { key: '', record: {} }])).rejects.toThrow(/row 1's key must be a non-empty string/);
    expect(await log.readTable('sql', 'fresh')).toEqual([]);
    await expect(log.restoreTable('sql', 'fresh', [{ key: 'x', record: [1] as unknown as Record<string, unknown> }])).rejects.toThrow(/the record under key "x" must be an object/);
    await expect(log.restoreTable('memory' as 'sql', 'fresh', [])).rejects.toThrow(/store kind must be 'sql' or 'nosql'/);
    await expect(log.restoreTable('sql', 'reqon_runs', [])).rejects.toThrow();
    expect(await log.readTable('sql', 'clash')).toEqual([{ key: 'a', record: { id: 'a' } }]);
  });
});
