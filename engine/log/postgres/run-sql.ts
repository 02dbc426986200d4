/**
 * The statements that create runs and append events, shared by createRun, commit and schedule
 * firings. Each runs on the caller's connection, inside its transaction.
 */
import type { PoolClient } from 'pg';
import type { NewRun } from '../log.js';
import type { PreparedEvent } from '../rows.js';

/** A run to create, owned by `owner` with a lease of `ttlMs`, its first `lastSeq` events to follow. */
export interface RunInsert {
  run: NewRun;
  owner: string;
  ttlMs: number;
  lastSeq: number;
}

/** Inserts the run owned by `owner`; returns its lease's expiry by the database's clock. Throws if the id is taken. */
export async function insertRun(client: PoolClient, run: NewRun, owner: string, ttlMs: number, lastSeq: number): Promise<number> {
  const expiry = (await insertRuns(client, [{ run, owner, ttlMs, lastSeq }])).get(run.runId);
  if (expiry === undefined) throw runExists(run.runId);
  return expiry;
}

/**
 * Inserts runs in ONE statement; returns run id → its lease's expiry by the database's clock, for
 * the runs inserted. A run whose id is taken (or listed twice) is left out: nothing of it is written.
 */
export async function insertRuns(client: PoolClient, inserts: readonly RunInsert[]): Promise<Map<string, number>> {
  const { rows } = await client.query<{ run_id: string; lease_expires_at: number }>({
    name: 'reqon-insert-runs',
    text: `INSERT INTO reqon_runs (run_id, mission, mission_hash, mission_files, options, status, created_at, updated_at,
                                   last_seq, owner, lease_epoch, lease_expires_at, wake_at, waiting_on)
           SELECT u.run_id, u.mission, u.mission_hash, u.mission_files, u.options, 'running', u.created_at, u.created_at,
                  u.last_seq, u.owner, 1, reqon_now_ms() + u.ttl, NULL, NULL
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::bigint[])
                  WITH ORDINALITY AS u(run_id, mission, mission_hash, mission_files, options, created_at, last_seq, owner, ttl, ord)
            ORDER BY u.ord
           ON CONFLICT (run_id) DO NOTHING
           RETURNING run_id, lease_expires_at`,
    values: [
      inserts.map((i) => i.run.runId),
      inserts.map((i) => String(i.run.mission)),
      inserts.map((i) => String(i.run.missionHash)),
      inserts.map((i) => JSON.stringify(i.run.missionFiles)),
      inserts.map((i) => JSON.stringify(i.run.options)),
      inserts.map((i) => i.run.createdAt),
      inserts.map((i) => i.lastSeq),
      inserts.map((i) => i.owner),
      inserts.map((i) => i.ttlMs),
    ],
  });
  return new Map(rows.map((row) => [row.run_id, row.lease_expires_at]));
}

export function runExists(runId: string): Error {
  return new Error(`run '${runId}' already exists in this log; run ids must be unique — generate a new one`);
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

/**
 * Events per INSERT. A commit of a whole response's store writes can hold hundreds of thousands of
 * events: in slices of this size (one round trip each, in the same transaction) no statement's
 * parameters hold more than a slice of the batch.
 */
export const EVENTS_PER_INSERT = 2_000;

/** Inserts the events of many runs, one statement per EVENTS_PER_INSERT events. */
export async function insertEventsOfRuns(client: PoolClient, appends: readonly RunAppend[]): Promise<void> {
  const columns = eventColumns(appends);
  const total = columns[0].length;
  for (let from = 0; from < total; from += EVENTS_PER_INSERT) {
    const slice = total <= EVENTS_PER_INSERT ? columns : sliceColumns(columns, from, from + EVENTS_PER_INSERT);
    await client.query({
      name: 'reqon-insert-events',
      text: `INSERT INTO reqon_events (run_id, seq, type, step_path, payload, recorded_at)
             SELECT u.run_id, u.seq, u.type, u.step_path, u.payload, u.recorded_at
               FROM ${eventRowsFrom(1)} AS u(run_id, seq, type, step_path, payload, recorded_at)`,
      values: eventParams(slice),
    });
  }
}

type EventColumns = [string[], number[], string[], string[], string[], number[]];

/** The events of `appends` as columns: run, seq, type, step path, payload, recordedAt. */
export function eventColumns(appends: readonly RunAppend[]): EventColumns {
  const columns: EventColumns = [[], [], [], [], [], []];
  for (const { runId, firstSeq, events } of appends) {
    events.forEach((event, i) => {
      columns[0].push(runId);
      columns[1].push(firstSeq + i);
      columns[2].push(event.type);
      columns[3].push(event.stepPath);
      columns[4].push(event.payloadJson);
      columns[5].push(event.recordedAt);
    });
  }
  return columns;
}

function sliceColumns(columns: EventColumns, from: number, to: number): EventColumns {
  return columns.map((c) => c.slice(from, to)) as EventColumns;
}

/**
 * Event columns as the parameters `eventRowsFrom` reads. The payloads go as ONE JSON array of
 * strings, not as a text[]: the driver writes a text[] out as an array literal by escaping every
 * element in JavaScript (two regex replaces and a concatenation per payload — seconds of CPU and
 * several copies of a big batch in memory), while JSON.stringify writes the array natively and
 * PostgreSQL reads each string back exactly (a payload is itself JSON text, so it holds no NUL
 * and no lone surrogate that JSON could not carry).
 */
export function eventParams(columns: EventColumns): unknown[] {
  return [columns[0], columns[1], columns[2], columns[3], JSON.stringify(columns[4]), columns[5]];
}

/** The rows of `eventParams` placed at $n…$n+5: (run_id, seq, type, step_path, payload, recorded_at). */
export function eventRowsFrom(n: number): string {
  return `ROWS FROM (unnest($${n}::text[]), unnest($${n + 1}::bigint[]), unnest($${n + 2}::text[]), unnest($${n + 3}::text[]), json_array_elements_text($${n + 4}::json), unnest($${n + 5}::bigint[]))`;
}
