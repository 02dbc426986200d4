/**
 * The log's core semantics on both backends (a temp SQLite file, a fresh PostgreSQL database):
 * seq, atomicity, leases, status, CAS, due runs. Lease expiry is judged by the caller's `now` on
 * SQLite and by the database's clock on PostgreSQL: each has its own tests for that.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseLostError, LogVersionError, RunNotFoundError, type CommitEntry, type Lease } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { SCHEMA_VERSION } from '../../engine/log/sqlite/migrations.js';
import { MIGRATIONS as PG_MIGRATIONS, SCHEMA_VERSION as PG_SCHEMA_VERSION } from '../../engine/log/postgres/migrations.js';
import { backends, openTempLog, tempLogTarget, type Backend, type TempLog } from '../support/temp-log.js';
import { newRun, started, storeWrite, value } from './helpers.js';

/** Runs `sql` on the test's PostgreSQL database directly (another client, not the engine's). */
async function pgQuery<R extends pg.QueryResultRow = Record<string, unknown>>(url: string, sql: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** The PostgreSQL server's clock in epoch ms, as the log reads it. */
async function dbNow(url: string): Promise<number> {
  const [row] = await pgQuery<{ now: string }>(url, 'SELECT reqon_now_ms() AS now');
  return Number(row!.now);
}

function isLease(x: unknown): x is Lease {
  return typeof x === 'object' && x !== null && 'epoch' in x;
}

describe.each(backends)('%s log', (backend: Backend) => {
  const onSqlite = backend === 'sqlite';
  let t: TempLog;
  beforeEach(async () => {
    t = await openTempLog(backend);
  });
  afterEach(async () => {
    await t.cleanup();
  });

describe('createRun and reads', () => {
  it('creates a running run owned by the creator, with its first events from seq 1', async () => {
    const { lease, events } = await t.log.createRun(newRun('r1', 1_000), 'w1', 30_000, [started()]);
    // SQLite: createdAt + ttl; PostgreSQL: the database's clock + ttl (its own test below).
    const expiresAt = onSqlite ? 31_000 : lease.expiresAt;
    expect(lease).toEqual({ runId: 'r1', owner: 'w1', epoch: 1, expiresAt });
    expect(events.map((e) => [e.seq, e.type])).toEqual([[1, 'run.started']]);
    const run = await t.log.getRun('r1');
    expect(run).toMatchObject({
      runId: 'r1',
      status: 'running',
      lastSeq: 1,
      owner: 'w1',
      leaseEpoch: 1,
      leaseExpiresAt: expiresAt,
      wakeAt: null,
      waitingOn: null,
      createdAt: 1_000,
      updatedAt: 1_000,
    });
    expect(run?.missionFiles.files[0]?.text).toBe('mission demo {}');
    expect(run?.options.sources).toEqual({ api: 'http://127.0.0.1:1' });
    expect(await t.log.getRun('nope')).toBeUndefined();
  });

  it('refuses a duplicate run id and leaves the first run untouched', async () => {
    await t.log.createRun(newRun('dup'), 'w1', 30_000, [started()]);
    await expect(t.log.createRun(newRun('dup'), 'w2', 30_000, [started(), started()])).rejects.toThrow(/run 'dup' already exists/);
    expect((await t.log.read('dup')).length).toBe(1);
    expect((await t.log.getRun('dup'))?.owner).toBe('w1');
  });

  it('assigns contiguous seqs across many commits and reads ranges back exactly', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    for (let i = 0; i < 20; i++) {
      const entries = Array.from({ length: (i % 3) + 1 }, (_, j) => value({ i, j }, 2_000 + i));
      const written = await t.log.commit(lease, entries, { durable: i % 4 === 0 });
      expect(written.map((e) => e.seq)).toEqual(entries.map((_, j) => written[0]!.seq + j));
    }
    const all = await t.log.read('r1');
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: all.length }, (_, i) => i + 1));
    expect(all.length).toBe(1 + 7 * 1 + 7 * 2 + 6 * 3); // batch sizes 1,2,3 cycling over 20 commits
    expect((await t.log.getRun('r1'))?.lastSeq).toBe(all.length);
    expect((await t.log.read('r1', { fromSeq: 5, toSeq: 9 })).map((e) => e.seq)).toEqual([5, 6, 7, 8, 9]);
    expect((await t.log.read('r1', { fromSeq: 30, limit: 3 })).map((e) => e.seq)).toEqual([30, 31, 32]);
    expect((await t.log.getRun('r1'))?.updatedAt).toBe(2_019);
  });

  it('finds the newest event of given types, in this run only, as read returns it', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    const other = await t.log.createRun(newRun('r2'), 'w1', 30_000, [started()]);
    await t.log.commit(lease, [value('a'), storeWrite({ key: 'k1', record: { a: 1 } }), value('b')], { durable: false, returnEvents: false });
    await t.log.commit(other.lease, [value('from r2')], { durable: false });
    await t.log.commit(lease, [storeWrite({ key: 'k2', record: { a: 2 } }), { kind: 'event', event: started() }], { durable: false });
    const all = await t.log.read('r1');
    const newest = await t.log.lastOfTypes('r1', ['value.recorded', 'store.write']);
    expect(newest).toEqual(all.find((e) => e.seq === 5));
    expect((await t.log.lastOfTypes('r1', ['value.recorded']))?.payload).toEqual({ source: 'random', value: 'b' });
    expect(await t.log.lastOfTypes('r1', ['pause.created'])).toBeUndefined();
    expect(await t.log.lastOfTypes('r1', [])).toBeUndefined();
    expect(await t.log.lastOfTypes('nope', ['run.started'])).toBeUndefined();
    await expect(t.log.lastOfTypes('r1', 'store.write' as never)).rejects.toThrow(/types must be an array/);
  });

  it('finds the newest event of summary types (read through their index on SQLite) as it finds any other', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    const other = await t.log.createRun(newRun('r2'), 'w1', 30_000, [started()]);
    const pause = (pauseId: string, recordedAt: number): CommitEntry => ({ kind: 'event', event: { type: 'pause.created', stepPath: 'main/2', payload: { pauseId, webhookPath: '/ok' }, recordedAt } });
    await t.log.commit(lease, [pause('p1', 10), value('a'), pause('p2', 11), value('b')], { durable: false });
    await t.log.commit(other.lease, [pause('p9', 12)], { durable: false });
    const all = await t.log.read('r1');
    const p2 = all.find((e) => e.type === 'pause.created' && (e.payload as { pauseId: string }).pauseId === 'p2');
    expect(await t.log.lastOfTypes('r1', ['pause.created', 'pause.resumed'])).toEqual(p2);
    expect(await t.log.lastOfTypes('r1', ['pause.resumed', 'run.completed', 'run.failed'])).toBeUndefined();
    // A summary type beside another: the same answer by the other statement.
    expect((await t.log.lastOfTypes('r1', ['pause.created', 'value.recorded']))?.seq).toBe(all.at(-1)!.seq);
    expect((await t.log.lastOfTypes('r2', ['pause.created']))?.payload).toEqual({ pauseId: 'p9', webhookPath: '/ok' });
  });

  it('reads only the events of given types, in this run only, in order, within the range and limit, as read returns them', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    const other = await t.log.createRun(newRun('r2'), 'w1', 30_000, [started()]);
    await t.log.commit(other.lease, [storeWrite({ key: 'o', record: { a: 0 } })], { durable: false });
    for (let i = 0; i < 4; i++) await t.log.commit(lease, [value(i), storeWrite({ key: `k${i}`, record: { a: i } })], { durable: false });
    const all = await t.log.read('r1');
    const writes = all.filter((e) => e.type === 'store.write');
    expect(await t.log.read('r1', { types: ['store.write'] })).toEqual(writes);
    expect(await t.log.read('r1', { types: ['store.write', 'run.started'] })).toEqual(all.filter((e) => e.type !== 'value.recorded'));
    expect((await t.log.read('r1', { types: ['store.write'], fromSeq: 4, toSeq: 8 })).map((e) => e.seq)).toEqual([5, 7]);
    expect((await t.log.read('r1', { types: ['store.write'], limit: 2 })).map((e) => e.seq)).toEqual([3, 5]);
    expect(await t.log.read('r1', { types: ['pause.created'] })).toEqual([]);
    expect(await t.log.read('r1', { types: [] })).toEqual([]);
    await expect(t.log.read('r1', { types: 'store.write' as never })).rejects.toThrow(/read 'r1': types must be an array of event types/);
  });

  it('returns from commit exactly what read returns later (payload through JSON)', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    const written = await t.log.commit(lease, [value({ a: 1, gone: undefined, when: new Date(0) })], { durable: false });
    expect(written[0]?.payload).toEqual({ source: 'random', value: { a: 1, when: '1970-01-01T00:00:00.000Z' } });
    expect(await t.log.read('r1', { fromSeq: 2 })).toEqual(written);
  });

  it('lists runs newest first and by status', async () => {
    await t.log.createRun(newRun('a', 1), 'w', 1000, []);
    await t.log.createRun(newRun('b', 2), 'w', 1000, []);
    const { lease } = await t.log.createRun(newRun('c', 3), 'w', 1000, []);
    await t.log.commit(lease, [], { durable: false, status: { status: 'completed', releaseLease: true } });
    expect((await t.log.listRuns()).map((r) => r.runId)).toEqual(['c', 'b', 'a']);
    expect((await t.log.listRuns({ limit: 2 })).map((r) => r.runId)).toEqual(['c', 'b']);
    expect((await t.log.listRuns({ status: 'completed' })).map((r) => r.runId)).toEqual(['c']);
    expect((await t.log.listRuns({ status: 'running' })).map((r) => r.runId)).toEqual(['b', 'a']);
    await expect(t.log.listRuns({ status: 'done' as never })).rejects.toThrow(/unknown status "done"/);
    // Several statuses in one statement (the webhook server's "does any run wait on this path").
    expect((await t.log.listRuns({ status: ['completed', 'running'] })).map((r) => r.runId)).toEqual(['c', 'b', 'a']);
    expect((await t.log.listRuns({ status: ['suspended', 'running'] })).map((r) => r.runId)).toEqual(['b', 'a']);
    expect(await t.log.listRuns({ status: [] })).toEqual([]);
    expect(await t.log.countRuns({ status: ['completed', 'failed'] })).toBe(1);
    await expect(t.log.listRuns({ status: ['running', 'done' as never] })).rejects.toThrow(/unknown status "done"/);
  });
});

