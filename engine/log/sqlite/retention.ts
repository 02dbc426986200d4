/**
 * Retention on SQLite: the statements behind `prunableRuns`, `pruneRuns`, `deletePrunedEvents`
 * and `reclaimSpace` (the contract's RunRetention; engine/log/prune.ts drives them).
 *
 * A run is pruned in two steps. First its row goes, in a transaction that re-checks every rule
 * (`PRUNABLE`) and the caller's compare-and-set token (last_seq, lease_epoch) on the row itself,
 * and queues the run in `reqon_pruned_runs`; its claimed inbox deliveries go with it. Then its
 * events go a chunk at a time (`deletePrunedEvents`), each chunk a short transaction, so a run
 * of a million events never holds the write lock for long. The delete trigger of migration 5
 * refuses any event whose run is not queued, so an event of a run that can resume (whose row
 * exists) cannot be deleted, whatever calls what. Every method here runs synchronously inside
 * a transaction the caller (sqlite-log.ts) opened.
 */
import type Database from 'better-sqlite3';
import { IMPORTED_OWNER, type CheckpointMark, type DeletedEvents, type PrunableRun, type PruneQuery, type PrunedRuns, type SpaceReport } from '../log.js';
import { toPrunableRun, type PrunableRow } from '../rows.js';

/**
 * The rules a run must meet to be pruned, on `reqon_runs AS r`: finished, finished before
 * @before, under no live lease at @now (an imported run's never-expiring one is no process's), and not a failed scheduled run a retry still waits on
 * (a started firing with no next attempt yet, below its schedule's maxRetries — as
 * retryCandidates lists them).
 */
const PRUNABLE = `
  r.status IN ('completed', 'failed') AND r.updated_at < @before
  AND (r.owner IS NULL OR r.lease_expires_at <= @now OR r.owner = '${IMPORTED_OWNER}')
  AND NOT (r.status = 'failed' AND EXISTS (
    SELECT 1 FROM reqon_schedule_firings f JOIN reqon_schedules s ON s.mission = f.mission
     WHERE f.run_id = r.run_id AND f.outcome = 'started'
       AND f.attempt < coalesce(json_extract(s.spec, '$.retry.maxRetries'), 0)
       AND NOT EXISTS (SELECT 1 FROM reqon_schedule_firings g
                        WHERE g.mission = f.mission AND g.due_at = f.due_at AND g.attempt = f.attempt + 1)))`;


/** Pruned runs whose events are taken per deletePrunedEvents call, at most. */
const QUEUE_WINDOW = 100;
/** Pages an incremental vacuum gives back per transaction (8 MiB of 4 KiB pages). */
const VACUUM_STEP_PAGES = 2048;

