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
 *
 * Batching: a job may also be handed as data (`batch`). Consecutive such jobs run together through
 * `runBatch` — for the log's commits, commit-batch.ts: a few statements for the whole batch
 * instead of a few per job, which is what a group's time was made of. `runBatch` fails a job
 * alone only when it wrote nothing of it; anything PostgreSQL throws aborts the transaction, and
 * the group runs again with every job alone in its savepoint (`work`).
 */
import type { PoolClient } from 'pg';

interface Job<B> {
  durable: boolean;
  /** The job as data for `runBatch`; absent: the job runs alone, in its savepoint. */
  batch: B | undefined;
  work: (client: PoolClient) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** PostgreSQL errors after which the whole transaction is rolled back and may simply be run again. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 5;

export class PgGroupCommitter<B> {
  private pending: Job<B>[] = [];
  private running: Promise<void> | null = null;
  transactions = 0;
  durableGroups = 0;

  constructor(
    /** The writer connection, taken for each group. */
    private readonly connect: () => Promise<PoolClient>,
    /** Told after any rollback: caches of schema (store tables, columns) may be stale. */
    private readonly onRollback: () => void,
    /** Runs consecutive batchable jobs at once: an outcome per job, in order (see the header). */
    private readonly runBatch: (client: PoolClient, batch: B[]) => Promise<Outcome[]>,
  ) {}

  /**
   * Queues `work` for the next group. `batch`: the same job as data, so that it can run in one
   * `runBatch` with its neighbours; `work` must do exactly what `runBatch([batch])` does.
   */
  submit<T>(durable: boolean, work: (client: PoolClient) => Promise<T>, opts: { batch?: B } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ durable, batch: opts.batch, work, resolve: resolve as (value: unknown) => void, reject });
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

  private async runGroup(jobs: Job<B>[]): Promise<void> {
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
          // A batch failed in the database: the transaction is aborted, so the group runs again
          // with a savepoint around every job, and only the failing one fails.
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

  private async attempt(client: PoolClient, jobs: Job<B>[], durable: boolean, savepointsForAll: boolean): Promise<Outcome[]> {
    // One round trip: the simple-query protocol takes both statements at once.
    await client.query(durable ? 'BEGIN' : 'BEGIN; SET LOCAL synchronous_commit = off');
    try {
      const outcomes: Outcome[] = [];
      for (let j = 0; j < jobs.length; j++) {
        const job = jobs[j]!;
        if (job.batch !== undefined && !savepointsForAll) {
          let end = j + 1;
          while (end < jobs.length && jobs[end]!.batch !== undefined) end++;
          try {
            outcomes.push(...(await this.runBatch(client, jobs.slice(j, end).map((b) => b.batch!))));
          } catch (error) {
            // Whatever failed (a statement, a table of the wrong kind, the connection), the
            // group runs again with savepoints, where it fails only the job it belongs to.
            const code = (error as { code?: string }).code;
            throw code !== undefined && RETRYABLE.has(code) ? error : new NeedsSavepoints(error);
          }
          j = end - 1;
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

/** A batch failed inside PostgreSQL: run the group again with savepoints. */
class NeedsSavepoints extends Error {
  constructor(readonly original: unknown) {
    super(`a commit failed in PostgreSQL: ${String(original)}`, { cause: original });
  }
}
