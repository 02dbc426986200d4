/**
 * Retention on PostgreSQL: the statements behind `prunableRuns`, `pruneRuns`,
 * `deletePrunedEvents` and `reclaimSpace`, the same two steps as sqlite/retention.ts (read its
 * header): a run's row goes under a compare-and-set that re-checks every rule, queued in
 * `reqon_pruned_runs`; its events follow a chunk at a time. Each write runs in a transaction of
 * its own on its own pooled connection — never in the group commit, whose writer connections
 * the runs' commits share.
 *
 * Races: the row DELETE and a concurrent `acquire` or commit of the same run take the row's lock
 * in turn; whichever comes second re-reads the row (READ COMMITTED re-evaluates a locked row's
 * WHERE), so a run taken first keeps its row (its lease_epoch moved), and a run pruned first is
 * gone for the acquirer (RunNotFoundError). Two pruners share the queue with SKIP LOCKED.
 */
import type { PoolClient } from 'pg';
import { IMPORTED_OWNER, type CheckpointMark, type DeletedEvents, type PrunableRun, type PruneQuery, type PrunedRuns, type SpaceReport } from '../log.js';
import { toPrunableRun, type PrunableRow } from '../rows.js';

/**
 * As sqlite/retention.ts's PRUNABLE, on `reqon_runs r`: $1 finished before; leases by the
 * database's clock. finished_at is updated_at of a finished run (migrations.ts, version 3).
 */
const PRUNABLE = `
  r.finished_at < $1
  AND (r.owner IS NULL OR r.lease_expires_at <= reqon_now_ms() OR r.owner = '${IMPORTED_OWNER}')
  AND NOT (r.status = 'failed' AND EXISTS (
    SELECT 1 FROM reqon_schedule_firings f JOIN reqon_schedules s ON s.mission = f.mission
     WHERE f.run_id = r.run_id AND f.outcome = 'started'
       AND f.attempt < coalesce((s.spec::jsonb #>> '{retry,maxRetries}')::int, 0)
       AND NOT EXISTS (SELECT 1 FROM reqon_schedule_firings g
                        WHERE g.mission = f.mission AND g.due_at = f.due_at AND g.attempt = f.attempt + 1)))`;

const QUEUE_WINDOW = 100;

export async function prunableRuns(client: PoolClient, query: PruneQuery): Promise<PrunableRun[]> {
  const { rows } = await client.query<PrunableRow & { checkpoints: [string, string, string | null][] }>(
    `SELECT r.run_id, r.mission, r.status, r.finished_at AS updated_at, r.last_seq, r.lease_epoch,
            coalesce((SELECT json_agg(json_build_array(e.payload::jsonb ->> 'key', e.payload::jsonb ->> 'syncedAt', e.payload::jsonb ->> 'api'))
                        FROM reqon_events e
                       WHERE e.type = 'checkpoint.advanced' AND e.run_id = r.run_id AND r.owner IS DISTINCT FROM '${IMPORTED_OWNER}'
                         -- Only a checkpoint that counts (as checkpointMarks below): one a failure followed keeps nothing.
                         AND r.status = 'completed'
                         AND NOT EXISTS (SELECT 1 FROM reqon_events f WHERE f.run_id = e.run_id AND f.type = 'step.failed' AND f.seq > e.seq)
                         AND NOT EXISTS (SELECT 1 FROM reqon_events s WHERE s.run_id = e.run_id AND s.seq = 1 AND (s.payload::jsonb #>> '{forkedFrom,imported}') = 'true' AND (s.payload::jsonb #>> '{forkedFrom,atSeq}')::bigint >= e.seq)), '[]'::json) AS checkpoints
       FROM reqon_runs r
      WHERE ${PRUNABLE}
        AND ($2::bigint IS NULL OR (r.finished_at, r.run_id) > ($2::bigint, $3::text))
      ORDER BY r.finished_at, r.run_id
      LIMIT $4`,
    [query.finishedBefore, query.after?.updatedAt ?? null, query.after?.runId ?? '', query.limit],
  );
  return rows.map((r) => toPrunableRun(r, r.checkpoints));
}