function prepare(db: Database.Database) {
  return {
    prunable: db.prepare<{ before: number; now: number; after_at: number | null; after_id: string; limit: number }, PrunableRow & { checkpoints: string }>(`
      SELECT r.run_id, r.mission, r.status, r.updated_at, r.last_seq, r.lease_epoch,
             (SELECT json_group_array(json_array(json_extract(e.payload, '$.key'), json_extract(e.payload, '$.syncedAt'), json_extract(e.payload, '$.api')))
                FROM reqon_events e INDEXED BY reqon_events_checkpoints
               WHERE e.type = 'checkpoint.advanced' AND e.run_id = r.run_id AND r.owner IS NOT '${IMPORTED_OWNER}'
                 -- Only a checkpoint that counts (as checkpointMarks below): one a failure followed keeps nothing.
                 AND r.status = 'completed'
                 AND NOT EXISTS (SELECT 1 FROM reqon_events f WHERE f.run_id = e.run_id AND f.type = 'step.failed' AND f.seq > e.seq)
                 AND NOT EXISTS (SELECT 1 FROM reqon_events s WHERE s.run_id = e.run_id AND s.seq = 1 AND json_extract(s.payload, '$.forkedFrom.imported') = 1 AND json_extract(s.payload, '$.forkedFrom.atSeq') >= e.seq)) AS checkpoints
        FROM reqon_runs r INDEXED BY reqon_runs_finished
       WHERE ${PRUNABLE}
         AND (@after_at IS NULL OR r.updated_at > @after_at OR (r.updated_at = @after_at AND r.run_id > @after_id))
       ORDER BY r.updated_at, r.run_id
       LIMIT @limit`),
    queuedPruned: db.prepare<[], { runs: number; events: number }>('SELECT count(*) AS runs, coalesce(sum(last_seq - deleted_to), 0) AS events FROM reqon_pruned_runs'),
    // Per API as well as key: lastCheckpoint reads only the checkpoints of the API a run fetches from.
    checkpointMarks: db.prepare<[], { mission: string; key: string; api: string | null; synced: number }>(`
      SELECT r.mission, json_extract(e.payload, '$.key') AS key, json_extract(e.payload, '$.api') AS api,
             max(json_extract(e.payload, '$.syncedAt')) AS synced
        FROM reqon_events e INDEXED BY reqon_events_checkpoints JOIN reqon_runs r ON r.run_id = e.run_id
       WHERE e.type = 'checkpoint.advanced' AND r.status = 'completed' AND r.owner IS NOT '${IMPORTED_OWNER}'
         AND NOT EXISTS (SELECT 1 FROM reqon_events f WHERE f.run_id = e.run_id AND f.type = 'step.failed' AND f.seq > e.seq)
         AND NOT EXISTS (SELECT 1 FROM reqon_events s WHERE s.run_id = e.run_id AND s.seq = 1 AND json_extract(s.payload, '$.forkedFrom.imported') = 1 AND json_extract(s.payload, '$.forkedFrom.atSeq') >= e.seq)
       GROUP BY r.mission, key, api`),
    deleteRun: db.prepare<{ run_id: string; last_seq: number; epoch: number; before: number; now: number }, { bytes: number }>(`
      DELETE FROM reqon_runs AS r
       WHERE r.run_id = @run_id AND r.last_seq = @last_seq AND r.lease_epoch = @epoch AND ${PRUNABLE}
      RETURNING octet_length(mission_files) + octet_length(options) + octet_length(run_id) AS bytes`),
    queue: db.prepare<{ run_id: string; at: number; last_seq: number }>(
      'INSERT INTO reqon_pruned_runs (run_id, pruned_at, last_seq, deleted_to) VALUES (@run_id, @at, @last_seq, 0)',
    ),
    deleteClaimed: db.prepare<[string], { bytes: number }>(
      'DELETE FROM reqon_webhook_inbox WHERE claimed_run = ? RETURNING octet_length(payload) + octet_length(path) + octet_length(event_id) AS bytes',
    ),
    queued: db.prepare<[number], { run_id: string; last_seq: number; deleted_to: number }>(
      'SELECT run_id, last_seq, deleted_to FROM reqon_pruned_runs ORDER BY pruned_at, run_id LIMIT ?',
    ),
    eventBytes: db.prepare<[string, number, number], { n: number; bytes: number }>(`
      SELECT count(*) AS n, coalesce(sum(octet_length(type) + octet_length(step_path) + octet_length(payload)), 0) AS bytes
        FROM reqon_events WHERE run_id = ? AND seq > ? AND seq <= ?`),
    deleteEvents: db.prepare<[string, number, number]>('DELETE FROM reqon_events WHERE run_id = ? AND seq > ? AND seq <= ?'),
    advance: db.prepare<[number, string]>('UPDATE reqon_pruned_runs SET deleted_to = ? WHERE run_id = ?'),
    done: db.prepare<[string]>('DELETE FROM reqon_pruned_runs WHERE run_id = ?'),
    anyQueued: db.prepare<[], { one: number }>('SELECT 1 AS one FROM reqon_pruned_runs LIMIT 1'),
  };
}

export class RetentionTables {
  private readonly sql: ReturnType<typeof prepare>;

  constructor(private readonly db: Database.Database) {
    this.sql = prepare(db);
  }

  prunable(query: PruneQuery): PrunableRun[] {
    const rows = this.sql.prunable.all({
      before: query.finishedBefore,
      now: query.now,
      after_at: query.after?.updatedAt ?? null,
      after_id: query.after?.runId ?? '',
      limit: query.limit,
    });
    return rows.map((r) => toPrunableRun(r, JSON.parse(r.checkpoints) as [string, number, string | null][]));
  }

  checkpointMarks(): CheckpointMark[] {
    return this.sql.checkpointMarks.all().map((r) => ({ mission: r.mission, key: r.key, ...(r.api === null ? {} : { api: r.api }), syncedAt: r.synced }));
  }

  queuedPrunedEvents(): { runs: number; events: number } {
    return this.sql.queuedPruned.get()!;
  }

