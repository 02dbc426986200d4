/**
 * Many runs' commits as a handful of statements: the group commit's fast path (group-commit.ts).
 * Without store writes, one statement (FENCE_AND_APPEND), which then needs no transaction at all.
 * New runs (createRun) batch the same way: one INSERT of the runs, one of their first events.
 *
 * A group of 100 commits run one by one costs 100–400 round trips inside its transaction, and
 * those round trips, not the WAL flush, were what bounded concurrent runs on PostgreSQL. Here the
 * whole batch is: one fence UPDATE over every run (seqs reserved and leases checked under each
 * run row's lock, invariant 1 of postgres-log.ts), the store writes per table (table-store.ts
 * `applyWrites`), and one INSERT of every event. A commit whose lease is lost matches no row of the
 * fence, so nothing of it is written and it fails alone. A statement PostgreSQL refuses aborts the
 * transaction and the group runs again with a savepoint per commit; a deadlock re-runs the group
 * as it is, and a failure of the log itself (connection, server, disk) fails the group.
 *
 * Not batched (they need a savepoint of their own): commits that claim a webhook delivery, whose
 * failure must undo the commit's other writes.
 */
import type pg from 'pg';
import type { StoredEvent } from '../events.js';
import type { Lease, NewRun, StatusChange } from '../log.js';
import type { PlannedEntry } from '../checks.js';
import { storedFrom, storeWritePayloadJson, type PreparedEvent } from '../rows.js';
import { eventColumns, eventParams, eventRowsFrom, insertEventsOfRuns, insertRuns, runExists, type RunAppend } from './run-sql.js';
import type { PgTableStores } from './table-store.js';
import { notifyWork } from './work-signals.js';

/** One run's commit, checked and serialised (no claims: see the header). */
export interface BatchedCommit {
  create?: never;
  lease: Lease;
  entries: Exclude<PlannedEntry, { kind: 'claim' }>[];
  /** The newest recordedAt among the entries: the run's updated_at moves up to it. */
  latest: number;
  status: Required<StatusChange> | undefined;
  mission: { hash: string; filesJson: string } | undefined;
  returnEvents: boolean;
}

/** A new run with its first events (createRun), checked and serialised. */
export interface BatchedCreate {
  create: true;
  run: NewRun;
  owner: string;
  ttlMs: number;
  events: PreparedEvent[];
}

/** What a batch is made of: commits to runs, and new runs. */
export type BatchItem = BatchedCommit | BatchedCreate;

export type BatchOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** What createRun answers. */
export interface CreatedRun {
  lease: Lease;
  events: StoredEvent[];
}

/**
 * Reserves `n` seqs AND checks the lease of every listed run in one UPDATE, under each run row's
 * lock, applying each commit's status and mission change. A run missing from RETURNING lost its lease.
 */
const FENCE_MANY = `UPDATE reqon_runs r SET last_seq = r.last_seq + u.n, updated_at = greatest(r.updated_at, u.latest),
        status = CASE WHEN u.status IS NULL THEN r.status ELSE u.status END,
        wake_at = CASE WHEN u.status IS NULL THEN r.wake_at ELSE u.wake_at END,
        waiting_on = CASE WHEN u.status IS NULL THEN r.waiting_on ELSE u.waiting_on END,
        owner = CASE WHEN u.release THEN NULL ELSE r.owner END,
        lease_expires_at = CASE WHEN u.release THEN NULL ELSE r.lease_expires_at END,
        mission_hash = coalesce(u.mission_hash, r.mission_hash), mission_files = coalesce(u.mission_files, r.mission_files)
   FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::bigint[], $8::text[], $9::boolean[], $10::text[], $11::text[])
        AS u(run_id, owner, epoch, n, latest, status, wake_at, waiting_on, release, mission_hash, mission_files)
  WHERE r.run_id = u.run_id AND r.owner = u.owner AND r.lease_epoch = u.epoch
 RETURNING r.run_id, r.last_seq, u.n`;

/**
 * The fence and the events at once, for a round without store writes (whose store.write events
 * need the writes' results first): ONE statement, atomic by itself. An event is the k-th of its
 * run's commit, so its seq is the run's new last_seq - n + k; a run the fence missed inserts nothing.
 */
