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

/** One run's events to insert, numbered firstSeq, firstSeq+1, … */
export interface RunAppend {
  runId: string;
  firstSeq: number;
  events: readonly PreparedEvent[];
}

/** Inserts `events` as seqs firstSeq, firstSeq+1, … of one run. */
export async function insertEvents(client: PoolClient, runId: string, firstSeq: number, events: readonly PreparedEvent[]): Promise<void> {
  await insertEventsOfRuns(client, [{ runId, firstSeq, events }]);
}

/** Inserts the events of many runs in ONE statement (arrays unnested server-side). */
export async function insertEventsOfRuns(client: PoolClient, appends: readonly RunAppend[]): Promise<void> {
  const runIds: string[] = [];
  const seqs: number[] = [];
  const types: string[] = [];
  const stepPaths: string[] = [];
  const payloads: string[] = [];
  const recordedAts: number[] = [];
  for (const { runId, firstSeq, events } of appends) {
    events.forEach((event, i) => {
      runIds.push(runId);
      seqs.push(firstSeq + i);
      types.push(event.type);
      stepPaths.push(event.stepPath);
      payloads.push(event.payloadJson);
      recordedAts.push(event.recordedAt);
    });
  }
  if (seqs.length === 0) return;
  await client.query({
    name: 'reqon-insert-events',
    text: `INSERT INTO reqon_events (run_id, seq, type, step_path, payload, recorded_at)
           SELECT u.run_id, u.seq, u.type, u.step_path, u.payload, u.recorded_at
             FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[]) AS u(run_id, seq, type, step_path, payload, recorded_at)`,
    values: [runIds, seqs, types, stepPaths, payloads, recordedAts],
  });
}
