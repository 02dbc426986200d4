/**
 * The statements that create runs and append events, shared by createRun, commit and schedule
 * firings. Each runs on the caller's connection, inside its transaction.
 */
import type { PoolClient } from 'pg';
import type { NewRun } from '../log.js';
import type { PreparedEvent } from '../rows.js';

/** Inserts the run owned by `owner`; returns its lease's expiry by the database's clock. Throws if the id is taken. */
export async function insertRun(client: PoolClient, run: NewRun, owner: string, ttlMs: number, lastSeq: number): Promise<number> {
  const { rows } = await client.query<{ lease_expires_at: number }>(
    `INSERT INTO reqon_runs (run_id, mission, mission_hash, mission_files, options, status, created_at, updated_at,
                             last_seq, owner, lease_epoch, lease_expires_at, wake_at, waiting_on)
     VALUES ($1, $2, $3, $4, $5, 'running', $6, $6, $7, $8, 1, reqon_now_ms() + $9, NULL, NULL)
     ON CONFLICT (run_id) DO NOTHING
     RETURNING lease_expires_at`,
    [run.runId, String(run.mission), String(run.missionHash), JSON.stringify(run.missionFiles), JSON.stringify(run.options), run.createdAt, lastSeq, owner, ttlMs],
  );
  if (rows[0] === undefined) throw new Error(`run '${run.runId}' already exists in this log; run ids must be unique — generate a new one`);
  return rows[0].lease_expires_at;
}

/** Inserts `events` as seqs firstSeq, firstSeq+1, … in ONE statement (arrays unnested server-side). */
export async function insertEvents(client: PoolClient, runId: string, firstSeq: number, events: readonly PreparedEvent[]): Promise<void> {
  if (events.length === 0) return;
  const seqs = events.map((_, i) => firstSeq + i);
  await client.query(
    `INSERT INTO reqon_events (run_id, seq, type, step_path, payload, recorded_at)
     SELECT $1, u.seq, u.type, u.step_path, u.payload, u.recorded_at
       FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[]) AS u(seq, type, step_path, payload, recorded_at)`,
    [runId, seqs, events.map((e) => e.type), events.map((e) => e.stepPath), events.map((e) => e.payloadJson), events.map((e) => e.recordedAt)],
  );
}