describe('commit atomicity and store tables', () => {
  it('a commit whose store write fails writes no event, no row and no status change', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    const bad = storeWrite({ key: 'k', record: { a: 1 }, table: 'reqon_runs' });
    await expect(t.log.commit(lease, [value(1), bad], { durable: true, status: { status: 'completed' } })).rejects.toThrow(
      /table name 'reqon_runs' is reserved/,
    );
    await expect(t.log.commit(lease, [value(1), storeWrite({ key: 'k', record: { a: 1 }, table: 'bad name' })], { durable: false })).rejects.toThrow(
      /"bad name" is not a plain identifier/,
    );
    expect((await t.log.read('r1')).length).toBe(1);
    expect((await t.log.getRun('r1'))?.status).toBe('running');
    expect((await t.log.getRun('r1'))?.lastSeq).toBe(1);
    // The next good commit continues at seq 2: no seq was burned.
    const next = await t.log.commit(lease, [value(2)], { durable: false });
    expect(next[0]?.seq).toBe(2);
  });

  it('a failure inside the transaction (sql table taken by a nosql store) rolls back the whole commit, including a new table', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    await t.log.commit(lease, [storeWrite({ storeKind: 'nosql', table: 'docs', key: 'a', record: { x: 1 } })], { durable: false });
    const entries = [
      storeWrite({ table: 'fresh', key: 'k1', record: { a: 1 } }), // creates table 'fresh'
      value('between'),
      storeWrite({ storeKind: 'sql', table: 'docs', key: 'b', record: { y: 2 } }), // wrong kind → fails
    ];
    await expect(t.log.commit(lease, entries, { durable: false })).rejects.toThrow(/table 'docs' already exists .* is a nosql store table/);
    expect((await t.log.read('r1')).map((e) => e.type)).toEqual(['run.started', 'store.write']);
    expect(await t.log.readTable('sql', 'fresh')).toEqual([]);
    // The rolled-back CREATE TABLE is forgotten: writing to 'fresh' again works.
    await t.log.commit(lease, [storeWrite({ table: 'fresh', key: 'k1', record: { a: 1 } })], { durable: false });
    expect(await t.log.readTable('sql', 'fresh')).toEqual([{ key: 'k1', record: { a: 1 } }]);
  });

  it('upsert merges into the existing row and the store.write event records the merged record and what it planned', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    await t.log.commit(lease, [storeWrite({ key: 'o1', record: { id: 'o1', total: 10, status: 'new' } })], { durable: false });
    const [ev] = await t.log.commit(
      lease,
      [storeWrite({ key: 'o1', op: 'upsert', record: { status: 'paid', note: undefined, paidAt: 5 }, effectId: 'e2' })],
      { durable: true },
    );
    const merged = { id: 'o1', total: 10, status: 'paid', paidAt: 5 };
    expect(ev).toMatchObject({ type: 'store.write', seq: 3, stepPath: 'main/1', recordedAt: 3_000 });
    // What the upsert planned is recorded beside the merge, for a replay to compare exactly.
    expect(ev?.payload).toEqual({ effectId: 'e2', store: 'orders', key: 'o1', record: merged, op: 'upsert', planned: { status: 'paid', paidAt: 5 } });
    expect(await t.log.readTable('sql', 'orders')).toEqual([{ key: 'o1', record: merged }]);
    // 'set' replaces: fields it lacks disappear from the record and their columns become NULL.
    await t.log.commit(lease, [storeWrite({ key: 'o1', record: { id: 'o1', total: 11 } })], { durable: false });
    expect(await t.log.readTable('sql', 'orders')).toEqual([{ key: 'o1', record: { id: 'o1', total: 11 } }]);
  });

  it('projects sql records into queryable columns and nosql records into _doc', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    await t.log.commit(
      lease,
      [
        storeWrite({ key: 'b', record: { id: 'b', total: 20, paid: true, tags: ['x'], meta: { n: 1 }, none: null } }),
        storeWrite({ key: 'a', record: { id: 'a', total: 5, Total: 'case-clash', _key: 'spoof', 'odd "name"': 'q' } }),
        storeWrite({ storeKind: 'nosql', table: 'people', key: 'p1', record: { name: 'Ada', langs: ['en'] } }),
      ],
      { durable: true },
    );
    // Insertion order (reference §B.4), not key order.
    expect((await t.log.readTable('sql', 'orders')).map((r) => r.key)).toEqual(['b', 'a']);
    if (onSqlite) {
    const db = new Database(t.dbPath, { readonly: true });
    try {
      const rows = db.prepare('SELECT _key, id, total, paid, tags, meta, "none", "odd ""name""" AS odd FROM orders ORDER BY _key').all();
      expect(rows).toEqual([
        { _key: 'a', id: 'a', total: 5, paid: null, tags: null, meta: null, none: null, odd: 'q' },
        { _key: 'b', id: 'b', total: 20, paid: 1, tags: '["x"]', meta: '{"n":1}', none: null, odd: null },
      ]);
      // The exact record (with the fields that could not get a column of their own) stays in _record.
      const a = db.prepare("SELECT _record FROM orders WHERE _key = 'a'").get() as { _record: string };
      expect(JSON.parse(a._record)).toEqual({ id: 'a', total: 5, Total: 'case-clash', _key: 'spoof', 'odd "name"': 'q' });
      expect(db.prepare("SELECT json_extract(_doc, '$.name') AS name FROM people").get()).toEqual({ name: 'Ada' });
      expect(db.prepare('SELECT sum(total) AS s FROM orders WHERE total > 1').get()).toEqual({ s: 25 });
    } finally {
      db.close();
    }
    } else {
      // Projected columns are jsonb, case-sensitive (Total and total are two columns).
      const rows = await pgQuery(t.target, 'SELECT _key, id, total, "Total", paid, tags, meta, "none", "odd ""name""" AS odd FROM orders ORDER BY _key');
      expect(rows).toEqual([
        { _key: 'a', id: 'a', total: 5, Total: 'case-clash', paid: null, tags: null, meta: null, none: null, odd: 'q' },
        { _key: 'b', id: 'b', total: 20, Total: null, paid: true, tags: ['x'], meta: { n: 1 }, none: null, odd: null },
      ]);
      const [a] = await pgQuery<{ _record: string }>(t.target, "SELECT _record FROM orders WHERE _key = 'a'");
      expect(JSON.parse(a!._record)).toEqual({ id: 'a', total: 5, Total: 'case-clash', _key: 'spoof', 'odd "name"': 'q' });
      expect(await pgQuery(t.target, "SELECT _doc::jsonb ->> 'name' AS name FROM people")).toEqual([{ name: 'Ada' }]);
      expect(await pgQuery(t.target, 'SELECT sum(total::numeric)::int AS s FROM orders WHERE total::numeric > 1')).toEqual([{ s: 25 }]);
    }
    expect(await t.log.readTable('nosql', 'people')).toEqual([{ key: 'p1', record: { name: 'Ada', langs: ['en'] } }]);
    expect(await t.log.readTable('nosql', 'never_written')).toEqual([]);
    await expect(t.log.readTable('nosql', 'orders')).rejects.toThrow(/is a sql store table, so it cannot hold a nosql store/);
  });

  it('rejects malformed entries with clear messages before touching the database', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    await expect(t.log.commit(lease, [{ kind: 'event', event: { ...started(), recordedAt: 1.5 } }], { durable: false })).rejects.toThrow(
      /recordedAt of 'run.started' must be whole milliseconds/,
    );
    await expect(t.log.commit(lease, [{ kind: 'nope' } as never], { durable: false })).rejects.toThrow(/an entry must be/);
    await expect(t.log.commit(lease, [storeWrite({ key: 'k', record: [1] as never })], { durable: false })).rejects.toThrow(
      /expected an object but got: array/,
    );
    await expect(t.log.commit(lease, [], { durable: false, status: { status: 'suspended' } })).rejects.toThrow(
      /a suspended run must say what it waits on/,
    );
    expect((await t.log.getRun('r1'))?.lastSeq).toBe(1);
  });
});