const FENCE_AND_APPEND = `WITH fence AS (${FENCE_MANY}),
       appended AS (
         INSERT INTO reqon_events (run_id, seq, type, step_path, payload, recorded_at)
         SELECT e.run_id, f.last_seq - f.n + e.k, e.type, e.step_path, e.payload, e.recorded_at
           FROM ${eventRowsFrom(12)} AS e(run_id, k, type, step_path, payload, recorded_at)
           JOIN fence f ON f.run_id = e.run_id)
       SELECT run_id, last_seq FROM fence`;

/** Work for another worker: a timer to wait for, or a run left running without an owner. */
export function signalsWork(status: Required<StatusChange> | undefined): boolean {
  return status?.status === 'suspended' || (status?.releaseLease === true && status.status === 'running');
}

/**
 * Runs a group's batch in order: each stretch of new runs as one `createMany`, each stretch of
 * commits as one `commitMany` (a run is created before anything can commit to it).
 */
export async function runBatch(
  client: pg.PoolClient,
  tables: PgTableStores,
  items: readonly BatchItem[],
  leaseLost: (lease: Lease, client: pg.PoolClient) => Promise<Error>,
): Promise<BatchOutcome[]> {
  const outcomes: BatchOutcome[] = [];
  for (let i = 0; i < items.length; ) {
    const creating = isCreate(items[i]!);
    let end = i + 1;
    while (end < items.length && isCreate(items[end]!) === creating) end++;
    const stretch = items.slice(i, end);
    outcomes.push(
      ...(creating ? await createMany(client, stretch as BatchedCreate[]) : await commitMany(client, tables, stretch as BatchedCommit[], leaseLost)),
    );
    i = end;
  }
  return outcomes;
}

function isCreate(item: BatchItem): item is BatchedCreate {
  return 'create' in item;
}

/** New runs: one INSERT of the runs, one of their first events, one NOTIFY. A taken id fails alone, having written nothing. */
async function createMany(client: pg.PoolClient, creates: readonly BatchedCreate[]): Promise<BatchOutcome[]> {
  const expiries = await insertRuns(
    client,
    creates.map((c) => ({ run: c.run, owner: c.owner, ttlMs: c.ttlMs, lastSeq: c.events.length })),
  );
  // A run listed twice got one row: the first listing is the one created.
  const created = new Set<string>();
  const outcomes: BatchOutcome[] = creates.map((c) => {
    const expiresAt = expiries.get(c.run.runId);
    if (expiresAt === undefined || created.has(c.run.runId)) return { ok: false, error: runExists(c.run.runId) };
    created.add(c.run.runId);
    const value: CreatedRun = {
      lease: { runId: c.run.runId, owner: c.owner, epoch: 1, expiresAt },
      events: c.events.map((event, i) => storedFrom(c.run.runId, i + 1, event)),
    };
    return { ok: true, value };
  });
  const appends = creates.filter((_, i) => outcomes[i]!.ok).map((c) => ({ runId: c.run.runId, firstSeq: 1, events: c.events }));
  await insertEventsOfRuns(client, appends);
  if (appends.length > 0) await notifyWork(client);
  return outcomes;
}

/**
 * True if `runBatch` writes these items with ONE statement (so it needs no transaction
 * around it): one round (no run twice), no store writes, no NOTIFY.
 */
export function writesInOneStatement(items: readonly BatchItem[]): boolean {
  const runs = new Set<string>();
  for (const commit of items) {
    if (isCreate(commit)) return false;
    if (runs.has(commit.lease.runId) || signalsWork(commit.status) || commit.entries.some((entry) => entry.kind === 'store')) return false;
    runs.add(commit.lease.runId);
  }
  return true;
}

/**
 * Applies `commits` on `client` inside its transaction, in order. Per commit: its events, or an
 * error written by us (a lost lease, a write `check` refused) for a commit that wrote nothing.
 * Throws what PostgreSQL throws: the transaction is then aborted as a whole.
 */
