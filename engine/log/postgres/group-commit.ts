/**
 * Group commit on PostgreSQL: write jobs share ONE transaction on ONE connection, each inside its
 * own SAVEPOINT, so a job that fails (a lost lease, a claimed delivery) is undone alone while the
 * others commit — the same rule as sqlite/group-commit.ts.
 *
 * One group is out at a time: jobs submitted while a group's COMMIT waits for the disk queue up
 * and form the next group, so the more runs commit at once, the more share each WAL flush.
 * One writer connection also means the process's own groups never deadlock one another; a
 * deadlock or serialization failure against ANOTHER process (40P01, 40001) rolls the whole group
 * back, and the group is run again (its jobs are pure database work, safe to repeat).
 *
 * Durability: a group with a durable job commits with `synchronous_commit = on` (the COMMIT
 * returns once its WAL is flushed). A group of non-durable jobs only runs
 * `SET LOCAL synchronous_commit = off`: PostgreSQL then writes its WAL within a few hundred ms
 * without waiting. It survives kill -9 of this process at once (the server has it), and a
 * server crash can lose only a suffix of the WAL — so a durable commit, which flushes the WAL up
 * to its own record, makes every earlier commit durable too. That is the output-commit rule:
 * nothing leaves the process before a durable commit, which carries the non-durable ones before it.
 * Promises settle only after COMMIT returned.
 */
import type { PoolClient } from 'pg';

interface Job {
  durable: boolean;
  /** One statement (atomic by itself): it runs without a savepoint of its own (see attempt). */
  oneStatement: boolean;
  work: (client: PoolClient) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** PostgreSQL errors after which the whole transaction is rolled back and may simply be run again. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 5;

export class PgGroupCommitter {
  private pending: Job[] = [];
  private running: Promise<void> | null = null;
  transactions = 0;
  durableGroups = 0;

  constructor(
    /** The writer connection, taken for each group. */
    private readonly connect: () => Promise<PoolClient>,
    /** Told after any rollback: caches of schema (store tables, columns) may be stale. */
    private readonly onRollback: () => void,
  ) {}

  /**
   * Queues `work` for the next group. `oneStatement`: the job's writes are a single statement,
   * which PostgreSQL applies whole or not at all, so it needs no savepoint — two round trips
   * fewer per job, which is most of a group's time.
   */
  submit<T>(durable: boolean, work: (client: PoolClient) => Promise<T>, opts: { oneStatement?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ durable, oneStatement: opts.oneStatement === true, work, resolve: resolve as (value: unknown) => void, reject });
      if (this.running === null) this.running = this.drain();
    });
  }

  /** Resolves when every submitted job has settled. */
  async idle(): Promise<void> {
    while (this.running !== null) await this.running;
  }

  private async drain(): Promise<void> {
    // Let the rest of this turn's commits join the first group.
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      while (this.pending.length > 0) {
        const jobs = this.pending;
        this.pending = [];
        await this.runGroup(jobs);
      }
    } finally {
      this.running = null;
    }
  }

  private async runGroup(jobs: Job[]): Promise<void> {
    const durable = jobs.some((job) => job.durable);
    let client: PoolClient;
    try {
      client = await this.connect();
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    let broken: unknown;
    try {
      let savepointsForAll = false;
      for (let attempt = 1; ; attempt++) {
        try {
          const outcomes = await this.attempt(client, jobs, durable, savepointsForAll);
          this.transactions++;
          if (durable) this.durableGroups++;
          jobs.forEach((job, i) => {
            const outcome = outcomes[i]!;
            if (outcome.ok) job.resolve(outcome.value);
            else job.reject(outcome.error);
          });
          return;
        } catch (error) {
          this.onRollback();
          // A one-statement job failed in the database: the transaction is aborted, so the group
          // runs again with a savepoint around every job, and only the failing one fails.
          if (error instanceof NeedsSavepoints && !savepointsForAll) {
            savepointsForAll = true;
            continue;
          }
          const code = (error as { code?: string }).code;
          if (code !== undefined && RETRYABLE.has(code) && attempt < MAX_ATTEMPTS) continue;
          // The connection may be gone (server restart): drop it rather than hand it back.
          if (code === undefined) broken = error;
          for (const job of jobs) job.reject(error);
          return;
        }
      }
    } finally {
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  private async attempt(client: PoolClient, jobs: Job[], durable: boolean, savepointsForAll: boolean): Promise<Outcome[]> {
    // One round trip: the simple-query protocol takes both statements at once.
    await client.query(durable ? 'BEGIN' : 'BEGIN; SET LOCAL synchronous_commit = off');
    try {
      const outcomes: Outcome[] = [];
      for (const job of jobs) {
        if (job.oneStatement && !savepointsForAll) {
          try {
            outcomes.push({ ok: true, value: await job.work(client) });
          } catch (error) {
            // Thrown by our code (a lost lease: the statement wrote nothing): this job fails alone.
            if ((error as { code?: string }).code === undefined) outcomes.push({ ok: false, error });
            else throw RETRYABLE.has((error as { code: string }).code) ? error : new NeedsSavepoints(error);
          }
          continue;
        }
        await client.query('SAVEPOINT reqon_job');
        try {
          const value = await job.work(client);
          await client.query('RELEASE SAVEPOINT reqon_job');
          outcomes.push({ ok: true, value });
        } catch (error) {
          const code = (error as { code?: string }).code;
          // A deadlock or a broken connection sinks the whole transaction, not only this job.
          if (code !== undefined && RETRYABLE.has(code)) throw error;
          try {
            await client.query('ROLLBACK TO SAVEPOINT reqon_job');
            await client.query('RELEASE SAVEPOINT reqon_job');
          } catch (rollbackError) {
            throw new Error(`the log transaction was aborted by PostgreSQL: ${String(error)}`, { cause: rollbackError });
          }
          this.onRollback();
          outcomes.push({ ok: false, error });
        }
      }
      await client.query('COMMIT');
      return outcomes;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}

/** A one-statement job failed inside PostgreSQL: run the group again with savepoints. */
class NeedsSavepoints extends Error {
  constructor(readonly original: unknown) {
    super(`a commit failed in PostgreSQL: ${String(original)}`, { cause: original });
  }
}