/** Per API as well as key: lastCheckpoint reads only the checkpoints of the API a run fetches from. */
export async function checkpointMarks(client: PoolClient): Promise<CheckpointMark[]> {
  const { rows } = await client.query<{ mission: string; key: string; api: string | null; synced: string }>(
    `SELECT r.mission, e.payload::jsonb ->> 'key' AS key, e.payload::jsonb ->> 'api' AS api,
            max((e.payload::jsonb ->> 'syncedAt')::numeric) AS synced
       FROM reqon_events e JOIN reqon_runs r ON r.run_id = e.run_id
      WHERE e.type = 'checkpoint.advanced' AND r.status = 'completed' AND r.owner IS DISTINCT FROM '${IMPORTED_OWNER}'
        AND NOT EXISTS (SELECT 1 FROM reqon_events f WHERE f.run_id = e.run_id AND f.type = 'step.failed' AND f.seq > e.seq)
        AND NOT EXISTS (SELECT 1 FROM reqon_events s WHERE s.run_id = e.run_id AND s.seq = 1 AND (s.payload::jsonb #>> '{forkedFrom,imported}') = 'true' AND (s.payload::jsonb #>> '{forkedFrom,atSeq}')::bigint >= e.seq)
      GROUP BY r.mission, key, api`,
  );
  return rows.map((r) => ({ mission: r.mission, key: r.key, ...(r.api === null ? {} : { api: r.api }), syncedAt: Number(r.synced) }));
}

/** Inside the caller's transaction. */
export async function pruneRuns(client: PoolClient, runs: readonly PrunableRun[], finishedBefore: number, prunedAt: number): Promise<PrunedRuns> {
  if (runs.length === 0) return { runIds: [], deliveries: 0, bytes: 0 };
  const gone = await client.query<{ run_id: string; last_seq: number; bytes: number }>(
    `DELETE FROM reqon_runs r
      USING unnest($2::text[], $3::bigint[], $4::bigint[]) AS l(run_id, last_seq, epoch)
      WHERE r.run_id = l.run_id AND r.last_seq = l.last_seq AND r.lease_epoch = l.epoch AND ${PRUNABLE}
     RETURNING r.run_id, r.last_seq, octet_length(r.mission_files) + octet_length(r.options) + octet_length(r.run_id) AS bytes`,
    [finishedBefore, runs.map((r) => r.runId), runs.map((r) => r.lastSeq), runs.map((r) => r.leaseEpoch)],
  );
  const runIds = gone.rows.map((r) => r.run_id);
  if (runIds.length === 0) return { runIds, deliveries: 0, bytes: 0 };
  await client.query(
    `INSERT INTO reqon_pruned_runs (run_id, pruned_at, last_seq, deleted_to)
     SELECT u.run_id, $1, u.last_seq, 0 FROM unnest($2::text[], $3::bigint[]) AS u(run_id, last_seq)`,
    [prunedAt, runIds, gone.rows.map((r) => r.last_seq)],
  );
  const claimed = await client.query<{ n: number; bytes: number }>(
    `WITH d AS (DELETE FROM reqon_webhook_inbox WHERE claimed_run = ANY($1::text[])
                RETURNING octet_length(payload) + octet_length(path) + octet_length(event_id) AS b)
     SELECT count(*) AS n, coalesce(sum(b), 0) AS bytes FROM d`,
    [runIds],
  );
  const row = claimed.rows[0]!;
  return { runIds, deliveries: row.n, bytes: gone.rows.reduce((n, r) => n + r.bytes, 0) + row.bytes };
}

export async function queuedPrunedEvents(client: PoolClient): Promise<{ runs: number; events: number }> {
  const { rows } = await client.query<{ runs: string; events: string }>('SELECT count(*) AS runs, coalesce(sum(last_seq - deleted_to), 0) AS events FROM reqon_pruned_runs');
  return { runs: Number(rows[0]!.runs), events: Number(rows[0]!.events) };
}