describe('leases and fencing', () => {
  it.runIf(onSqlite)('SQLite: refuses a second owner while the lease is live, hands over once it expired, and fences the old owner', async () => {
    const { lease: old } = await t.log.createRun(newRun('r1', 0), 'w1', 1_000, [started(0)]);
    expect(await t.log.acquire('r1', 'w2', 999, 1_000)).toEqual({ heldBy: 'w1', expiresAt: 1_000 });
    expect(await t.log.acquire('r1', 'w1', 500, 1_000)).toEqual({ heldBy: 'w1', expiresAt: 1_000 });
    const taken = await t.log.acquire('r1', 'w2', 1_000, 5_000);
    expect(taken).toMatchObject({ runId: 'r1', owner: 'w2', epoch: 2, expiresAt: 6_000 });
    // The run's row as it stands under the new lease, read in the same statement.
    expect('run' in taken && taken.run).toMatchObject({ runId: 'r1', owner: 'w2', leaseEpoch: 2, leaseExpiresAt: 6_000 });
    const stale = t.log.commit(old, [value('from the old owner')], { durable: true });
    await expect(stale).rejects.toBeInstanceOf(LeaseLostError);
    await expect(t.log.commit(old, [value('again')], { durable: false })).rejects.toThrow(
      /lease on run 'r1' lost: owner 'w1' at epoch 1 is no longer current \(now held by 'w2' at epoch 2\); nothing was written/,
    );
    await expect(t.log.renew(old, 1_001, 1_000)).rejects.toBeInstanceOf(LeaseLostError);
    await t.log.release(old); // a no-op: it does not free w2's lease
    expect((await t.log.getRun('r1'))?.owner).toBe('w2');
    expect((await t.log.read('r1')).length).toBe(1);
    if (!isLease(taken)) throw new Error('expected a lease');
    const written = await t.log.commit(taken, [value('new owner')], { durable: false });
    expect(written[0]?.seq).toBe(2);
  });

  it.runIf(onSqlite)('SQLite: renews, releases, and lets the next acquire bump the epoch', async () => {
    const { lease } = await t.log.createRun(newRun('r1', 0), 'w1', 1_000, []);
    const renewed = await t.log.renew(lease, 900, 1_000);
    expect(renewed.expiresAt).toBe(1_900);
    expect(await t.log.acquire('r1', 'w2', 1_500, 1_000)).toEqual({ heldBy: 'w1', expiresAt: 1_900 });
    await t.log.release(renewed);
    expect((await t.log.getRun('r1'))?.owner).toBeNull();
    const again = await t.log.acquire('r1', 'w1', 1_600, 1_000);
    expect(again).toMatchObject({ owner: 'w1', epoch: 2 });
    await expect(t.log.commit(renewed, [], { durable: false })).rejects.toBeInstanceOf(LeaseLostError);
    await expect(t.log.acquire('ghost', 'w1', 0, 10)).rejects.toBeInstanceOf(RunNotFoundError);
    await expect(t.log.acquire('r1', 'w1', 0, 0)).rejects.toThrow(/ttlMs must be a positive whole number/);
  });

  it('releaseLease in a status change spends the lease', async () => {
    const { lease } = await t.log.createRun(newRun('r1', 0), 'w1', 1_000, []);
    await t.log.commit(lease, [value(1)], { durable: true, status: { status: 'completed', releaseLease: true } });
    const run = await t.log.getRun('r1');
    expect(run).toMatchObject({ status: 'completed', owner: null, leaseExpiresAt: null, lastSeq: 1 });
    await expect(t.log.commit(lease, [value(2)], { durable: false })).rejects.toThrow(/the run has no owner now, epoch 1/);
  });

  it('rejects a second commit on a run while the first is in flight (debug check)', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, []);
    const first = t.log.commit(lease, [value(1)], { durable: false });
    await expect(t.log.commit(lease, [value(2)], { durable: false })).rejects.toThrow(/await each commit before the next/);
    expect((await first)[0]?.seq).toBe(1);
    expect((await t.log.commit(lease, [value(3)], { durable: false }))[0]?.seq).toBe(2);
  });
});

