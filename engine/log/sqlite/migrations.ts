/**
 * The log's schema, as numbered migrations against `PRAGMA user_version`.
 *
 * Migration N brings the schema from version N-1 to N. They run in one IMMEDIATE transaction, so
 * several processes opening a fresh file at once migrate it exactly once. A migration, once
 * released, is never edited: add a new one. Our tables are prefixed `reqon_`; store tables
 * (sql/nosql stores) live in the same file under the mission's names, never `reqon_*`.
 */
import { LogVersionError } from '../errors.js';
import type Database from 'better-sqlite3';

export const MIGRATIONS: readonly string[] = [
  // 1: runs, their append-only events.
  `
  CREATE TABLE reqon_runs (
    run_id            TEXT PRIMARY KEY,
    mission           TEXT NOT NULL,
    mission_hash      TEXT NOT NULL,
    mission_files     TEXT NOT NULL,          -- JSON MissionFiles
    options           TEXT NOT NULL,          -- JSON RunOptions
    status            TEXT NOT NULL CHECK (status IN ('running', 'suspended', 'completed', 'failed')),
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    last_seq          INTEGER NOT NULL,       -- seq of the newest event; the next append uses last_seq + 1
    owner             TEXT,                   -- lease holder, NULL when nobody owns the run
    lease_epoch       INTEGER NOT NULL,       -- fencing token: bumped by every acquire
    lease_expires_at  INTEGER,
    wake_at           INTEGER,                -- due instant of a suspended run's timer
    waiting_on        TEXT                    -- CAS token of a suspended run ('pause:<id>', …)
  ) STRICT;

  CREATE INDEX reqon_runs_by_created ON reqon_runs (created_at DESC, run_id);
  CREATE INDEX reqon_runs_by_status ON reqon_runs (status, created_at DESC);
  CREATE INDEX reqon_runs_suspended_due ON reqon_runs (wake_at) WHERE status = 'suspended';
  CREATE INDEX reqon_runs_running_lease ON reqon_runs (lease_expires_at) WHERE status = 'running';

  -- seq comes from reqon_runs.last_seq, bumped in the same transaction (see statements.ts).
  CREATE TABLE reqon_events (
    run_id       TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    type         TEXT NOT NULL,
    step_path    TEXT NOT NULL,
    payload      TEXT NOT NULL,              -- JSON
    recorded_at  INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
  ) STRICT, WITHOUT ROWID;

  CREATE TRIGGER reqon_events_append_only_update BEFORE UPDATE ON reqon_events
  BEGIN SELECT RAISE(ABORT, 'reqon_events is append-only: events are never updated'); END;
  CREATE TRIGGER reqon_events_append_only_delete BEFORE DELETE ON reqon_events
  BEGIN SELECT RAISE(ABORT, 'reqon_events is append-only: events are never deleted'); END;
  `,
  // 2: the webhook inbox, and the index behind `lastSync` (latest checkpoint per mission and key).
  `
  -- A delivery is committed here before its sender gets a 2xx, whether or not a run waits yet.
  -- (path, event_id) is the delivery's identity: a sender's retry is the same row. A waiting run
  -- claims a delivery in the transaction that records it as 'webhook.received'.
  CREATE TABLE reqon_webhook_inbox (
    path          TEXT NOT NULL,
    event_id      TEXT NOT NULL,
    payload       TEXT NOT NULL,              -- JSON
    received_at   INTEGER NOT NULL,
    claimed_run   TEXT,
    claimed_wait  TEXT,
    PRIMARY KEY (path, event_id)
  ) STRICT;
  CREATE INDEX reqon_webhook_unclaimed ON reqon_webhook_inbox (path, received_at) WHERE claimed_run IS NULL;

  CREATE INDEX reqon_events_checkpoints ON reqon_events (type) WHERE type = 'checkpoint.advanced';
  `,
  // 3: schedules registered by workers, and their firings (see schedule-tables.ts).
  `
  -- One row per mission name. next_fire_at is the compare-and-set token of a firing: the worker
  -- that moves it from the due instant to the following one (in the transaction that creates the
  -- run) owns that firing. NULL: nothing left to fire (an \`at\` schedule that fired).
  CREATE TABLE reqon_schedules (
    mission        TEXT PRIMARY KEY,
    spec           TEXT NOT NULL,            -- JSON ScheduleSpec
    spec_hash      TEXT NOT NULL,            -- re-registering the same spec keeps next_fire_at
    mission_hash   TEXT NOT NULL,
    mission_files  TEXT NOT NULL,            -- JSON MissionFiles
    options        TEXT NOT NULL,            -- JSON RunOptions
    next_fire_at   INTEGER,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX reqon_schedules_due ON reqon_schedules (next_fire_at) WHERE next_fire_at IS NOT NULL;

  -- (mission, due_at, attempt) is a firing's identity: attempt 0 is the firing, n its nth retry.
  -- The primary key makes a second claim of the same firing fail, whatever the race.
  CREATE TABLE reqon_schedule_firings (
    mission    TEXT NOT NULL,
    due_at     INTEGER NOT NULL,
    attempt    INTEGER NOT NULL,
    fired_at   INTEGER NOT NULL,
    outcome    TEXT NOT NULL CHECK (outcome IN ('started', 'skipped')),
    run_id     TEXT,                         -- the run it started (NULL when skipped)
    reason     TEXT,                         -- why it was skipped
    missed     INTEGER NOT NULL,             -- ticks missed before it (downtime), coalesced into it
    PRIMARY KEY (mission, due_at, attempt)
  ) STRICT;
  CREATE INDEX reqon_schedule_firings_run ON reqon_schedule_firings (run_id) WHERE run_id IS NOT NULL;
  `,
  // 4: a signed delivery's id is bound to the first path it reached (webhook-security.ts).
  `
  CREATE INDEX reqon_webhook_event_id ON reqon_webhook_inbox (event_id);
  `,
  // 5: retention (`reqon prune`, sqlite/retention.ts). A pruned run's row is deleted first, in the
  // transaction that queues it here; its events then go a chunk at a time, and the delete trigger
  // lets an event go only when its run is queued here — so no event of a run that still has its
  // row (one that can resume) is ever deleted.
  `
  CREATE TABLE reqon_pruned_runs (
    run_id      TEXT PRIMARY KEY,
    pruned_at   INTEGER NOT NULL,
    last_seq    INTEGER NOT NULL,             -- the run's events are seqs 1..last_seq
    deleted_to  INTEGER NOT NULL              -- seqs 1..deleted_to are deleted already
  ) STRICT;

  DROP TRIGGER reqon_events_append_only_delete;
  CREATE TRIGGER reqon_events_append_only_delete BEFORE DELETE ON reqon_events
  WHEN NOT EXISTS (SELECT 1 FROM reqon_pruned_runs WHERE run_id = OLD.run_id)
  BEGIN SELECT RAISE(ABORT, 'reqon_events is append-only: events are deleted only with their whole run, by reqon prune'); END;
  CREATE TRIGGER reqon_pruned_runs_row_gone BEFORE INSERT ON reqon_pruned_runs
  WHEN EXISTS (SELECT 1 FROM reqon_runs WHERE run_id = NEW.run_id)
  BEGIN SELECT RAISE(ABORT, 'a run is queued for pruning only in the transaction that deletes its row'); END;
  CREATE TRIGGER reqon_runs_not_being_pruned BEFORE INSERT ON reqon_runs
  WHEN EXISTS (SELECT 1 FROM reqon_pruned_runs WHERE run_id = NEW.run_id)
  BEGIN SELECT RAISE(ABORT, 'this run id is of a pruned run whose events are still being deleted: run reqon prune again to finish, or use another id'); END;

  CREATE INDEX reqon_runs_finished ON reqon_runs (updated_at, run_id) WHERE status IN ('completed', 'failed');
  CREATE INDEX reqon_webhook_claimed ON reqon_webhook_inbox (claimed_run) WHERE claimed_run IS NOT NULL;
  `,
  // 6: which runs logged a failed step (the runs list's "completed with failures" filter over
  // 100k runs, run-query.ts): a partial index holds only step.failed rows, so a clean run costs
  // it nothing and a write of any other event only the test of its type.
  `
  CREATE INDEX reqon_events_step_failed ON reqon_events (run_id) WHERE type = 'step.failed';
  `,
  // 7: the few events of each run its summary reads one by one (events.ts SUMMARY_EVENT_TYPES):
  // \`reqon show\` and the runs list read them through this index, not every row of a long run.
  `
  CREATE INDEX reqon_events_summary ON reqon_events (run_id, seq)
    WHERE type IN ('run.started', 'step.failed', 'run.resumed', 'run.suspended', 'pause.created', 'wait.registered', 'pause.resumed', 'wait.completed', 'run.completed', 'run.failed');
  `,
  // 8: the same index with its WHERE as ORed comparisons. SQLite evaluates a partial index's WHERE
  // on every insert, and 7's IN list cost the store-step write rate a sixth (medians of 4 passes of
  // 100 runs × 10 at a time: 14.2k effects/s with it, 17.4k without the two partial indexes, 16.8k
  // with this form, on a shared machine); why IN costs that much more was not traced.
  `
  DROP INDEX reqon_events_summary;
  CREATE INDEX reqon_events_summary ON reqon_events (run_id, seq)
    WHERE type = 'run.started'
       OR type = 'step.failed'
       OR type = 'run.resumed'
       OR type = 'run.suspended'
       OR type = 'pause.created'
       OR type = 'wait.registered'
       OR type = 'pause.resumed'
       OR type = 'wait.completed'
       OR type = 'run.completed'
       OR type = 'run.failed';
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the database to SCHEMA_VERSION; refuses a database written by a newer engine. */
export function migrate(db: Database.Database): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    const current = db.pragma('user_version', { simple: true }) as number;
    if (current > SCHEMA_VERSION) {
      throw new LogVersionError(current, SCHEMA_VERSION);
    }
    for (let version = current + 1; version <= SCHEMA_VERSION; version++) {
      db.exec(MIGRATIONS[version - 1]!);
      db.pragma(`user_version = ${version}`);
    }
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}
