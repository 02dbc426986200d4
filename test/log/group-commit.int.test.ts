/**
 * Group commit: concurrent commits of different runs share one transaction and one fsync — on
 * both backends. The WAL-sync mechanics below are SQLite's; PostgreSQL's durability switch
 * (synchronous_commit per group) has its own test.
 */
import fs from 'node:fs';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LeaseLostError, type Lease } from '../../engine/log/log.js';
import { backends, openTempLog, type Backend, type TempLog } from '../support/temp-log.js';
import { newRun, started, storeWrite, value } from './helpers.js';

describe.each(backends)('%s', (backend: Backend) => {
let t: TempLog;
beforeEach(async () => {
  t = await openTempLog(backend);
});
afterEach(async () => {
  vi.restoreAllMocks();
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
    const taken = await t.log.acquire(b.runId, 'w2', b.expiresAt, 1_000, { takeOverFrom: 'w1' }); // w1 is known dead
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

  it('a commit alone in its group that fails half-way leaves nothing behind: no event, no row, no table, no seq', async () => {
    const [a] = (await makeRuns(1)) as [Lease];
    await t.log.commit(a, [storeWrite({ storeKind: 'nosql', table: 'docs', key: 'x', record: { v: 0 } })], { durable: false });
    // A new sql table is created and written, then a sql write to the nosql table 'docs' fails.
    const failing = t.log.commit(
      a,
      [value('lost'), storeWrite({ table: 'fresh', key: 'k', record: { v: 1 } }), storeWrite({ key: 'k', record: { v: 2 }, table: 'docs' })],
      { durable: true },
    );
    await expect(failing).rejects.toThrow(/table 'docs' already exists .* is a nosql store table/);
    expect((await t.log.read(a.runId)).map((e) => e.seq)).toEqual([1, 2]);
    expect(await t.log.readTable('sql', 'fresh')).toEqual([]);
    // The rolled-back table is made again by the next write to it, and seqs go on without a gap.
    expect(await t.log.commit(a, [storeWrite({ table: 'fresh', key: 'k', record: { v: 3 } })], { durable: true })).toMatchObject([{ seq: 3 }]);
    expect(await t.log.readTable('sql', 'fresh')).toEqual([{ key: 'k', record: { v: 3 } }]);
  });

  it('createRun calls in one group: a taken id fails alone, the others start with their events', async () => {
    await t.log.createRun(newRun('taken'), 'w1', 60_000, [started()]);
    const before = t.log.stats();
    const settled = await Promise.allSettled(['new-a', 'taken', 'new-b', 'new-b'].map((id) => t.log.createRun(newRun(id), 'w1', 60_000, [started(), started()])));
    expect(t.log.stats().transactions - before.transactions).toBe(1);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    for (const i of [1, 3]) expect(String((settled[i] as PromiseRejectedResult).reason)).toMatch(/already exists in this log/);
    for (const id of ['new-a', 'new-b']) expect((await t.log.read(id)).map((e) => e.seq)).toEqual([1, 2]);
    expect((await t.log.read('taken')).map((e) => e.seq)).toEqual([1]);
    const a = settled[0] as PromiseFulfilledResult<{ lease: Lease }>;
    expect(await t.log.commit(a.value.lease, [value('next')], { durable: true })).toMatchObject([{ seq: 3 }]);
  });

  it('close() commits what was queued instead of dropping it', async () => {
    const [lease] = (await makeRuns(1)) as [Lease];
    const pending = t.log.commit(lease, [value('last')], { durable: true });
    await t.log.close();
    expect((await pending)[0]?.seq).toBe(2);
    const { openLog } = await import('../../engine/log/open-log.js');
    const reopened = await openLog(t.dbPath);
    expect((await reopened.read(lease.runId)).map((e) => e.seq)).toEqual([1, 2]);
    await reopened.close();
  });
});

/**
 * fdatasync calls on the WAL, held until released: what a commit waits for, and when. The log
 * syncs a run's durable commits through `fs.fdatasync` off the main thread (wal-sync.ts).
 */
function holdWalSyncs() {
  const held: { release: () => void; fail: (error: Error) => void; walBytes: number }[] = [];
  const real = fs.fdatasync;
  const spy = vi.spyOn(fs, 'fdatasync').mockImplementation(((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
    // What the sync covers: the WAL as it is when the sync starts.
    held.push({ release: () => real(fd, callback), fail: (error) => callback(error), walBytes: fs.fstatSync(fd).size });
  }) as typeof fs.fdatasync);
  return { held, spy };
}

describe.runIf(backend === 'sqlite')('SQLite: durable run commits sync the WAL off the main thread', () => {

  it('settle only after an fdatasync that started after them, while the event loop runs on', async () => {
    const [a, b] = (await makeRuns(2)) as [Lease, Lease];
    const { held } = holdWalSyncs();
    let settled = 0;
    // Two runs' commits in one group: synced off the main thread.
    const commits = [a, b].map((lease) => t.log.commit(lease, [value('x')], { durable: true }).then(() => settled++));
    await new Promise((resolve) => setTimeout(resolve, 20)); // timers fire while the sync is out
    expect(held).toHaveLength(1);
    expect(settled).toBe(0);
    // Committed (another connection may read it) but not yet reported; and the sync began after
    // the group's frames were written, so it covers them.
    expect((await t.log.read(a.runId)).map((e) => e.seq)).toEqual([1, 2]);
    expect(held[0]!.walBytes).toBe(fs.statSync(`${t.dbPath}-wal`).size);
    held[0]!.release();
    await Promise.all(commits);
    expect(settled).toBe(2);
  });

  it('never leave a compare-and-set visible before it is on disk: a group holding a resume or a firing syncs at COMMIT (GUARANTEES 3)', async () => {
    // Another process acts on a resume or a firing as soon as it sees it (it carries the run on,
    // or skips the firing): visible-before-durable would let power loss take back what it acted on.
    const [a, b, paused] = (await makeRuns(3)) as [Lease, Lease, Lease];
    await t.log.commit(paused, [value('p')], { durable: true, status: { status: 'suspended', waitingOn: 'pause:p1', wakeAt: null, releaseLease: true } });
    const base = newRun('sched-base');
    await t.log.upsertSchedule({ mission: base.mission, spec: { trigger: { kind: 'every', everyMs: 60_000 } }, specHash: 'h', missionHash: base.missionHash, missionFiles: base.missionFiles, options: base.options, firstFireAt: 1_000, at: 1_000 });
    const { spy, held } = holdWalSyncs();
    // A group synced off the main thread would wait on a held sync: release any, then say so.
    const syncedInCommit = async <T>(group: Promise<T>): Promise<T> => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const offThread = spy.mock.calls.length;
      for (const h of held.splice(0)) h.release();
      const value = await group;
      expect(offThread, 'a group holding a compare-and-set was synced off the main thread').toBe(0);
      return value;
    };
    const lastSeq = (await t.log.getRun(paused.runId))!.lastSeq;
    // Two run commits (which alone would sync off the main thread) in one group with each
    // compare-and-set, a group each; both settle with no off-thread sync held: synced in COMMIT.
    const resumed = await syncedInCommit(Promise.all([
      t.log.commit(a, [value('a')], { durable: true }),
      t.log.resumeSuspended(paused.runId, 'pause:p1', { type: 'run.resumed', stepPath: '', payload: { reason: 'manual', owner: 'cli', replayFromSeq: lastSeq }, recordedAt: 2_000 }, lastSeq),
      t.log.commit(b, [value('b')], { durable: true }),
    ]));
    expect(resumed[1]).toBe('resumed');
    const fired = await syncedInCommit(Promise.all([
      t.log.commit(a, [value('a2')], { durable: true }),
      t.log.fireSchedule({ mission: base.mission, dueAt: 1_000, attempt: 0, nextFireAt: 61_000, missed: 0, firedAt: 1_000, run: newRun('fired'), first: [started()], owner: 'w1', ttlMs: 60_000 }),
      t.log.commit(b, [value('b2')], { durable: true }),
    ]));
    expect(fired[1]).toMatchObject({ outcome: 'started' });
  });

  it('leave a lone commit, with no sync out, to SQLite at COMMIT (no hop to a worker thread)', async () => {
    const [lease] = (await makeRuns(1)) as [Lease];
    const { spy } = holdWalSyncs();
    const before = t.log.stats();
    await t.log.commit(lease, [value('x')], { durable: true });
    expect(spy).not.toHaveBeenCalled();
    expect(t.log.stats().fsyncs - before.fsyncs).toBe(1);
  });

  it('let the commits that arrive during a sync share the next one', async () => {
    const leases = await makeRuns(7);
    const { held } = holdWalSyncs();
    const before = t.log.stats();
    const first = Promise.all(leases.slice(0, 2).map((lease) => t.log.commit(lease, [value('first')], { durable: true })));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(held).toHaveLength(1);
    // Five more, alone, in separate turns of the event loop (separate groups) while the first sync runs.
    const later: Promise<unknown>[] = [];
    for (const lease of leases.slice(2)) {
      later.push(t.log.commit(lease, [value('later')], { durable: true }));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(held).toHaveLength(1); // none of them may use the sync that started before them
    held[0]!.release();
    await first;
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(held).toHaveLength(2);
    held[1]!.release();
    await Promise.all(later);
    const after = t.log.stats();
    expect(after.transactions - before.transactions).toBe(6);
    expect(after.fsyncs - before.fsyncs).toBe(2);
  });

  it('reject the committed jobs when the sync fails; a job that failed on its own does not wait', async () => {
    const [a, b] = (await makeRuns(2)) as [Lease, Lease];
    await t.log.acquire(b.runId, 'w2', b.expiresAt, 1_000, { takeOverFrom: 'w1' }); // b's lease is lost
    const { held } = holdWalSyncs();
    const settled: string[] = [];
    const okJob = t.log.commit(a, [value('a')], { durable: true });
    const lostJob = t.log.commit(b, [value('b')], { durable: true });
    okJob.catch(() => settled.push('a'));
    await expect(lostJob).rejects.toBeInstanceOf(LeaseLostError);
    expect(settled).toEqual([]);
    held[0]!.fail(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    await expect(okJob).rejects.toThrow(/could not sync the log's WAL \(.*-wal\) to disk: EIO/);
  });

  it('leave the compare-and-set operations synced by SQLite at COMMIT, before anyone can read them', async () => {
    const { held, spy } = holdWalSyncs();
    const before = t.log.stats();
    const { lease } = await t.log.createRun(newRun('cas'), 'w1', 60_000, [started()]);
    expect(await t.log.deliverWebhook('/hook', 'd1', { ok: true }, 5_000)).toBe('accepted');
    expect(spy).not.toHaveBeenCalled();
    expect(held).toHaveLength(0);
    expect(t.log.stats().fsyncs - before.fsyncs).toBe(2);
    expect(lease.runId).toBe('cas');
  });

  it('close() waits for a sync in flight before closing the database', async () => {
    const leases = await makeRuns(2);
    const { held } = holdWalSyncs();
    const commit = Promise.all(leases.map((lease) => t.log.commit(lease, [value('x')], { durable: true })));
    await new Promise((resolve) => setTimeout(resolve, 5));
    let closed = false;
    const closing = t.log.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(false);
    held[0]!.release();
    await Promise.all([commit, closing]);
    expect(closed).toBe(true);
  });
});

describe.runIf(backend === 'postgres')('PostgreSQL: durability per group', () => {
  it('a durable group flushes even where the server (or the URL) makes synchronous_commit off the default', async () => {
    // Every connection of this log starts with off: only the durable writer's own SET turns it on.
    const url = t.target.includes('options=') ? `${t.target}${encodeURIComponent(' -c synchronous_commit=off')}` : `${t.target}?options=${encodeURIComponent('-c synchronous_commit=off')}`;
    const lazyDefault = await (await import('../../engine/log/open-log.js')).openLog(url);
    try {
      const { lease } = await lazyDefault.createRun(newRun('off-default'), 'w1', 60_000, [started()]);
      const real = pg.Client.prototype.query;
      const used = new Set<pg.Client>();
      vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
        const name = (args[0] as { name?: string } | undefined)?.name;
        if (name === 'reqon-fence-and-append') used.add(this);
        return (real as (...a: unknown[]) => unknown).apply(this, args);
      } as never);
      try {
        await lazyDefault.commit(lease, [value('durable')], { durable: true });
      } finally {
        vi.restoreAllMocks();
      }
      expect(used.size).toBe(1);
      const [writer] = [...used];
      expect((await writer!.query('SHOW synchronous_commit')).rows[0]).toEqual({ synchronous_commit: 'on' });
      // The URL's default did reach the connections: a plain one of the same URL is off.
      const plain = new pg.Client({ connectionString: url });
      await plain.connect();
      try {
        expect((await plain.query('SHOW synchronous_commit')).rows[0]).toEqual({ synchronous_commit: 'off' });
      } finally {
        await plain.end();
      }
    } finally {
      await lazyDefault.close();
    }
  });

  it('a group of non-durable commits runs with synchronous_commit off, a group with a durable one with it on', async () => {
    const leases = await makeRuns(3);
    const real = pg.Client.prototype.query;
    /** Runs `group` and says which statements it sent, and on which connections. */
    const traced = async (group: () => Promise<unknown>) => {
      const statements: string[] = [];
      const connections = new Set<pg.Client>();
      vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string; name?: string } | undefined)?.name;
        // A writer's session setting, sent once when it first connects, is what SHOW checks below.
        if (text !== undefined && !text.startsWith('SET synchronous_commit')) statements.push(text);
        connections.add(this);
        return (real as (...a: unknown[]) => unknown).apply(this, args);
      } as never);
      try {
        await group();
      } finally {
        vi.restoreAllMocks();
      }
      expect(connections.size).toBe(1);
      const [connection] = [...connections];
      const setting = (await connection!.query('SHOW synchronous_commit')).rows[0];
      return { statements, connection, setting };
    };
    // Events alone, none durable: the whole group is one statement, with no transaction around
    // it, on the lazy writer (session default off).
    const lazy = await traced(() => Promise.all(leases.map((lease) => t.log.commit(lease, [value('lazy')], { durable: false }))));
    expect(lazy.statements).toEqual(['reqon-fence-and-append']);
    expect(lazy.setting).toEqual({ synchronous_commit: 'off' });
    // One durable commit among them: the group is still one statement, on the durable writer
    // (session on), so it returns once its WAL is flushed — in one round trip.
    const mixed = await traced(() => Promise.all(leases.map((lease, i) => t.log.commit(lease, [value('mixed')], { durable: i === 1 }))));
    expect(mixed.statements).toEqual(['reqon-fence-and-append']);
    expect(mixed.setting).toEqual({ synchronous_commit: 'on' });
    expect(mixed.connection).not.toBe(lazy.connection);
    // A durable group that needs a transaction (a store write): BEGIN … COMMIT on the durable writer.
    const stored = await traced(() => t.log.commit(leases[0]!, [value('stored'), storeWrite({ key: 'k', record: { v: 1 }, table: 'docs' })], { durable: true }));
    expect(stored.statements[0]).toBe('BEGIN');
    expect(stored.statements.at(-1)).toBe('COMMIT');
    expect(stored.setting).toEqual({ synchronous_commit: 'on' });
    // Every other connection (leases, reads) keeps the server's default, on.
    const client = new pg.Client({ connectionString: t.target });
    await client.connect();
    try {
      expect((await client.query('SHOW synchronous_commit')).rows[0]).toEqual({ synchronous_commit: 'on' });
    } finally {
      await client.end();
    }
    for (const lease of leases.slice(1)) expect((await t.log.read(lease.runId)).map((e) => e.seq)).toEqual([1, 2, 3]);
  });
});