describe('suspension, resume and due runs', () => {
  it('resumeSuspended is a compare-and-set: exactly one of many racing resumers wins, with its event', async () => {
    const { lease } = await t.log.createRun(newRun('r1', 0), 'w1', 1_000, [started(0)]);
    await t.log.commit(lease, [{ kind: 'event', event: { type: 'pause.created', stepPath: 'main/2', payload: { pauseId: 'p1', webhookPath: '/ok' }, recordedAt: 10 } }], {
      durable: true,
      status: { status: 'suspended', waitingOn: 'pause:p1', releaseLease: true },
    });
    expect(await t.log.resumeSuspended('r1', 'pause:other', resumed('x'))).toBe('not-waiting');
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => t.log.resumeSuspended('r1', 'pause:p1', resumed(`r${i}`))));
    expect(results.filter((r) => r === 'resumed')).toHaveLength(1);
    const events = await t.log.read('r1');
    expect(events.map((e) => e.type)).toEqual(['run.started', 'pause.created', 'pause.resumed']);
    expect(events[2]?.payload).toEqual({ pauseId: 'p1', by: 'api', payload: { who: 'r0' } });
    expect(await t.log.getRun('r1')).toMatchObject({ status: 'running', waitingOn: null, wakeAt: null, owner: null, lastSeq: 3 });
    expect(await t.log.resumeSuspended('r1', 'pause:p1', resumed('late'))).toBe('not-waiting');
    await expect(t.log.resumeSuspended('ghost', 'pause:p1', resumed('g'))).rejects.toBeInstanceOf(RunNotFoundError);
  });

  it('resumeSuspended puts its delivery in the inbox only when it wins: racing resumers leave no payload behind for the winner (helper 58)', async () => {
    const { lease } = await t.log.createRun(newRun('r1', 0), 'w1', 100_000, []);
    await t.log.commit(lease, [], { durable: false, status: { status: 'suspended', waitingOn: 'wait:/w', releaseLease: true } });
    const deliver = (who: string) => ({ path: '/w', eventId: 'resume:r1:0', payload: { who }, receivedAt: 5 });
    // Ten racers, half with a payload: one wins, and the inbox holds its payload alone, or none.
    const racers = Array.from({ length: 10 }, (_, i) => t.log.resumeSuspended('r1', 'wait:/w', resumed(`r${i}`), 0, undefined, i % 2 === 0 ? deliver(`r${i}`) : undefined));
    const results = await Promise.all(racers);
    expect(results.filter((r) => r === 'resumed')).toHaveLength(1);
    const winner = results.indexOf('resumed');
    const inbox = await t.log.webhookInbox('/w');
    expect(inbox.map((d) => d.payload)).toEqual(winner % 2 === 0 ? [{ who: `r${winner}` }] : []);
    // A loser that comes after the winner (it read the run before the resume) leaves nothing either.
    expect(await t.log.resumeSuspended('r1', 'wait:/w', resumed('late'), 0, undefined, { ...deliver('late'), eventId: 'resume:r1:late' })).toBe('not-waiting');
    expect((await t.log.webhookInbox('/w')).map((d) => d.eventId)).toEqual(inbox.map((d) => d.eventId));
  });

  it('resuming revokes a lease still held on the suspended run', async () => {
    const { lease } = await t.log.createRun(newRun('r1', 0), 'w1', 100_000, []);
    await t.log.commit(lease, [], { durable: false, status: { status: 'suspended', waitingOn: 'wait:/hooks/pay' } });
    expect(await t.log.resumeSuspended('r1', 'wait:/hooks/pay', resumed('hook'))).toBe('resumed');
    await expect(t.log.commit(lease, [value(1)], { durable: false })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await t.log.acquire('r1', 'w2', 1, 1_000)).toMatchObject({ owner: 'w2', epoch: 2 });
  });

  it.runIf(onSqlite)('SQLite: dueRuns returns due timers and running runs whose owner is gone, not live or future ones', async () => {
    const suspend = async (runId: string, wakeAt: number | null) => {
      const { lease } = await t.log.createRun(newRun(runId, 0), 'w', 100, []);
      await t.log.commit(lease, [], { durable: false, status: { status: 'suspended', wakeAt, waitingOn: `pause:${runId}`, releaseLease: true } });
    };
    await suspend('timer-due', 500);
    await suspend('timer-later', 5_000);
    await suspend('webhook-only', null);
    await t.log.createRun(newRun('live', 0), 'w', 10_000, []); // lease until 10_000
    await t.log.createRun(newRun('dead', 0), 'w', 300, []); // lease expired at 300
    const { lease: done } = await t.log.createRun(newRun('done', 0), 'w', 300, []);
    await t.log.commit(done, [], { durable: false, status: { status: 'completed' } });
    expect((await t.log.dueRuns(1_000, 10)).map((r) => r.runId)).toEqual(['dead', 'timer-due']);
    expect((await t.log.dueRuns(1_000, 1)).map((r) => r.runId)).toEqual(['dead']);
    expect((await t.log.dueRuns(6_000, 10)).map((r) => r.runId)).toEqual(['dead', 'timer-due', 'timer-later']);
    // A worker that has leased the due timer takes it out of the list until its lease expires.
    expect(await t.log.acquire('timer-due', 'w9', 1_000, 1_000)).toMatchObject({ owner: 'w9' });
    expect((await t.log.dueRuns(1_500, 10)).map((r) => r.runId)).toEqual(['dead']);
    expect((await t.log.dueRuns(2_000, 10)).map((r) => r.runId)).toEqual(['dead', 'timer-due']);
    const due = (await t.log.dueRuns(6_000, 10))[2];
    expect(due).toMatchObject({ status: 'suspended', wakeAt: 5_000, waitingOn: 'pause:timer-later' });
  });
});

