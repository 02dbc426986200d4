/**
 * Every fixed SQL statement of the log, prepared once per connection and reused.
 *
 * The key statement is `fenceAndReserve`: it bumps `last_seq` by the number of events about to be
 * inserted AND checks the lease `(owner, epoch)` in one UPDATE. No row updated means the lease
 * was lost (or the run does not exist): the caller writes nothing. Because the row is updated
 * inside the write transaction, seq numbers come from the database, never from memory, and two
 * writers can never be handed the same seq.
 */
import type Database from 'better-sqlite3';
import type { EventRow, RunRow } from '../rows.js';
import { onlySummaryTypes, SUMMARY_EVENT_TYPES } from '../events.js';
import { IMPORTED_OWNER } from '../log.js';

/** The summary index's WHERE (migration 8), term for term: a statement that repeats it may say INDEXED BY reqon_events_summary. */
const SUMMARY_INDEX_WHERE = `(${SUMMARY_EVENT_TYPES.map((t) => `type = '${t}'`).join(' OR ')})`;

/**
 * Counts a run's events with seq <= ? whose type is one of `types`: (run_id, to_seq, ...types).
 * When every type is a summary type (a resume skips run.started and run.resumed), through the
 * summary index: a few rows, not the run's. Otherwise bound types, not json_each: this scans
 * every row of the run, twice as fast so.
 */
export function countEventsOfTypes(db: Database.Database, types: readonly string[]): Database.Statement<(string | number)[], number> {
  const list = types.length === 0 ? 'NULL' : Array(types.length).fill('?').join(', ');
  const summary = onlySummaryTypes(types);
  const from = summary ? `reqon_events INDEXED BY reqon_events_summary` : 'reqon_events';
  return db
    .prepare<(string | number)[], number>(`SELECT count(*) FROM ${from} WHERE run_id = ? AND seq <= ? AND ${summary ? `${SUMMARY_INDEX_WHERE} AND ` : ''}type IN (${list})`)
    .pluck(true);
}

/**
 * `read` with `types`: the run's events of the `types` given with from <= seq <= to, in order,
 * at most LIMIT (negative: all). The run's rows are scanned in SQLite; only the matches are decoded.
 */
export function eventsOfTypes(db: Database.Database, types: number): Database.Statement<(string | number)[], EventRow> {
  return db.prepare<(string | number)[], EventRow>(
    `SELECT run_id, seq, type, step_path, payload, recorded_at FROM reqon_events WHERE run_id = ? AND seq >= ? AND seq <= ? AND type IN (${Array(types).fill('?').join(', ')}) ORDER BY seq LIMIT ?`,
  );
}

/**
 * ReplayReader.measureRun: (run_id, from, to, type, step_path, ...skipped) → the first event from
 * `from` that is neither of `type` at `step_path` nor of a skipped type (SQLite walks the rows of
 * the run between, which never reach JS).
 */
export function eventAfterRun(db: Database.Database, skipped: number): Database.Statement<(string | number)[], [number, string, string]> {
  const notSkipped = skipped === 0 ? '' : ` AND type NOT IN (${Array(skipped).fill('?').join(', ')})`;
  return db
    .prepare<(string | number)[], [number, string, string]>(
      `SELECT seq, type, step_path FROM reqon_events
        WHERE run_id = ? AND seq >= ? AND seq <= ? AND NOT (type = ? AND step_path = ?)${notSkipped} ORDER BY seq LIMIT 1`,
    )
    .raw(true);
}

/** The most events one multi-row insert takes (`insertEventRows`). */
export const INSERT_BATCH = 16;

/** An INSERT of `rows` events in one statement: a third cheaper per event than one each. */
export function insertEventRows(db: Database.Database, rows: number): Database.Statement<(string | number)[]> {
  return db.prepare<(string | number)[]>(
    `INSERT INTO reqon_events (run_id, seq, type, step_path, payload, recorded_at) VALUES ${Array(rows).fill('(?, ?, ?, ?, ?, ?)').join(', ')}`,
  );
}

