/**
 * The PostgreSQL log's schema, as numbered migrations recorded in `reqon_schema_version`.
 *
 * Migration N brings the schema from version N-1 to N. They run in one transaction under
 * `pg_advisory_xact_lock(MIGRATION_LOCK)`, so several processes opening a fresh database at once
 * migrate it exactly once: the others wait for the lock, then find the version current. A
 * migration, once released, is never edited: add a new one. The tables are those of the SQLite
 * log (engine/log/README.md), with BIGINT instants and TEXT JSON (the exact text the engine
 * wrote: jsonb would reorder keys). Store tables live beside them under the mission's names.
 */
import type { PoolClient } from 'pg';
import { LogVersionError } from '../errors.js';

/** The advisory lock key of migrations (any fixed bigint; "reqon" in ASCII). */
const MIGRATION_LOCK = 0x7265716f6e;

export const MIGRATIONS: readonly string[] = [
  // 1: everything the SQLite log has at its version 4, in one step.
  `
  CREATE TABLE reqon_runs (
    run_id            TEXT PRIMARY KEY,
    mission           TEXT NOT NULL,
    mission_hash      TEXT NOT NULL,
    mission_files     TEXT NOT NULL,
    options           TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('running', 'suspended', 'completed', 'failed')),
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    last_seq          BIGINT NOT NULL,       -- the seq allocator: bumped under the row lock of the appending transaction
    owner             TEXT,
    lease_epoch       BIGINT NOT NULL,       -- fencing token: bumped by every acquire
    lease_expires_at  BIGINT,                -- epoch ms by the DATABASE's clock (reqon_now_ms())
    wake_at           BIGINT,
    waiting_on        TEXT
  );
  CREATE INDEX reqon_runs_by_created ON reqon_runs (created_at DESC, run_id);
  CREATE INDEX reqon_runs_by_status ON reqon_runs (status, created_at DESC);
  CREATE INDEX reqon_runs_suspended_due ON reqon_runs (wake_at) WHERE status = 'suspended';
  CREATE INDEX reqon_runs_running_lease ON reqon_runs (lease_expires_at) WHERE status = 'running';

  CREATE TABLE reqon_events (
    run_id       TEXT NOT NULL,
    seq          BIGINT NOT NULL,
    type         TEXT NOT NULL,
    step_path    TEXT NOT NULL,
    payload      TEXT NOT NULL,
    recorded_at  BIGINT NOT NULL,
    PRIMARY KEY (run_id, seq)
  );
  CREATE INDEX reqon_events_checkpoints ON reqon_events (type) WHERE type = 'checkpoint.advanced';

  CREATE FUNCTION reqon_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'reqon_events is append-only: events are never updated or deleted';
  END $$;
  CREATE TRIGGER reqon_events_append_only BEFORE UPDATE OR DELETE ON reqon_events
    FOR EACH ROW EXECUTE FUNCTION reqon_events_append_only();
  CREATE TRIGGER reqon_events_no_truncate BEFORE TRUNCATE ON reqon_events
    FOR EACH STATEMENT EXECUTE FUNCTION reqon_events_append_only();

  -- The database's clock in epoch milliseconds: leases are judged by it, never by a worker's.
  CREATE FUNCTION reqon_now_ms() RETURNS BIGINT LANGUAGE sql VOLATILE AS $$
    SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint
  $$;

  CREATE TABLE reqon_webhook_inbox (
    path          TEXT NOT NULL,
    event_id      TEXT NOT NULL,
    payload       TEXT NOT NULL,
    received_at   BIGINT NOT NULL,
    claimed_run   TEXT,
    claimed_wait  TEXT,
    PRIMARY KEY (path, event_id)
  );
  CREATE INDEX reqon_webhook_unclaimed ON reqon_webhook_inbox (path, received_at) WHERE claimed_run IS NULL;
  CREATE INDEX reqon_webhook_event_id ON reqon_webhook_inbox (event_id);

  CREATE TABLE reqon_schedules (
    mission        TEXT PRIMARY KEY,
    spec           TEXT NOT NULL,
    spec_hash      TEXT NOT NULL,
    mission_hash   TEXT NOT NULL,
    mission_files  TEXT NOT NULL,
    options        TEXT NOT NULL,
    next_fire_at   BIGINT,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
  );
  CREATE INDEX reqon_schedules_due ON reqon_schedules (next_fire_at) WHERE next_fire_at IS NOT NULL;

  CREATE TABLE reqon_schedule_firings (
    mission    TEXT NOT NULL,
    due_at     BIGINT NOT NULL,
    attempt    INTEGER NOT NULL,
    fired_at   BIGINT NOT NULL,
    outcome    TEXT NOT NULL CHECK (outcome IN ('started', 'skipped')),
    run_id     TEXT,
    reason     TEXT,
    missed     INTEGER NOT NULL,
    PRIMARY KEY (mission, due_at, attempt)
  );
  CREATE INDEX reqon_schedule_firings_run ON reqon_schedule_firings (run_id) WHERE run_id IS NOT NULL;
  `,
  // 2: retention, as the SQLite log's version 5 (`reqon prune`, postgres/retention.ts): a pruned
  // run's row is deleted in the transaction that queues it in reqon_pruned_runs; an event may be
  // deleted only when its run is queued there (checked once per DELETE statement).
  `
  CREATE TABLE reqon_pruned_runs (
    run_id      TEXT PRIMARY KEY,
    pruned_at   BIGINT NOT NULL,
    last_seq    BIGINT NOT NULL,
    deleted_to  BIGINT NOT NULL
  );

  DROP TRIGGER reqon_events_append_only ON reqon_events;
  CREATE TRIGGER reqon_events_append_only BEFORE UPDATE ON reqon_events
    FOR EACH ROW EXECUTE FUNCTION reqon_events_append_only();
  CREATE FUNCTION reqon_events_deleted_only_when_pruned() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF EXISTS (SELECT 1 FROM reqon_deleted_events d WHERE NOT EXISTS (SELECT 1 FROM reqon_pruned_runs p WHERE p.run_id = d.run_id)) THEN
      RAISE EXCEPTION 'reqon_events is append-only: events are deleted only with their whole run, by reqon prune';
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER reqon_events_deleted_only_when_pruned AFTER DELETE ON reqon_events
    REFERENCING OLD TABLE AS reqon_deleted_events
    FOR EACH STATEMENT EXECUTE FUNCTION reqon_events_deleted_only_when_pruned();

  CREATE FUNCTION reqon_pruned_runs_row_gone() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF EXISTS (SELECT 1 FROM reqon_runs WHERE run_id = NEW.run_id) THEN
      RAISE EXCEPTION 'a run is queued for pruning only in the transaction that deletes its row';
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER reqon_pruned_runs_row_gone BEFORE INSERT ON reqon_pruned_runs
    FOR EACH ROW EXECUTE FUNCTION reqon_pruned_runs_row_gone();
  CREATE FUNCTION reqon_runs_not_being_pruned() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF EXISTS (SELECT 1 FROM reqon_pruned_runs WHERE run_id = NEW.run_id) THEN
      RAISE EXCEPTION 'this run id is of a pruned run whose events are still being deleted: run reqon prune again to finish, or use another id';
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER reqon_runs_not_being_pruned BEFORE INSERT ON reqon_runs
    FOR EACH ROW EXECUTE FUNCTION reqon_runs_not_being_pruned();

  CREATE INDEX reqon_runs_finished ON reqon_runs (updated_at, run_id) WHERE status IN ('completed', 'failed');
  CREATE INDEX reqon_webhook_claimed ON reqon_webhook_inbox (claimed_run) WHERE claimed_run IS NOT NULL;
  `,
  // 3: a commit's update of its run row is HOT again (no index entry written, no dead index
  // tuple left per commit). Version 2 indexed updated_at, which every commit moves, and any
  // indexed column that changes — even one only in a partial index — forbids HOT. Retention
  // orders by finished_at instead: updated_at while the run is finished, NULL (so unchanged)
  // while it runs. The fill factor leaves the page room for the new row versions.
  `
  ALTER TABLE reqon_runs SET (fillfactor = 70);
  ALTER TABLE reqon_runs ADD COLUMN finished_at BIGINT
    GENERATED ALWAYS AS (CASE WHEN status IN ('completed', 'failed') THEN updated_at END) STORED;
  DROP INDEX reqon_runs_finished;
  CREATE INDEX reqon_runs_finished ON reqon_runs (finished_at, run_id) WHERE finished_at IS NOT NULL;
  `,
  // 4: which runs logged a failed step, as the SQLite log's version 6 (run-query.ts).
  `
  CREATE INDEX reqon_events_step_failed ON reqon_events (run_id) WHERE type = 'step.failed';
  `,
  // 5: the events a run's summary reads one by one, as the SQLite log's version 7.
  `
  CREATE INDEX reqon_events_summary ON reqon_events (run_id, seq)
    WHERE type IN ('run.started', 'step.failed', 'run.resumed', 'run.suspended', 'pause.created', 'wait.registered', 'pause.resumed', 'wait.completed', 'run.completed', 'run.failed');
  `,
  // 6: a store's table is named in lower case (table-store.ts, pgTableName): one table whatever
  // the case of the mission's name, as on SQLite. Store tables written before under a name with
  // capitals ("Orders") take their lower-case name; where that name is taken too ("Orders" and
  // "orders", two tables before, one now), nothing is renamed and the log is not opened: which
  // rows win is for the user to say.
  `
  DO $$
  DECLARE
    t record;
  BEGIN
    FOR t IN
      SELECT c.relname AS name FROM pg_class c
       WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
         AND c.relname <> lower(c.relname) AND lower(c.relname) NOT LIKE 'reqon\\_%'
         AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname IN ('_record', '_doc') AND NOT a.attisdropped)
       ORDER BY c.relname
    LOOP
      IF EXISTS (SELECT 1 FROM pg_class o WHERE o.relnamespace = current_schema()::regnamespace AND o.relname = lower(t.name)) THEN
        RAISE EXCEPTION 'store tables % and % are one table to this engine (a store''s table name is matched whatever its case, as on SQLite); merge the rows you want into % and drop %, or rename % (ALTER TABLE % RENAME TO …) and its store, then open the log again',
          quote_ident(t.name), quote_ident(lower(t.name)), quote_ident(lower(t.name)), quote_ident(t.name), quote_ident(t.name), quote_ident(t.name);
      END IF;
      EXECUTE format('ALTER TABLE %I RENAME TO %I', t.name, lower(t.name));
    END LOOP;
  END $$;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the database to SCHEMA_VERSION; refuses a database written by a newer engine (LogVersionError). */
export async function migrate(client: PoolClient): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS reqon_schema_version (version INTEGER NOT NULL)');
    const { rows } = await client.query<{ version: number }>('SELECT max(version) AS version FROM reqon_schema_version');
    const current = rows[0]?.version ?? 0;
    if (current > SCHEMA_VERSION) throw new LogVersionError(current, SCHEMA_VERSION);
    for (let version = current + 1; version <= SCHEMA_VERSION; version++) {
      await client.query(MIGRATIONS[version - 1]!);
      await client.query('INSERT INTO reqon_schema_version (version) VALUES ($1)', [version]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
