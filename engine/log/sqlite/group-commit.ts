/**
 * Group commit: write jobs submitted during the same turn of the event loop share ONE
 * transaction, and — if any of them is durable — ONE fsync.
 *
 * Each job of a group runs inside its own SAVEPOINT, so a job that throws (a lost lease, a bad
 * table name) is undone alone and its promise rejects, while the others commit (a lone job is
 * undone by rolling the transaction back). Promises settle only after
 * COMMIT returned, i.e. after the fsync for a durable group: nothing a caller does next (send a
 * request, answer the CLI) can overtake the log. Jobs are synchronous; nothing here awaits inside
 * a transaction.
 *
 * Durability: the connection runs WAL with synchronous=NORMAL (a commit appends to the WAL and
 * does not wait for the disk; it survives kill -9 because the WAL is in the OS cache). A durable
 * group is synced one of two ways; either is one fdatasync of the WAL, which also covers every
 * earlier commit in it, ours or another process's (cheaper than a checkpoint, which would sync
 * the WAL *and* the database file and copy pages):
 * - by SQLite at COMMIT, with synchronous=FULL around the transaction: other connections see the
 *   group only once it is on disk, and the main thread waits for the disk. For the log's
 *   compare-and-set operations (creating and resuming runs, webhook deliveries, schedule
 *   firings), whose outcome another process may act on at once;
 * - by WalSync after COMMIT (jobs submitted `visibleBeforeDurable`: run commits, when several
 *   are grouped or a sync is out already): the group is committed with NORMAL, then an
 *   fdatasync of the WAL runs off the main thread, and its jobs settle when it returns.
 *   Meanwhile the event loop serves other runs, and groups committed during the sync share the
 *   next one. Another process may read such a group a moment before it is on disk — as it may
 *   read any non-durable commit — but nothing this process does after a job settles can
 *   overtake the disk.
 */
import type Database from 'better-sqlite3';
import type { Statements } from './statements.js';
import type { WalSync } from './wal-sync.js';