describe('schema and opening', () => {
  it.runIf(onSqlite)('SQLite: migrates to user_version, enforces append-only events and reopens idempotently', async () => {
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    await t.log.commit(lease, [value(1)], { durable: true });
    const db = new Database(t.dbPath);
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(() => db.prepare("UPDATE reqon_events SET type = 'x' WHERE run_id = 'r1'").run()).toThrow(/append-only/);
      expect(() => db.prepare("DELETE FROM reqon_events WHERE run_id = 'r1'").run()).toThrow(/append-only/);
      // REPLACE deletes the old row without the delete trigger unless recursive triggers are on,
      // as the engine sets them on every connection it opens (checked below): then it is refused.
      db.pragma('recursive_triggers = ON');
      const before = db.prepare("SELECT type, payload FROM reqon_events WHERE run_id = 'r1' AND seq = 1").get();
      const insert = (verb: string) => () =>
        db.prepare(`${verb} INTO reqon_events (run_id, seq, type, step_path, payload, recorded_at) VALUES ('r1', 1, 'x', '', '{}', 1)`).run();
      for (const verb of ['INSERT OR REPLACE', 'REPLACE']) expect(insert(verb)).toThrow(/append-only/);
      expect(insert('INSERT')).toThrow(/UNIQUE constraint failed/);
      expect(insert('INSERT OR IGNORE')().changes).toBe(0);
      expect(db.prepare("SELECT type, payload FROM reqon_events WHERE run_id = 'r1' AND seq = 1").get()).toEqual(before);
    } finally {
      db.close();
    }
    const second = await openLog(t.dbPath);
    expect((await second.read('r1')).length).toBe(2);
    // The engine's own connection: REPLACE fires the append-only delete trigger there.
    expect((second as unknown as { db: Database.Database }).db.pragma('recursive_triggers', { simple: true })).toBe(1);
    await second.close();
  });

  it.runIf(onSqlite)('SQLite: refuses a database from a newer engine, and use after close', async () => {
    const db = new Database(t.dbPath);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    await expect(openLog(t.dbPath)).rejects.toThrow(`schema version ${SCHEMA_VERSION + 1}, newer than this engine knows (${SCHEMA_VERSION}); upgrade reqon`);
    const other = await openTempLog(backend);
    await other.log.close();
    await expect(other.log.read('r1')).rejects.toThrow(/the run log is closed; 'read' was called after close\(\)/);
    await other.cleanup();
  });
});

