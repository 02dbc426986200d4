/**
 * Group commit: write jobs submitted during the same turn of the event loop share ONE
 * transaction, and — if any of them is durable — ONE fsync.
 *
 * Each job runs inside its own SAVEPOINT, so a job that throws (a lost lease, a bad table name)
 * is undone alone and its promise rejects, while the others commit. Promises settle only after
 * COMMIT returned, i.e. after the fsync for a durable group: nothing a caller does next (send a
 * request, answer the CLI) can overtake the log. Jobs are synchronous; nothing here awaits inside
 * a transaction.
 *
 * Durability: the connection runs WAL with synchronous=NORMAL (a commit appends to the WAL and
 * does not wait for the disk; it survives kill -9 because the WAL is in the OS cache). For a
 * durable group we switch to synchronous=FULL around the transaction: SQLite then syncs the WAL
 * at COMMIT — one fdatasync, which also covers every earlier non-durable commit in that WAL,
 * ours or another process's. That is the cheapest correct option: a checkpoint would sync the WAL
 * *and* the database file and copy pages.
 */
import type Database from 'better-sqlite3';
import type { Statements } from './statements.js';

interface Job {
  durable: boolean;
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class GroupCommitter {
  private pending: Job[] = [];
  private scheduled = false;
  transactions = 0;
  fsyncs = 0;

  constructor(
    private readonly db: Database.Database,
    private readonly sql: Statements,
    /** Told when anything was rolled back, so caches of schema (store tables) can be dropped. */
    private readonly onRollback: () => void,
  ) {}

  /** Queues `work` for the group that runs at the end of this turn of the event loop. */
  submit<T>(durable: boolean, work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ durable, work, resolve: resolve as (value: unknown) => void, reject });
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
    let outcomes: Outcome[];
    try {
      outcomes = this.runGroup(jobs, durable);
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    this.transactions++;
    if (durable) this.fsyncs++;
    jobs.forEach((job, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.error);
    });
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
        for (const job of jobs) outcomes.push(this.runJob(job));
        sql.commit.run();
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