  /** Inside the caller's write transaction. */
  pruneRuns(runs: readonly PrunableRun[], before: number, now: number, prunedAt: number): PrunedRuns {
    const out: PrunedRuns = { runIds: [], deliveries: 0, bytes: 0 };
    for (const run of runs) {
      const gone = this.sql.deleteRun.get({ run_id: run.runId, last_seq: run.lastSeq, epoch: run.leaseEpoch, before, now });
      if (gone === undefined) continue;
      this.sql.queue.run({ run_id: run.runId, at: prunedAt, last_seq: run.lastSeq });
      const claimed = this.sql.deleteClaimed.all(run.runId);
      out.runIds.push(run.runId);
      out.deliveries += claimed.length;
      out.bytes += gone.bytes + claimed.reduce((n, c) => n + c.bytes, 0);
    }
    return out;
  }

  /** Inside the caller's write transaction. */
  deletePrunedEvents(maxEvents: number): DeletedEvents {
    const out: DeletedEvents = { events: 0, bytes: 0, runsDone: 0, left: false };
    for (const q of this.sql.queued.all(QUEUE_WINDOW)) {
      const budget = maxEvents - out.events;
      if (budget <= 0) break;
      const to = Math.min(q.last_seq, q.deleted_to + budget);
      const { n, bytes } = this.sql.eventBytes.get(q.run_id, q.deleted_to, to)!;
      this.sql.deleteEvents.run(q.run_id, q.deleted_to, to);
      out.events += n;
      out.bytes += bytes;
      if (to >= q.last_seq) {
        this.sql.done.run(q.run_id);
        out.runsDone++;
      } else {
        this.sql.advance.run(to, q.run_id);
      }
    }
    out.left = this.sql.anyQueued.get() !== undefined;
    return out;
  }

  /** The file's pages: in use, free, and how SQLite gives free ones back. */
  pages(): { pageSize: number; pageCount: number; freePages: number; autoVacuum: 'none' | 'full' | 'incremental' } {
    const mode = this.db.pragma('auto_vacuum', { simple: true }) as number;
    return {
      pageSize: this.db.pragma('page_size', { simple: true }) as number,
      pageCount: this.db.pragma('page_count', { simple: true }) as number,
      freePages: this.db.pragma('freelist_count', { simple: true }) as number,
      autoVacuum: mode === 1 ? 'full' : mode === 2 ? 'incremental' : 'none',
    };
  }

  /** One step of an incremental vacuum, inside the caller's write transaction; pages given back. */
  incrementalVacuumStep(): number {
    const before = this.db.pragma('page_count', { simple: true }) as number;
    this.db.pragma(`incremental_vacuum(${VACUUM_STEP_PAGES})`);
    return before - (this.db.pragma('page_count', { simple: true }) as number);
  }

  /**
   * Rewrites the file (VACUUM) with incremental auto-vacuum turned on, so every later prune
   * gives its pages back as it goes. Outside any transaction; holds the write lock throughout.
   */
  vacuumIntoIncremental(): void {
    this.db.pragma('auto_vacuum = INCREMENTAL');
    // VACUUM builds its copy of the whole database in temp storage: on disk, never in memory (the
    // log's connection keeps its statement journals in memory, sqlite-log.ts).
    this.db.pragma('temp_store = FILE');
    try {
      this.db.exec('VACUUM');
    } finally {
      this.db.pragma('temp_store = MEMORY');
    }
  }

  static report(before: { pageSize: number; pageCount: number }, after: ReturnType<RetentionTables['pages']>, vacuumed: boolean, walHeld = false): SpaceReport {
    const given =
      after.autoVacuum === 'none'
        ? `SQLite reuses the free pages for new writes; \`reqon prune --vacuum\` gives it back to the file system and turns on incremental auto-vacuum, so later prunes shrink the file as they go (it rewrites the whole file holding the write lock: run it while no worker writes)`
        : vacuumed
          ? `the file was rewritten (VACUUM) with incremental auto-vacuum on: later prunes give their pages back as they go`
          : `auto-vacuum is ${after.autoVacuum}: freed pages were given back to the file system as the prune went`;
    // Said as it is on disk: the log's WAL holds the change until a checkpoint can write it back.
    const note = walHeld && after.autoVacuum !== 'none' ? `${given}, but another process was reading the log, so the files shrink at a later checkpoint (the WAL holds the change until then)` : given;
    return {
      storedBytes: after.pageCount * after.pageSize,
      freeBytes: after.freePages * after.pageSize,
      shrunkBytes: Math.max(0, (before.pageCount - after.pageCount) * before.pageSize),
      note,
    };
  }
}