describe('PostgreSQL: leases by the database clock', () => {
  it.runIf(!onSqlite)('a lease expires ttl after the database\'s now, whatever `now` the caller passes', async () => {
    const before = await dbNow(t.target);
    const { lease } = await t.log.createRun(newRun('r1', 1_000), 'w1', 60_000, [started()]);
    const after = await dbNow(t.target);
    expect(lease.expiresAt).toBeGreaterThanOrEqual(before + 60_000);
    expect(lease.expiresAt).toBeLessThanOrEqual(after + 60_000);
    // A worker whose clock runs far ahead cannot take a live lease, nor see the run as due.
    const farFuture = 8_000_000_000_000;
    expect(await t.log.acquire('r1', 'w2', farFuture, 1_000)).toEqual({ heldBy: 'w1', expiresAt: lease.expiresAt });
    expect((await t.log.dueRuns(farFuture, 10)).map((r) => r.runId)).toEqual([]);
    // Renewed from the database's now too, even by a caller whose clock says 1970.
    const renewed = await t.log.renew(lease, 0, 120_000);
    expect(renewed.expiresAt).toBeGreaterThanOrEqual(after + 120_000);
    expect((await t.log.getRun('r1'))?.leaseExpiresAt).toBe(renewed.expiresAt);
  });

  it.runIf(!onSqlite)('an expired lease (by the database clock) is taken over even by a caller whose clock says 1970, and the old owner is fenced', async () => {
    const { lease: old } = await t.log.createRun(newRun('r1', 0), 'w1', 200, [started(0)]);
    // Wait on the database's clock, not ours: the lease is expired once reqon_now_ms() passed it.
    while ((await dbNow(t.target)) <= old.expiresAt) await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await t.log.dueRuns(0, 10)).map((r) => r.runId)).toEqual(['r1']);
    const taken = await t.log.acquire('r1', 'w2', 0, 60_000);
    expect(taken).toMatchObject({ runId: 'r1', owner: 'w2', epoch: 2 });
    expect('run' in taken && taken.run).toMatchObject({ owner: 'w2', leaseEpoch: 2 });
    await expect(t.log.commit(old, [value('from the old owner')], { durable: true })).rejects.toThrow(
      /lease on run 'r1' lost: owner 'w1' at epoch 1 is no longer current \(now held by 'w2' at epoch 2\); nothing was written/,
    );
    await expect(t.log.renew(old, 0, 1_000)).rejects.toBeInstanceOf(LeaseLostError);
    await t.log.release(old);
    expect((await t.log.getRun('r1'))?.owner).toBe('w2');
    if (!isLease(taken)) throw new Error('expected a lease');
    expect((await t.log.commit(taken, [value('new owner')], { durable: false }))[0]?.seq).toBe(2);
    // A live lease: refused, also to its own holder, unless taken over from a known-dead owner.
    expect(await t.log.acquire('r1', 'w2', 0, 1_000)).toMatchObject({ heldBy: 'w2' });
    expect(await t.log.acquire('r1', 'w3', 0, 1_000, { takeOverFrom: 'w2' })).toMatchObject({ owner: 'w3', epoch: 3 });
    await expect(t.log.acquire('ghost', 'w1', 0, 10)).rejects.toBeInstanceOf(RunNotFoundError);
  });

  it.runIf(!onSqlite)('dueRuns: timers by the caller\'s now, leases by the database\'s', async () => {
    const suspend = async (runId: string, wakeAt: number | null) => {
      const { lease } = await t.log.createRun(newRun(runId, 0), 'w', 60_000, []);
      await t.log.commit(lease, [], { durable: false, status: { status: 'suspended', wakeAt, waitingOn: `pause:${runId}`, releaseLease: true } });
    };
    await suspend('timer-due', 500);
    await suspend('timer-later', 5_000);
    await suspend('webhook-only', null);
    await t.log.createRun(newRun('live', 0), 'w', 600_000, []);
    const { lease: done } = await t.log.createRun(newRun('done', 0), 'w', 300, []);
    await t.log.commit(done, [], { durable: false, status: { status: 'completed' } });
    expect((await t.log.dueRuns(1_000, 10)).map((r) => r.runId)).toEqual(['timer-due']);
    expect((await t.log.dueRuns(6_000, 10)).map((r) => r.runId)).toEqual(['timer-due', 'timer-later']);
    expect(await t.log.acquire('timer-due', 'w9', 1_000, 60_000)).toMatchObject({ owner: 'w9' });
    expect((await t.log.dueRuns(6_000, 10)).map((r) => r.runId)).toEqual(['timer-later']);
  });
});