describe.runIf(backend === 'postgres')('PostgreSQL: a group of commits of events alone is one statement without a savepoint', () => {
  it('a lost lease in such a group fails alone; a statement PostgreSQL refuses re-runs the group with savepoints, failing only its own commit', async () => {
    const leases = await makeRuns(3);
    const [a, b, c] = leases as [Lease, Lease, Lease];
    await t.log.acquire(b.runId, 'w2', 0, 60_000, { takeOverFrom: 'w1' });
    const before = t.log.stats();
    const settled = await Promise.allSettled([
      t.log.commit(a, [value('a')], { durable: true }),
      t.log.commit(b, [value('b')], { durable: true }),
      // PostgreSQL text cannot hold a NUL: this statement fails inside the database.
      t.log.commit(c, [value('c', 2_000, 'bad\u0000path')], { durable: true }),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
    expect(String((settled[2] as PromiseRejectedResult).reason)).toMatch(/invalid byte sequence|0x00/);
    // One transaction committed (the first attempt was rolled back and run again with savepoints).
    expect(t.log.stats().transactions - before.transactions).toBe(1);
    expect((await t.log.read(a.runId)).map((e) => e.seq)).toEqual([1, 2]);
    expect((await t.log.read(b.runId)).map((e) => e.seq)).toEqual([1]);
    expect((await t.log.read(c.runId)).map((e) => e.seq)).toEqual([1]);
    expect((await t.log.commit(c, [value('c again')], { durable: false }))[0]?.seq).toBe(2);
  });
});
});