export function prepareStatements(db: Database.Database) {
  return {
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
    savepoint: db.prepare('SAVEPOINT reqon_job'),
    rollbackToSavepoint: db.prepare('ROLLBACK TO reqon_job'),
    releaseSavepoint: db.prepare('RELEASE reqon_job'),
    // No `PRAGMA synchronous` here on purpose: SQLite applies that pragma when it is *prepared*,
    // not when it runs, so a prepared copy would switch nothing (group-commit.ts execs it).

    insertRun: db.prepare<{
      run_id: string; mission: string; mission_hash: string; mission_files: string; options: string;
      created_at: number; last_seq: number; owner: string; lease_expires_at: number;
    }>(`
      INSERT INTO reqon_runs (run_id, mission, mission_hash, mission_files, options, status, created_at, updated_at,
                              last_seq, owner, lease_epoch, lease_expires_at, wake_at, waiting_on)
      VALUES (@run_id, @mission, @mission_hash, @mission_files, @options, 'running', @created_at, @created_at,
              @last_seq, @owner, 1, @lease_expires_at, NULL, NULL)`),
    runExists: db.prepare<[string], { one: number }>('SELECT 1 AS one FROM reqon_runs WHERE run_id = ?'),
    getRun: db.prepare<[string], RunRow>('SELECT * FROM reqon_runs WHERE run_id = ?'),
    leaseOf: db.prepare<[string], Pick<RunRow, 'owner' | 'lease_epoch' | 'lease_expires_at'>>(
      'SELECT owner, lease_epoch, lease_expires_at FROM reqon_runs WHERE run_id = ?',
    ),
    // Two indexed halves: timers that are due (and not being handled by a live lease holder),
    // and running runs whose owner is gone or whose lease ran out.
    dueRuns: db.prepare<{ now: number; limit: number }, RunRow>(`
      SELECT * FROM (
        SELECT *, wake_at AS due FROM reqon_runs
         WHERE status = 'suspended' AND wake_at <= @now AND (owner IS NULL OR lease_expires_at <= @now)
        UNION ALL
        SELECT *, coalesce(lease_expires_at, updated_at) AS due FROM reqon_runs
         WHERE status = 'running' AND (owner IS NULL OR lease_expires_at <= @now)
      ) ORDER BY due, run_id LIMIT @limit`),

    acquire: db.prepare<{ run_id: string; owner: string; now: number; expires_at: number }, RunRow>(`
      UPDATE reqon_runs SET owner = @owner, lease_epoch = lease_epoch + 1, lease_expires_at = @expires_at
       WHERE run_id = @run_id AND (owner IS NULL OR lease_expires_at <= @now)
      RETURNING *`),
    renew: db.prepare<{ run_id: string; owner: string; epoch: number; expires_at: number }>(`
      UPDATE reqon_runs SET lease_expires_at = @expires_at
       WHERE run_id = @run_id AND owner = @owner AND lease_epoch = @epoch`),
    release: db.prepare<{ run_id: string; owner: string; epoch: number }>(`
      UPDATE reqon_runs SET owner = NULL, lease_expires_at = NULL
       WHERE run_id = @run_id AND owner = @owner AND lease_epoch = @epoch`),

    fenceAndReserve: db.prepare<{ run_id: string; owner: string; epoch: number; count: number; at: number }, { last_seq: number }>(`
      UPDATE reqon_runs SET last_seq = last_seq + @count, updated_at = max(updated_at, @at)
       WHERE run_id = @run_id AND owner = @owner AND lease_epoch = @epoch
      RETURNING last_seq`),
    setStatus: db.prepare<{ run_id: string; status: string; wake_at: number | null; waiting_on: string | null; release: number }>(`
      UPDATE reqon_runs SET status = @status, wake_at = @wake_at, waiting_on = @waiting_on,
             owner = CASE WHEN @release THEN NULL ELSE owner END,
             lease_expires_at = CASE WHEN @release THEN NULL ELSE lease_expires_at END
       WHERE run_id = @run_id`),
    // The resume CAS: only a run still suspended on exactly this wait moves; its lease (if any) is
    // revoked, so the run is up for grabs and any stale holder is fenced out.
    resumeSuspended: db.prepare<{ run_id: string; waiting_on: string; last_seq: number | null; at: number }, { last_seq: number }>(`
      UPDATE reqon_runs SET status = 'running', wake_at = NULL, waiting_on = NULL, owner = NULL, lease_expires_at = NULL,
             last_seq = last_seq + 1, updated_at = max(updated_at, @at)
       WHERE run_id = @run_id AND status = 'suspended' AND waiting_on = @waiting_on
         AND (@last_seq IS NULL OR last_seq = @last_seq)
      RETURNING last_seq`),
    setMission: db.prepare<{ run_id: string; mission_hash: string; mission_files: string }>(`
      UPDATE reqon_runs SET mission_hash = @mission_hash, mission_files = @mission_files WHERE run_id = @run_id`),

    acquireFrom: db.prepare<{ run_id: string; owner: string; previous: string; now: number; expires_at: number }, RunRow>(`
      UPDATE reqon_runs SET owner = @owner, lease_epoch = lease_epoch + 1, lease_expires_at = @expires_at
       WHERE run_id = @run_id AND (owner IS NULL OR lease_expires_at <= @now OR owner = @previous)
      RETURNING *`),
    // The bare column `query` comes from the row of max(): SQLite's rule for min()/max() aggregates.
    // The bare columns are the max row's (SQLite's rule for one max()): its query and when it was committed.
    lastCheckpoint: db.prepare<{ mission: string; key: string; api: string | null }, { synced: number | null; query: string | null; query_sha256: string | null; advanced_at: number | null }>(`
      SELECT max(json_extract(e.payload, '$.syncedAt')) AS synced, json_extract(e.payload, '$.query') AS query,
             json_extract(e.payload, '$.querySha256') AS query_sha256, e.recorded_at AS advanced_at
        FROM reqon_events e JOIN reqon_runs r ON r.run_id = e.run_id
       WHERE e.type = 'checkpoint.advanced' AND r.mission = @mission AND json_extract(e.payload, '$.key') = @key
         AND json_extract(e.payload, '$.api') IS @api AND r.status = 'completed' AND r.owner IS NOT '${IMPORTED_OWNER}'
         AND NOT EXISTS (SELECT 1 FROM reqon_events f WHERE f.run_id = e.run_id AND f.type = 'step.failed' AND f.seq > e.seq)
         AND NOT EXISTS (SELECT 1 FROM reqon_events s WHERE s.run_id = e.run_id AND s.seq = 1 AND json_extract(s.payload, '$.forkedFrom.imported') = 1 AND json_extract(s.payload, '$.forkedFrom.atSeq') >= e.seq)`),
    deliverWebhook: db.prepare<{ path: string; event_id: string; payload: string; received_at: number }>(`
      INSERT INTO reqon_webhook_inbox (path, event_id, payload, received_at) VALUES (@path, @event_id, @payload, @received_at)
      ON CONFLICT (path, event_id) DO NOTHING`),
    webhookInbox: db.prepare<[string], { event_id: string; payload: string; received_at: number }>(
      'SELECT event_id, payload, received_at FROM reqon_webhook_inbox WHERE path = ? AND claimed_run IS NULL ORDER BY received_at, event_id',
    ),
    webhookDelivered: db.prepare<[string, string], { one: number }>('SELECT 1 AS one FROM reqon_webhook_inbox WHERE path = ? AND event_id = ?'),
    webhookOnOtherPath: db.prepare<[string, string], { one: number }>('SELECT 1 AS one FROM reqon_webhook_inbox WHERE event_id = ? AND path <> ? LIMIT 1'),
    unclaimedOnPath: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM reqon_webhook_inbox WHERE path = ? AND claimed_run IS NULL'),
    expireOnPath: db.prepare<[string, number]>('DELETE FROM reqon_webhook_inbox WHERE path = ? AND claimed_run IS NULL AND received_at < ?'),
    expireWebhooks: db.prepare<[number]>('DELETE FROM reqon_webhook_inbox WHERE claimed_run IS NULL AND received_at < ?'),
    claimWebhook: db.prepare<{ path: string; event_id: string; run_id: string; wait_id: string }>(`
      UPDATE reqon_webhook_inbox SET claimed_run = @run_id, claimed_wait = @wait_id
       WHERE path = @path AND event_id = @event_id AND claimed_run IS NULL`),

    insertEvent: db.prepare<[string, number, string, string, string, number]>(
      'INSERT INTO reqon_events (run_id, seq, type, step_path, payload, recorded_at) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    readEvents: db.prepare<[string, number, number, number], EventRow>(
      'SELECT * FROM reqon_events WHERE run_id = ? AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?',
    ),
    // Walks the run's rows newest first in SQLite (no row reaches JS until one matches).
    lastOfTypes: db.prepare<[string, string], EventRow>(
      'SELECT * FROM reqon_events WHERE run_id = ? AND type IN (SELECT value FROM json_each(?)) ORDER BY seq DESC LIMIT 1',
    ),
    // `lastOfTypes` when every type is a summary type (a resume's pause.created / pause.resumed,
    // a finished run's end): through the summary index, a few rows, where the scan above walks
    // every row of the run (0.4 s of a 900k-event sync's resume).
    lastOfSummaryTypes: db.prepare<[string, string], EventRow>(
      `SELECT * FROM reqon_events INDEXED BY reqon_events_summary
        WHERE run_id = ? AND ${SUMMARY_INDEX_WHERE} AND type IN (SELECT value FROM json_each(?)) ORDER BY seq DESC LIMIT 1`,
    ),
    // `read` with exactly SUMMARY_EVENT_TYPES: through their partial index (migration 8), whose
    // WHERE this one repeats term for term — INDEXED BY makes a list that drifted from it an error.
    summaryEvents: db.prepare<[string, number, number, number], EventRow>(
      `SELECT run_id, seq, type, step_path, payload, recorded_at FROM reqon_events INDEXED BY reqon_events_summary
        WHERE run_id = ? AND seq >= ? AND seq <= ? AND ${SUMMARY_INDEX_WHERE} ORDER BY seq LIMIT ?`,
    ),
    // `read` of a run's step.failed events alone (`reqon runs`' failure count of a completed run):
    // through their partial index (migration 6), none read of a run without failures.
    failedSteps: db.prepare<[string, number, number, number], EventRow>(
      `SELECT run_id, seq, type, step_path, payload, recorded_at FROM reqon_events INDEXED BY reqon_events_step_failed
        WHERE run_id = ? AND type = 'step.failed' AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?`,
    ),
    // `eventCounts`' second statement: a run's http.response events by status, up to the seq counted.
    // The status is read from the payload's first 512 characters: json_extract parsed the whole
    // body (a 20 MB body cost ~0.5 s on every runs-list call). The engine writes
    // {"effectId":…,"attempt":…,"response":{"status":NNN,… (fetch-step.ts), so the prefix holds it;
    // the CASE takes it only where the prefix proves it is response.status — a top-level key (no
    // `{` or `[` before it), the first "response", a 3-digit integer — and any other payload falls
    // back to json_extract, so the counts are those of the full parse. MATERIALIZED: evaluated
    // once per row, not once per reference to `head` (each reference re-read the whole value).
    responseStatuses: db
      .prepare<{ run: string; to: number }, [unknown, number]>(
        `WITH h AS MATERIALIZED (
           SELECT seq, substr(payload, 1, 512) AS head, instr(substr(payload, 1, 512), '"response":') AS p
             FROM reqon_events WHERE run_id = @run AND seq <= @to AND type = 'http.response')
         SELECT coalesce(
                  CASE WHEN p > 1 AND substr(head, 1, 1) = '{' AND substr(head, p - 1, 1) IN ('{', ',')
                        AND instr(substr(head, 1, p), '[') = 0 AND instr(substr(head, 2, p - 1), '{') = 0
                        AND substr(head, p + 11, 14) GLOB '{"status":[1-9][0-9][0-9][,}]'
                       THEN CAST(substr(head, p + 21, 3) AS INTEGER) END,
                  (SELECT json_extract(e.payload, '$.response.status') FROM reqon_events e WHERE e.run_id = @run AND e.seq = h.seq)),
                count(*)
           FROM h GROUP BY 1`,
      )
      .raw(true),
    // The bulk read path (read-events.ts). Chunks are seq ranges: `seq` is contiguous per run,
    // so a range of N seqs holds N events, and a range query needs neither a sorting subquery
    // nor a LIMIT. `eventsBounds` finds the first and last seq of the requested range (two
    // primary-key probes; min and max together in one SELECT would scan).
    eventsBounds: db
      .prepare<{ run: string; from: number; to: number }, [number | null, number | null]>(
        `SELECT (SELECT min(seq) FROM reqon_events WHERE run_id = @run AND seq >= @from AND seq <= @to),
                (SELECT max(seq) FROM reqon_events WHERE run_id = @run AND seq >= @from AND seq <= @to)`,
      )
      .raw(true),
    // A chunk's size before it is built (octet_length reads no text), and the base its
    // recorded_at values are sent relative to: the first event's (small numbers decode faster
    // than 13-digit ones; the reader checks every sum is a safe integer).
    eventsChunkSize: db
      .prepare<{ run: string; from: number; to: number }, [number, number | null, number | null]>(
        `SELECT count(*), sum(octet_length(type) + octet_length(step_path) + octet_length(payload)),
                (SELECT recorded_at FROM reqon_events WHERE run_id = @run AND seq = @from)
           FROM reqon_events WHERE run_id = @run AND seq >= @from AND seq <= @to`,
      )
      .raw(true),
    // The chunk as one text per column, each value copied once into its aggregate: payloads as a
    // JSON array body (they are JSON.stringify output, spliced verbatim: one JSON.parse gives what
    // a parse per row gives), seq and recorded_at as number lists, type and step_path joined by
    // NUL (no json_quote per row). All aggregates of one SELECT see the rows in the same order;
    // the reader checks the seq list for that order and every list for the chunk's count.
    // @base is bound as a BigInt: a JS number binds as REAL, and REAL text has 15 digits.
    eventsChunkColumns: db
      .prepare<{ run: string; from: number; to: number; base: bigint }, [string | null, string | null, string | null, string | null, string | null]>(
        `SELECT group_concat(seq), group_concat(type, char(0)), group_concat(step_path, char(0)), group_concat(payload), group_concat(recorded_at - @base)
           FROM reqon_events WHERE run_id = @run AND seq >= @from AND seq <= @to`,
      )
      .raw(true),
    // For a reader that reads payloads only when they are used (read-events.ts ChunkPayloads): the
    // chunk without them, in ONE statement — its count, the base of its recorded_at values (the
    // first event's: @from is always the seq of an event) and the other columns as lists, and the
    // size of its payloads (octet_length reads no text): when they are small enough, those of one
    // type are read later with no size check of their own. Without payloads the lists stay
    // small, so no size check comes first.
    eventsChunkWithoutPayloads: db
      .prepare<{ run: string; from: number; to: number }, [number, number | null, string | null, string | null, string | null, string | null, number | null]>(
        `SELECT count(*), (SELECT recorded_at FROM reqon_events WHERE run_id = @run AND seq = @from),
                group_concat(seq), group_concat(type, char(0)), group_concat(step_path, char(0)),
                group_concat(recorded_at - (SELECT recorded_at FROM reqon_events WHERE run_id = @run AND seq = @from)),
                sum(octet_length(payload))
           FROM reqon_events WHERE run_id = @run AND seq >= @from AND seq <= @to`,
      )
      .raw(true),
    // The payloads of a chunk's events of one type, when the first of them is used (read-events.ts
    // ChunkPayloads: a walk reads back a few types' payloads, a store's writes, never its markers):
    // their size, then — when small enough — all of their texts joined by NUL with the seqs to
    // check their order against (as eventsChunkColumns), else row by row. (The size is asked only
    // when the whole chunk's payloads are too big for one string.)
    eventsChunkPayloadBytes: db
      .prepare<{ run: string; from: number; to: number; type: string }, [number | null]>(
        `SELECT sum(octet_length(payload)) FROM reqon_events WHERE run_id = @run AND seq >= @from AND seq <= @to AND type = @type`,
      )
      .raw(true),
    eventsChunkPayloadList: db
      .prepare<{ run: string; from: number; to: number; type: string }, [string | null, string | null]>(
        `SELECT group_concat(seq), group_concat(payload, char(0)) FROM reqon_events WHERE run_id = @run AND seq >= @from AND seq <= @to AND type = @type`,
      )
      .raw(true),
    eventsChunkPayloads: db
      .prepare<{ run: string; from: number; to: number; type: string }, [number, string]>(
        `SELECT seq, payload FROM reqon_events WHERE run_id = @run AND seq >= @from AND seq <= @to AND type = @type ORDER BY seq`,
      )
      .raw(true),
    // The first seq after a gap (never seen in a log written by this engine; keeps reads exact
    // and bounded on any table contents).
    eventsNextSeq: db
      .prepare<{ run: string; after: number; to: number }, number | null>(
        'SELECT min(seq) FROM reqon_events WHERE run_id = @run AND seq > @after AND seq <= @to',
      )
      .pluck(true),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