describe('PostgreSQL: concurrency and schema', () => {
  it.runIf(!onSqlite)('seqs stay contiguous under many writers on many connections racing one run, each fenced by the epoch', async () => {
    const logs = [t.log, await t.openAnother(), await t.openAnother(), await t.openAnother()];
    await t.log.createRun(newRun('r1', 0), 'w0', 60_000, [started(0)]);
    // Every connection takes the lease over in turn and appends; only the current holder's commits land.
    const results = await Promise.all(
      logs.map(async (log, i) => {
        let written = 0;
        let lost = 0;
        for (let round = 0; round < 10; round++) {
          const current = await log.getRun('r1');
          const taken = await log.acquire('r1', `w${i}`, 0, 60_000, { takeOverFrom: current?.owner ?? undefined });
          if (!isLease(taken)) continue;
          for (let k = 0; k < 3; k++) {
            try {
              written += (await log.commit(taken, [value({ i, round, k }), value({ i, round, k, second: true })], { durable: k === 2 })).length;
            } catch (error) {
              expect(error).toBeInstanceOf(LeaseLostError);
              lost++;
              break;
            }
          }
        }
        return { written, lost };
      }),
    );
    const events = await t.log.read('r1');
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
    expect(events.length).toBe(1 + results.reduce((sum, r) => sum + r.written, 0));
    expect((await t.log.getRun('r1'))?.lastSeq).toBe(events.length);
    // Each commit's two events are adjacent: no other writer's event between them.
    for (let i = 1; i < events.length; i += 2) {
      const [first, second] = [events[i]!.payload, events[i + 1]!.payload] as { value: Record<string, unknown> }[];
      expect({ ...first!.value, second: true }).toEqual(second!.value);
    }
  });

  it.runIf(!onSqlite)('resume CAS across connections: of many resumers on many connections exactly one wins', async () => {
    const logs = [t.log, await t.openAnother(), await t.openAnother()];
    const { lease } = await t.log.createRun(newRun('r1', 0), 'w1', 60_000, [started(0)]);
    await t.log.commit(lease, [], { durable: true, status: { status: 'suspended', waitingOn: 'pause:p1', releaseLease: true } });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => logs[i % 3]!.resumeSuspended('r1', 'pause:p1', resumed(`r${i}`))));
    expect(results.filter((r) => r === 'resumed')).toHaveLength(1);
    expect((await t.log.read('r1')).map((e) => e.type)).toEqual(['run.started', 'pause.resumed']);
  });

  it.runIf(!onSqlite)('migrations: versioned, taken once by processes opening at once, events append-only, a newer database refused', async () => {
    const opened = await Promise.all(Array.from({ length: 4 }, () => openLog(t.target)));
    for (const log of opened) await log.close();
    expect(await pgQuery(t.target, 'SELECT version FROM reqon_schema_version ORDER BY version')).toEqual(
      Array.from({ length: PG_SCHEMA_VERSION }, (_, i) => ({ version: i + 1 })),
    );
    const { lease } = await t.log.createRun(newRun('r1'), 'w1', 30_000, [started()]);
    await t.log.commit(lease, [value(1)], { durable: true });
    await expect(pgQuery(t.target, "UPDATE reqon_events SET type = 'x' WHERE run_id = 'r1'")).rejects.toThrow(/append-only/);
    await expect(pgQuery(t.target, "DELETE FROM reqon_events WHERE run_id = 'r1'")).rejects.toThrow(/append-only/);
    await expect(pgQuery(t.target, 'TRUNCATE reqon_events')).rejects.toThrow(/append-only/);
    await expect(pgQuery(t.target, "INSERT INTO reqon_events VALUES ('r1', 1, 'x', '', '{}', 1)")).rejects.toThrow(/duplicate key/);
    expect((await t.log.read('r1')).length).toBe(2);
    await pgQuery(t.target, 'INSERT INTO reqon_schema_version (version) VALUES ($1)', [PG_SCHEMA_VERSION + 1]);
    const newer = openLog(t.target);
    await expect(newer).rejects.toBeInstanceOf(LogVersionError);
    await expect(openLog(t.target)).rejects.toThrow(`schema version ${PG_SCHEMA_VERSION + 1}, newer than this engine knows (${PG_SCHEMA_VERSION}); upgrade reqon`);
  });

  it.runIf(!onSqlite)("a commit's update of its run row is HOT: no index covers a column every commit moves", async () => {
    // Any index (partial ones too) on a column an UPDATE changes forbids a HOT update: every
    // commit would then write an entry in every index of reqon_runs and leave it dead.
    const indexed = await pgQuery<{ column: string }>(
      t.target,
      `SELECT DISTINCT a.attname AS column FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
         JOIN pg_attribute a ON a.attrelid = c.oid
        WHERE c.relname = 'reqon_runs' AND c.relnamespace = current_schema()::regnamespace AND a.attnum > 0
          AND (a.attnum = ANY(i.indkey) OR pg_get_expr(i.indpred, i.indrelid) ~ ('\\m' || a.attname || '\\M'))`,
    );
    const columns = indexed.map((r) => r.column);
    expect(columns).toContain('finished_at');
    for (const moved of ['last_seq', 'updated_at']) expect(columns).not.toContain(moved);
    // And so PostgreSQL does it: commits that end nothing update the row in place.
    const { lease } = await t.log.createRun(newRun('hot'), 'w1', 60_000, [started()]);
    for (let i = 0; i < 20; i++) await t.log.commit(lease, [value(i, 2_000 + i)], { durable: i % 2 === 0 });
    // A backend publishes its counters when it goes idle at least a second after it last did
    // (else about 10 s later): a second later, one more commit on each writer.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await t.log.commit(lease, [value('last durable', 3_000)], { durable: true });
    await t.log.commit(lease, [value('last lazy', 3_001)], { durable: false });
    let stats: { upd: number; hot: number } | undefined;
    for (let tries = 0; tries < 100 && !(stats && stats.upd >= 22); tries++) {
      if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 200));
      [stats] = await pgQuery<{ upd: number; hot: number }>(
        t.target,
        "SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE relname = 'reqon_runs' AND schemaname = current_schema()",
      );
    }
    expect(stats!.upd).toBeGreaterThanOrEqual(22);
    expect(stats!.hot).toBe(stats!.upd);
  });

  it.runIf(!onSqlite)('a log at schema version 2 upgrades: its finished runs keep their finish time for retention', async () => {
    const fresh = await tempLogTarget('postgres');
    const url = fresh.target;
    try {
      await pgQuery(url, 'CREATE TABLE reqon_schema_version (version INTEGER NOT NULL)');
      for (const [i, sql] of PG_MIGRATIONS.slice(0, 2).entries()) {
        await pgQuery(url, sql);
        await pgQuery(url, 'INSERT INTO reqon_schema_version (version) VALUES ($1)', [i + 1]);
      }
      const row = `INSERT INTO reqon_runs (run_id, mission, mission_hash, mission_files, options, status, created_at, updated_at, last_seq, lease_epoch)
                   VALUES ($1, 'M', 'h', '{"entry":"m.vague","files":[]}', '{"sources":{},"env":{}}', $2, 1000, $3, 0, 1)`;
      await pgQuery(url, row, ['done', 'completed', 5_000]);
      await pgQuery(url, row, ['broke', 'failed', 6_000]);
      await pgQuery(url, row, ['going', 'running', 4_000]);
      const log = await openLog(url);
      try {
        const prunable = await log.prunableRuns({ finishedBefore: 10_000, now: 20_000, limit: 10 });
        expect(prunable.map((r) => [r.runId, r.updatedAt])).toEqual([['done', 5_000], ['broke', 6_000]]);
        expect((await log.prunableRuns({ finishedBefore: 5_500, now: 20_000, limit: 10 })).map((r) => r.runId)).toEqual(['done']);
      } finally {
        await log.close();
      }
      expect(await pgQuery(url, 'SELECT run_id, finished_at::int AS finished_at FROM reqon_runs ORDER BY run_id')).toEqual([
        { run_id: 'broke', finished_at: 6_000 },
        { run_id: 'done', finished_at: 5_000 },
        { run_id: 'going', finished_at: null },
      ]);
    } finally {
      await fresh.drop();
    }
  });

  it.runIf(!onSqlite)('connections the server drops (a restart, an admin) break nothing: the next call reconnects, the process lives', async () => {
    const name = `reqon-drop-${Math.trunc(Math.random() * 1e9)}`;
    const log = await openLog(`${t.target}&application_name=${name}`);
    try {
      const { lease } = await log.createRun(newRun('r1'), 'w1', 60_000, [started()]);
      await log.read('r1'); // the pool now holds idle connections
      const killed = await pgQuery<{ pid: number }>(
        t.target,
        'SELECT pg_terminate_backend(pid) AS pid FROM pg_stat_activity WHERE application_name = $1',
        [name],
      );
      expect(killed.length).toBeGreaterThan(0);
      // The idle clients hear of it ('error' on the pool: handled, not a crash of this process).
      while ((await pgQuery(t.target, 'SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [name])).length > 0) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      // A call on a dropped connection may fail once, naming the connection; then it reconnects.
      let written: unknown;
      for (let attempt = 0; attempt < 3 && written === undefined; attempt++) {
        written = await log.commit(lease, [value('after the drop')], { durable: true }).catch(() => undefined);
      }
      expect(written).toBeDefined();
      expect((await log.read('r1')).map((e) => e.seq)).toEqual([1, 2]);
    } finally {
      await log.close();
    }
  });

  it.runIf(!onSqlite)('an unreachable server is a clear error, not a hang, and the password is not repeated', async () => {
    const port = Number(new URL(t.target).port) + 1; // nothing listens next to the cluster
    const url = `postgres://reqon:s3cret@127.0.0.1:${port}/nowhere`;
    const failure = openLog(url, { connectTimeoutMs: 2_000 });
    await expect(failure).rejects.toThrow(/cannot reach the log database postgres:\/\/reqon:\*\*\*@127\.0\.0\.1:\d+\/nowhere: .*check that the server is running/);
    await expect(openLog(url, { connectTimeoutMs: 2_000 })).rejects.not.toThrow(/s3cret/);
    await expect(openLog('postgres://[bad', {})).rejects.toThrow(/is not a valid PostgreSQL URL; expected postgres:\/\/USER@HOST:PORT\/DB/);
  });
});
});

function resumed(who: string) {
  return { type: 'pause.resumed' as const, stepPath: 'main/2', payload: { pauseId: 'p1', by: 'api' as const, payload: { who } }, recordedAt: 20 };
}