export async function commitMany(
  client: pg.PoolClient,
  tables: PgTableStores,
  commits: readonly BatchedCommit[],
  leaseLost: (lease: Lease, client: pg.PoolClient) => Promise<Error>,
): Promise<BatchOutcome[]> {
  const outcomes: BatchOutcome[] = new Array(commits.length);
  // A run listed twice in one UPDATE … FROM would be updated once: a second commit of a run waits for the next round.
  let round: number[] = [];
  let runs = new Set<string>();
  for (let i = 0; i < commits.length; i++) {
    const commit = commits[i]!;
    try {
      for (const entry of commit.entries) if (entry.kind === 'store') tables.check(entry.write);
    } catch (error) {
      outcomes[i] = { ok: false, error };
      continue;
    }
    if (runs.has(commit.lease.runId)) {
      await commitRound(client, tables, commits, round, outcomes, leaseLost);
      round = [];
      runs = new Set();
    }
    runs.add(commit.lease.runId);
    round.push(i);
  }
  if (round.length > 0) await commitRound(client, tables, commits, round, outcomes, leaseLost);
  return outcomes;
}

async function commitRound(
  client: pg.PoolClient,
  tables: PgTableStores,
  commits: readonly BatchedCommit[],
  round: readonly number[],
  outcomes: BatchOutcome[],
  leaseLost: (lease: Lease, client: pg.PoolClient) => Promise<Error>,
): Promise<void> {
  const listed = round.map((i) => commits[i]!);
  const fenceValues = [
    listed.map((c) => c.lease.runId),
    listed.map((c) => c.lease.owner),
    listed.map((c) => c.lease.epoch),
    listed.map((c) => c.entries.length),
    listed.map((c) => c.latest),
    listed.map((c) => c.status?.status ?? null),
    listed.map((c) => c.status?.wakeAt ?? null),
    listed.map((c) => c.status?.waitingOn ?? null),
    listed.map((c) => c.status?.releaseLease === true),
    listed.map((c) => c.mission?.hash ?? null),
    listed.map((c) => c.mission?.filesJson ?? null),
  ];
  const withWrites = listed.some((c) => c.entries.some((entry) => entry.kind === 'store'));
  const { rows } = withWrites
    ? await client.query<{ run_id: string; last_seq: number }>({ name: 'reqon-fence-many', text: FENCE_MANY, values: fenceValues })
    : await client.query<{ run_id: string; last_seq: number }>({ name: 'reqon-fence-and-append', text: FENCE_AND_APPEND, values: [...fenceValues, ...eventColumnsOf(listed)] });
  const lastSeqOf = new Map(rows.map((row) => [row.run_id, Number(row.last_seq)]));
  const fenced: number[] = [];
  for (const i of round) {
    if (lastSeqOf.has(commits[i]!.lease.runId)) fenced.push(i);
    else outcomes[i] = { ok: false, error: await leaseLost(commits[i]!.lease, client) };
  }
  if (fenced.length === 0) return;

  // The store writes of every fenced commit, in commit order, then each commit's events with its
  // store.write events in entry order.
  const writes = fenced.flatMap((i) => commits[i]!.entries.flatMap((entry) => (entry.kind === 'store' ? [entry.write] : [])));
  const applied = writes.length === 0 ? [] : await tables.applyWrites(client, writes);
  let w = 0;
  const appends: RunAppend[] = fenced.map((i) => {
    const commit = commits[i]!;
    const events: PreparedEvent[] = commit.entries.map((entry) => {
      if (entry.kind === 'event') return entry.event;
      const { json, removed } = applied[w++]!;
      return { type: 'store.write', stepPath: entry.write.stepPath, payloadJson: storeWritePayloadJson(entry.write, json, removed), recordedAt: entry.write.recordedAt };
    });
    return { runId: commit.lease.runId, firstSeq: lastSeqOf.get(commit.lease.runId)! - events.length + 1, events };
  });
  if (withWrites) await insertEventsOfRuns(client, appends);
  if (fenced.some((i) => signalsWork(commits[i]!.status))) await notifyWork(client);
  fenced.forEach((i, n) => {
    const { runId, firstSeq, events } = appends[n]!;
    outcomes[i] = { ok: true, value: commits[i]!.returnEvents ? events.map((event, k) => storedFrom(runId, firstSeq + k, event)) : [] };
  });
}

/** The events of `commits` as the parameters FENCE_AND_APPEND reads: numbered from 1 within each commit (k). */
function eventColumnsOf(commits: readonly BatchedCommit[]): unknown[] {
  return eventParams(eventColumns(
    commits.map((commit) => ({
      runId: commit.lease.runId,
      firstSeq: 1,
      events: commit.entries.map((entry) => {
        if (entry.kind !== 'event') throw new Error('eventColumnsOf: a commit with store writes cannot take the one-statement path');
        return entry.event;
      }),
    })),
  ));
}
