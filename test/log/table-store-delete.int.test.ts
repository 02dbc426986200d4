/**
 * A store table's delete entry (`delete S[k]`, op 'delete') on both log backends: the row goes in
 * the commit's transaction, recorded as a `store.write` with record null and `removed`; an absent
 * key is no error; a key written again after its delete goes to the end (a fresh `_seq`); a delete
 * from a table of the other store kind fails the commit and leaves the table as it was.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { backends, openTempLog, type Backend, type TempLog } from '../support/temp-log.js';
import { newRun, started, storeWrite } from './helpers.js';

const del = (key: string, storeKind: 'sql' | 'nosql' = 'sql') => storeWrite({ key, record: {}, op: 'delete', storeKind });

describe.each(backends)('%s: deleting from a store table', (backend: Backend) => {
  let t: TempLog;
  beforeEach(async () => {
    t = await openTempLog(backend);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  for (const storeKind of ['sql', 'nosql'] as const) {
    it(`${storeKind}: removes the row with its event, says whether one was there, and a rewrite goes last`, async () => {
      const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
      await t.log.commit(lease, ['a', 'b', 'c'].map((key) => storeWrite({ key, record: { id: key }, storeKind })), { durable: false });
      await t.log.commit(lease, [del('a', storeKind), del('zz', storeKind), del('a', storeKind)], { durable: false });
      expect((await t.log.readTable(storeKind, 'orders')).map((r) => r.key)).toEqual(['b', 'c']);
      await t.log.commit(lease, [storeWrite({ key: 'a', record: { id: 'a', back: true }, storeKind })], { durable: false });
      expect(await t.log.readTable(storeKind, 'orders')).toEqual([
        { key: 'b', record: { id: 'b' } },
        { key: 'c', record: { id: 'c' } },
        { key: 'a', record: { id: 'a', back: true } },
      ]);
      const deletes = (await t.log.read('r1')).filter((e): e is StoredEvent<'store.write'> => e.type === 'store.write' && e.payload.op === 'delete');
      expect(deletes.map((e) => e.payload)).toEqual([
        { effectId: 'eff-a', store: 'orders', key: 'a', record: null, op: 'delete', removed: true },
        { effectId: 'eff-zz', store: 'orders', key: 'zz', record: null, op: 'delete', removed: false },
        { effectId: 'eff-a', store: 'orders', key: 'a', record: null, op: 'delete', removed: false },
      ]);
    });
  }

  it('a delete from a table of the other kind fails the commit: nothing of it lands', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    await t.log.commit(lease, [storeWrite({ key: 'a', record: { id: 'a' } })], { durable: false });
    const before = (await t.log.read('r1')).length;
    await expect(t.log.commit(lease, [storeWrite({ key: 'b', record: { id: 'b' } }), del('a', 'nosql')], { durable: false })).rejects.toThrow(
      /table 'orders' already exists in the log database and is a sql store table, so it cannot hold a nosql store/,
    );
    expect(await t.log.readTable('sql', 'orders')).toEqual([{ key: 'a', record: { id: 'a' } }]);
    expect(await t.log.read('r1')).toHaveLength(before);
  });
});
