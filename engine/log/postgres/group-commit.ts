/**
 * Group commit on PostgreSQL: write jobs share ONE transaction on one writer connection, each inside its
 * own SAVEPOINT, so a job that fails (a lost lease, a claimed delivery) is undone alone while the
 * others commit — the same rule as sqlite/group-commit.ts.
 *
 * One group is out at a time: jobs submitted while a group's COMMIT waits for the disk queue up
 * and form the next group, so the more runs commit at once, the more share each WAL flush.
 * One group at a time also means the process's own groups never deadlock one another; a
 * deadlock or serialization failure against ANOTHER process (40P01, 40001) rolls the whole group
 * back, and the group is run again (its jobs are pure database work, safe to repeat).
 *
 * Durability: two writer connections, only one of them in use at a time (one group is out at a
 * time). The lazy one's session default is `synchronous_commit = off`: a group of non-durable jobs
 * runs there, and PostgreSQL writes its WAL within a few hundred ms without waiting. The durable
 * one's session is `on`: a group with a durable job runs there, and its COMMIT returns once its
 * WAL is flushed. A group that is one statement (`oneStatement`) runs on either without
 * BEGIN/COMMIT — one round trip in all, a durable one included. A non-durable commit survives
 * kill -9 of this process at once (the server has it), and a server crash can lose only a suffix
 * of the WAL — so a durable commit, which flushes the WAL up to its own record, makes every
 * earlier commit durable too (groups run one after another, so every earlier group's record is
 * before it, whichever connection wrote it). That is the output-commit rule: nothing leaves the
 * process before a durable commit, which carries the non-durable ones before it.
 * Promises settle only after COMMIT returned.
 *
 * Batching: a job may also be handed as data (`batch`). Consecutive such jobs run together through
 * `runBatch` — for the log's commits, commit-batch.ts: a few statements for the whole batch
 * instead of a few per job, which is what a group's time was made of. `runBatch` fails a job
 * alone only when it wrote nothing of it; a statement PostgreSQL refuses aborts the transaction,
 * and the group runs again with every job alone in its savepoint (`work`) — but not after a
 * deadlock (the group is retried as it is) or a failure of the log itself (see `reRunnable`).
 */
import type { PoolClient } from 'pg';
import { isLogFailure, logUnreachable } from '../errors.js';

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
    /** A writer connection, taken for each group: the durable one (session `on`) or the lazy one. */
    private readonly connect: (durable: boolean) => Promise<PoolClient>,
    /** Told after any rollback: caches of schema (store tables, columns) may be stale. */
    private readonly onRollback: () => void,
    /** Runs consecutive batchable jobs at once: an outcome per job, in order (see the header). */
    private readonly runBatch: (client: PoolClient, batch: B[]) => Promise<Outcome[]>,
    /** True if `runBatch(batch)` writes with ONE statement, so it needs no transaction around it. */
    private readonly oneStatement: (batch: B[]) => boolean,
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
      client = await this.connect(durable);
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    let broken: unknown;
    try {
      let savepointsForAll = false;
      for (let attempt = 1; ; attempt++) {
        try {
          const outcomes = await this.attempt(client, jobs, savepointsForAll);
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
          if (code === undefined || logUnreachable(error)) broken = error;
          for (const job of jobs) job.reject(error);
          return;
        }
      }
    } finally {
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  private async attempt(client: PoolClient, jobs: Job<B>[], savepointsForAll: boolean): Promise<Outcome[]> {
    if (!savepointsForAll && jobs.every((job) => job.batch !== undefined)) {
      const batch = jobs.map((job) => job.batch!);
      if (this.oneStatement(batch)) {
        try {
          return await this.runBatch(client, batch);
        } catch (error) {
          // The one statement did nothing (it is atomic): run the group again in a transaction.
          throw reRunnable(error) ? new NeedsSavepoints(error) : error;
        }
      }
    }
    await client.query('BEGIN');
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
            // A statement or a table of the wrong kind failed: the group runs again with
            // savepoints, where it fails only the job it belongs to.
            throw reRunnable(error) ? new NeedsSavepoints(error) : error;
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
          // A deadlock or a broken connection sinks the whole transaction, not only this job.
          if (!reRunnable(error)) throw error;
          try {
            await client.query('ROLLBACK TO SAVEPOINT reqon_job');
            await client.query('RELEASE SAVEPOINT reqon_job');
          } catch (rollbackError) {
            if (isLogFailure(rollbackError)) throw rollbackError;
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

/**
 * True if the group may run again with savepoints after `error`: not a deadlock (the whole group
 * is retried as it is) and not a failure of the log itself (the connection, the server, the disk),
 * which no savepoint can help and which the caller must see as it is (errors.ts isLogFailure).
 */
function reRunnable(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return !(code !== undefined && RETRYABLE.has(code)) && !isLogFailure(error);
}

/** A batch failed inside PostgreSQL: run the group again with savepoints. */
class NeedsSavepoints extends Error {
  constructor(readonly original: unknown) {
    super(`a commit failed in PostgreSQL: ${String(original)}`, { cause: original });
  }
}
