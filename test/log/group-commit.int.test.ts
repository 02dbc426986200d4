/** Group commit: concurrent commits of different runs share one transaction and one fsync. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseLostError, type Lease } from '../../engine/log/log.js';
import { newRun, openTempLog, started, storeWrite, value, type TempLog } from './helpers.js';

let t: TempLog;
beforeEach(async () => {
  t = await openTempLog();
});
afterEach(async () => {
  await t.cleanup();
});

async function makeRuns(n: number): Promise<Lease[]> {
  return Promise.all(Array.from({ length: n }, async (_, i) => (await t.log.createRun(newRun(`run-${i}`), 'w1', 60_000, [started()])).lease));
}

describe('group commit', () => {
  it('N concurrent durable commits land in one transaction with one fsync', async () => {
    const leases = await makeRuns(16);
    const before = t.log.stats();
    // createRun calls made in the same turn were themselves grouped.
    expect(before).toMatchObject({ transactions: 1, fsyncs: 1 });
    const results = await Promise.all(leases.map((lease, i) => t.log.commit(lease, [value(i), value(i + 1)], { durable: true })));
    const after = t.log.stats();
    expect(after.transactions - before.transactions).toBe(1);
    expect(after.fsyncs - before.fsyncs).toBe(1);
    expect(after.durableCommits).toBe(16);
    expect(results.every((events) => events.map((e) => e.seq).join() === '2,3')).toBe(true);
  });

  it('commits spread over several turns still take fewer transactions than commits', async () => {
    const leases = await makeRuns(8);
    const before = t.log.stats();
    // Eight workers, each committing 10 times in a row (awaiting each commit): they interleave and share groups.
    await Promise.all(
      leases.map(async (lease, w) => {
        for (let i = 0; i < 10; i++) await t.log.commit(lease, [value({ w, i })], { durable: i % 2 === 0 });
      }),
    );
    const after = t.log.stats();
    expect(after.commits - before.commits).toBe(80);
    expect(after.transactions - before.transactions).toBeLessThanOrEqual(10);
    expect(after.fsyncs - before.fsyncs).toBeLessThanOrEqual(after.transactions - before.transactions);
    for (const lease of leases) {
      const seqs = (await t.log.read(lease.runId)).map((e) => e.seq);
      expect(seqs).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    }
  });

  it('non-durable groups do not count as fsyncs', async () => {
    const leases = await makeRuns(4);
    const before = t.log.stats();
    await Promise.all(leases.map((lease) => t.log.commit(lease, [value(1)], { durable: false })));
    const after = t.log.stats();
    expect(after.transactions - before.transactions).toBe(1);
    expect(after.fsyncs - before.fsyncs).toBe(0);
  });

  it('one batch failing its fence or its store write does not sink the others in the same group', async () => {
    const leases = await makeRuns(4);
    const [a, b, c, d] = leases as [Lease, Lease, Lease, Lease];
    const taken = await t.log.acquire(b.runId, 'w2', b.expiresAt, 1_000); // b's lease expired at its expiry instant
    expect(taken).toMatchObject({ owner: 'w2', epoch: 2 });
    // 'docs' holds a nosql store, so a sql write to it fails inside the transaction, in c's savepoint.
    await t.log.commit(d, [storeWrite({ storeKind: 'nosql', table: 'docs', key: 'x', record: { v: 0 } })], { durable: false });
    const before = t.log.stats();
    const settled = await Promise.allSettled([
      t.log.commit(a, [value('a')], { durable: true }),
      t.log.commit(b, [value('b')], { durable: true }),
      t.log.commit(c, [value('c'), storeWrite({ key: 'k', record: { v: 1 }, table: 'docs' })], { durable: true }),
      t.log.commit(d, [storeWrite({ key: 'k', record: { v: 'd' } })], { durable: true }),
    ]);
    expect(t.log.stats().transactions - before.transactions).toBe(1);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
    expect(String((settled[2] as PromiseRejectedResult).reason)).toMatch(/table 'docs' already exists .* is a nosql store table/);
    expect((await t.log.read(a.runId)).length).toBe(2);
    expect((await t.log.read(b.runId)).length).toBe(1);
    expect((await t.log.read(c.runId)).length).toBe(1);
    expect((await t.log.read(d.runId)).map((e) => e.type)).toEqual(['run.started', 'store.write', 'store.write']);
    expect(await t.log.readTable('sql', 'orders')).toEqual([{ key: 'k', record: { v: 'd' } }]);
  });

  it('close() commits what was queued instead of dropping it', async () => {
    const [lease] = (await makeRuns(1)) as [Lease];
    const pending = t.log.commit(lease, [value('last')], { durable: true });
    await t.log.close();
    expect((await pending)[0]?.seq).toBe(2);
    const { openLog } = await import('../../engine/log/log.js');
    const reopened = await openLog(t.dbPath);
    expect((await reopened.read(lease.runId)).map((e) => e.seq)).toEqual([1, 2]);
    await reopened.close();
  });
});