/** Inside the caller's transaction. */
export async function deletePrunedEvents(client: PoolClient, maxEvents: number): Promise<DeletedEvents> {
  const out: DeletedEvents = { events: 0, bytes: 0, runsDone: 0, left: false };
  const { rows: queued } = await client.query<{ run_id: string; last_seq: number; deleted_to: number }>(
    'SELECT run_id, last_seq, deleted_to FROM reqon_pruned_runs ORDER BY pruned_at, run_id LIMIT $1 FOR UPDATE SKIP LOCKED',
    [QUEUE_WINDOW],
  );
  // None this caller can take (none left, or another pruner holds them): nothing left for it.
  if (queued.length === 0) return out;
  for (const q of queued) {
    const budget = maxEvents - out.events;
    if (budget <= 0) break;
    const to = Math.min(q.last_seq, q.deleted_to + budget);
    const { rows } = await client.query<{ n: number; bytes: number }>(
      `WITH d AS (DELETE FROM reqon_events WHERE run_id = $1 AND seq > $2 AND seq <= $3
                  RETURNING octet_length(type) + octet_length(step_path) + octet_length(payload) AS b)
       SELECT count(*) AS n, coalesce(sum(b), 0) AS bytes FROM d`,
      [q.run_id, q.deleted_to, to],
    );
    out.events += rows[0]!.n;
    out.bytes += rows[0]!.bytes;
    if (to >= q.last_seq) {
      await client.query('DELETE FROM reqon_pruned_runs WHERE run_id = $1', [q.run_id]);
      out.runsDone++;
    } else {
      await client.query('UPDATE reqon_pruned_runs SET deleted_to = $1 WHERE run_id = $2', [to, q.run_id]);
    }
  }
  const { rows } = await client.query<{ left: boolean }>('SELECT EXISTS (SELECT 1 FROM reqon_pruned_runs) AS left');
  out.left = rows[0]!.left;
  return out;
}

const LOG_TABLES = ['reqon_events', 'reqon_runs', 'reqon_webhook_inbox', 'reqon_pruned_runs'] as const;

async function storedBytes(client: PoolClient): Promise<number> {
  const { rows } = await client.query<{ bytes: string }>(
    `SELECT sum(pg_total_relation_size(c.oid))::text AS bytes FROM pg_class c
      WHERE c.oid IN (${LOG_TABLES.map((t) => `to_regclass('${t}')`).join(', ')})`,
  );
  return Number(rows[0]?.bytes ?? 0);
}

/** Outside any transaction (VACUUM cannot run in one). */
export async function reclaimSpace(client: PoolClient, vacuum: boolean): Promise<SpaceReport> {
  const before = await storedBytes(client);
  // Plain VACUUM takes no lock that writers wait on; it makes deleted rows' space reusable now,
  // rather than when autovacuum comes round, and gives back empty pages at a table's end.
  if (vacuum) await client.query(`VACUUM (ANALYZE) ${LOG_TABLES.join(', ')}`);
  const after = await storedBytes(client);
  return {
    storedBytes: after,
    freeBytes: null,
    shrunkBytes: Math.max(0, before - after),
    note: vacuum
      ? 'VACUUM ran on the log tables: the deleted rows\' space is free for new writes (the files shrink only with VACUUM FULL, which locks the tables while it rewrites them)'
      : 'PostgreSQL\'s autovacuum makes the deleted rows\' space reusable by new writes; `reqon prune --vacuum` runs VACUUM now (writers are not blocked); the files shrink only with VACUUM FULL, which locks the tables',
  };
}

/** `work` in one transaction of its own on `client` (committed with synchronous_commit on: durable). */
export async function inTransaction<T>(client: PoolClient, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const value = await work();
    await client.query('COMMIT');
    return value;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