interface Job {
  durable: boolean;
  /** A durable job that may be seen by other connections before it is on disk (see above). */
  visibleBeforeDurable: boolean;
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class GroupCommitter {
  private pending: Job[] = [];
  private scheduled = false;
  transactions = 0;
  /** Groups SQLite synced at COMMIT (synchronous=FULL). */
  private fullSyncs = 0;

  constructor(
    private readonly db: Database.Database,
    private readonly sql: Statements,
    /** Told when anything was rolled back, so caches of schema (store tables) can be dropped. */
    private readonly onRollback: () => void,
    /** Syncs the WAL off the main thread; null (an in-memory database) syncs every group at COMMIT. */
    private readonly wal: WalSync | null,
    /** Told after every committed transaction (the WAL's checkpoints, wal-checkpointer.ts). */
    private readonly afterCommit: () => void = () => {},
  ) {}

  /** fdatasyncs made for durable groups, either way. */
  get fsyncs(): number {
    return this.fullSyncs + (this.wal?.syncs ?? 0);
  }

  /**
   * Queues `work` for the group that runs at the end of this turn of the event loop. A durable
   * job settles once it is on disk; with `visibleBeforeDurable`, other connections may see it
   * just before.
   */
  submit<T>(durable: boolean, work: () => T, opts: { visibleBeforeDurable?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const visibleBeforeDurable = opts.visibleBeforeDurable === true;
      this.pending.push({ durable, visibleBeforeDurable, work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs `work` alone in its own write transaction, right now (lease operations). */
  now<T>(work: () => T): T {
    this.sql.begin.run();
    try {
      const value = work();
      this.sql.commit.run();
      this.transactions++;
      this.afterCommit();
      return value;
    } catch (error) {
      if (this.db.inTransaction) this.sql.rollback.run();
      this.onRollback();
      throw error;
    }
  }

  /** Commits everything queued; also called by close() so no submitted job is dropped. */
  flush(): void {
    const jobs = this.pending;
    this.pending = [];
    this.scheduled = false;
    if (jobs.length === 0) return;
    const durable = jobs.some((job) => job.durable);
    // Off the main thread only when other work can use it: a group of several jobs, or one that
    // arrives while a sync is out. A lone commit (one run, one step at a time) is answered sooner
    // by SQLite's own sync at COMMIT than by a hop to a worker thread and back.
    const syncAfter =
      durable && this.wal !== null && (jobs.length > 1 || this.wal.busy) && jobs.every((job) => !job.durable || job.visibleBeforeDurable);
    let outcomes: Outcome[];
    try {
      outcomes = this.runGroup(jobs, durable && !syncAfter);
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    this.transactions++;
    if (!syncAfter) {
      if (durable) this.fullSyncs++;
      jobs.forEach((job, index) => settle(job, outcomes[index]!));
      this.afterCommit();
      return;
    }
    // Jobs that failed wrote nothing: they need not wait for the disk.
    jobs.forEach((job, index) => {
      if (!outcomes[index]!.ok) settle(job, outcomes[index]!);
    });
    this.wal!.sync().then(
      () => jobs.forEach((job, index) => outcomes[index]!.ok && settle(job, outcomes[index]!)),
      (error: unknown) => jobs.forEach((job, index) => outcomes[index]!.ok && job.reject(error)),
    );
    // After the fsync is under way: a checkpoint on the main thread never delays it.
    this.afterCommit();
  }

  /** Resolves when every group committed so far is synced (before the connection closes). */
  idle(): Promise<void> {
    return this.wal?.idle() ?? Promise.resolve();
  }

  private runGroup(jobs: Job[], durable: boolean): Outcome[] {
    const { sql } = this;
    // exec, not a prepared statement: this pragma takes effect when compiled (see statements.ts),
    // and only outside a transaction.
    if (durable) this.db.exec('PRAGMA synchronous = FULL');
    try {
      sql.begin.run();
      const outcomes: Outcome[] = [];
      try {
        // A lone job needs no savepoint: undoing it is undoing the transaction. A savepoint
        // copies every page the job then touches into SQLite's statement journal, a temp file
        // past 64 KiB: a run committing alone spent a quarter of its log time there (figure 6).
        if (jobs.length === 1) outcomes.push(this.runAlone(jobs[0]!));
        else for (const job of jobs) outcomes.push(this.runJob(job));
        if (this.db.inTransaction) sql.commit.run();
      } catch (error) {
        if (this.db.inTransaction) sql.rollback.run();
        this.onRollback();
        throw error;
      }
      if (outcomes.some((outcome) => !outcome.ok)) this.onRollback();
      return outcomes;
    } finally {
      if (durable) this.db.exec('PRAGMA synchronous = NORMAL');
    }
  }

  /** The group's only job: on failure the whole transaction is rolled back (runGroup then commits nothing). */
  private runAlone(job: Job): Outcome {
    try {
      return { ok: true, value: job.work() };
    } catch (error) {
      if (this.db.inTransaction) this.sql.rollback.run();
      return { ok: false, error };
    }
  }

  private runJob(job: Job): Outcome {
    const { sql } = this;
    sql.savepoint.run();
    try {
      const value = job.work();
      sql.releaseSavepoint.run();
      return { ok: true, value };
    } catch (error) {
      // Some SQLite errors (disk full, I/O) abort the whole transaction; then every job of the
      // group is lost and must fail, not only this one.
      if (!this.db.inTransaction) throw new Error(`the log transaction was aborted by SQLite: ${String(error)}`, { cause: error });
      sql.rollbackToSavepoint.run();
      sql.releaseSavepoint.run();
      return { ok: false, error };
    }
  }
}

function settle(job: Job, outcome: Outcome): void {
  if (outcome.ok) job.resolve(outcome.value);
  else job.reject(outcome.error);
}
