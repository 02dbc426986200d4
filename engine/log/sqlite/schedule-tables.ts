/**
 * Schedules and their firings on SQLite (tables of migration 3).
 *
 * Records: `reqon_schedules` (one row per mission: spec, mission files, next_fire_at) and
 * `reqon_schedule_firings` (one row per (mission, due_at, attempt)). Writers: any worker.
 * Invariant: a firing and its run are created in ONE transaction — the compare-and-set of
 * next_fire_at (attempt 0) or the insert of the firing's primary key (retries) decides the
 * winner, the run row and its first events land with it — so however many workers race, a
 * firing starts at most one run, and a crash between claiming and creating cannot happen.
 * The concurrency limits (maxConcurrency, skipIfRunning) are counted inside that transaction.
 */
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../events.js';
import type { FireOutcome, FireRequest, NewSchedule, RetryCandidate, ScheduleFiring, ScheduleRecord, ScheduleSpec } from '../log.js';
import { checkFiringsPage } from '../checks.js';
import { checkInstant, describe, prepareEvent, storedFrom } from '../rows.js';
import type { Statements } from './statements.js';

interface ScheduleRow {
  mission: string;
  spec: string;
  spec_hash: string;
  mission_hash: string;
  mission_files: string;
  options: string;
  next_fire_at: number | null;
  created_at: number;
  updated_at: number;
}

interface FiringRow {
  mission: string;
  due_at: number;
  attempt: number;
  fired_at: number;
  outcome: 'started' | 'skipped';
  run_id: string | null;
  reason: string | null;
  missed: number;
}

function prepare(db: Database.Database) {
  return {
    get: db.prepare<[string], ScheduleRow>('SELECT * FROM reqon_schedules WHERE mission = ?'),
    list: db.prepare<[], ScheduleRow>('SELECT * FROM reqon_schedules ORDER BY mission'),
    remove: db.prepare<[string]>('DELETE FROM reqon_schedules WHERE mission = ?'),
    insert: db.prepare<Omit<ScheduleRow, 'updated_at'>>(`
      INSERT INTO reqon_schedules (mission, spec, spec_hash, mission_hash, mission_files, options, next_fire_at, created_at, updated_at)
      VALUES (@mission, @spec, @spec_hash, @mission_hash, @mission_files, @options, @next_fire_at, @created_at, @created_at)`),
    update: db.prepare<Omit<ScheduleRow, 'created_at'>>(`
      UPDATE reqon_schedules SET spec = @spec, spec_hash = @spec_hash, mission_hash = @mission_hash, mission_files = @mission_files,
             options = @options, next_fire_at = @next_fire_at, updated_at = @updated_at
       WHERE mission = @mission`),
    // The firing's compare-and-set: only the worker that still sees `due` as next moves it on.
    advance: db.prepare<{ mission: string; due: number; next: number | null; at: number }>(`
      UPDATE reqon_schedules SET next_fire_at = @next, updated_at = max(updated_at, @at)
       WHERE mission = @mission AND next_fire_at = @due`),
    insertFiring: db.prepare<FiringRow>(`
      INSERT INTO reqon_schedule_firings (mission, due_at, attempt, fired_at, outcome, run_id, reason, missed)
      VALUES (@mission, @due_at, @attempt, @fired_at, @outcome, @run_id, @reason, @missed)
      ON CONFLICT (mission, due_at, attempt) DO NOTHING`),
    firingExists: db.prepare<{ mission: string; due_at: number; attempt: number }, { one: number }>(
      'SELECT 1 AS one FROM reqon_schedule_firings WHERE mission = @mission AND due_at = @due_at AND attempt = @attempt',
    ),
    active: db.prepare<[string], { n: number }>(`
      SELECT count(*) AS n FROM reqon_schedule_firings f JOIN reqon_runs r ON r.run_id = f.run_id
       WHERE f.mission = ? AND r.status IN ('running', 'suspended')`),
    firings: db.prepare<[string], FiringRow>('SELECT * FROM reqon_schedule_firings WHERE mission = ? ORDER BY due_at, attempt'),
    // A keyset page: a seek on the primary key (mission, due_at, attempt).
    firingsPage: db.prepare<{ mission: string; due_at: number; attempt: number; limit: number }, FiringRow>(`
      SELECT * FROM reqon_schedule_firings
       WHERE mission = @mission AND (due_at, attempt) > (@due_at, @attempt)
       ORDER BY due_at, attempt LIMIT @limit`),
    retryCandidates: db.prepare<{ mission: string; max: number }, { due_at: number; attempt: number; run_id: string; failed_at: number }>(`
      SELECT f.due_at, f.attempt, f.run_id, r.updated_at AS failed_at
        FROM reqon_schedule_firings f JOIN reqon_runs r ON r.run_id = f.run_id
       WHERE f.mission = @mission AND f.outcome = 'started' AND r.status = 'failed' AND f.attempt < @max
         AND NOT EXISTS (SELECT 1 FROM reqon_schedule_firings g
                          WHERE g.mission = f.mission AND g.due_at = f.due_at AND g.attempt = f.attempt + 1)
       ORDER BY f.due_at, f.attempt`),
  };
}

export class ScheduleTables {
  private readonly sql: ReturnType<typeof prepare>;

  constructor(db: Database.Database) {
    this.sql = prepare(db);
  }

  /** Runs inside a write transaction. */
  upsert(s: NewSchedule): ScheduleRecord {
    checkSchedule(s);
    const current = this.sql.get.get(s.mission);
    const row = {
      mission: s.mission,
      spec: JSON.stringify(s.spec),
      spec_hash: s.specHash,
      mission_hash: s.missionHash,
      mission_files: JSON.stringify(s.missionFiles),
      options: JSON.stringify(s.options),
      // Same spec: keep the firing position (a restart must neither re-arm an `at` nor skip a tick).
      next_fire_at: current !== undefined && current.spec_hash === s.specHash ? current.next_fire_at : s.firstFireAt,
    };
    if (current === undefined) this.sql.insert.run({ ...row, created_at: s.at });
    else this.sql.update.run({ ...row, updated_at: Math.max(current.updated_at, s.at) });
    return toSchedule(this.sql.get.get(s.mission)!);
  }

  get(mission: string): ScheduleRecord | undefined {
    const row = this.sql.get.get(mission);
    return row === undefined ? undefined : toSchedule(row);
  }

  list(): ScheduleRecord[] {
    return this.sql.list.all().map(toSchedule);
  }

  remove(mission: string): boolean {
    return this.sql.remove.run(mission).changes === 1;
  }

  firings(mission: string, page?: { after?: { dueAt: number; attempt: number }; limit?: number }): ScheduleFiring[] {
    checkFiringsPage(page);
    const rows =
      page === undefined
        ? this.sql.firings.all(mission)
        : this.sql.firingsPage.all({ mission, due_at: page.after?.dueAt ?? Number.MIN_SAFE_INTEGER, attempt: page.after?.attempt ?? -1, limit: page.limit ?? -1 });
    return rows.map((r) => ({
      mission: r.mission,
      dueAt: r.due_at,
      attempt: r.attempt,
      firedAt: r.fired_at,
      outcome: r.outcome,
      runId: r.run_id,
      reason: r.reason,
      missed: r.missed,
    }));
  }

  retryCandidates(mission: string, maxRetries: number): RetryCandidate[] {
    if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) throw new Error(`retryCandidates: maxRetries must be a whole number ≥ 0 but got: ${describe(maxRetries)}`);
    return this.sql.retryCandidates.all({ mission, max: maxRetries }).map((r) => ({ dueAt: r.due_at, attempt: r.attempt, runId: r.run_id, failedAt: r.failed_at }));
  }

  /** Validation outside the transaction, so the write lock is held only for the SQL. */
  static prepareFire(request: FireRequest): { events: ReturnType<typeof prepareEvent>[] } {
    if (typeof request?.mission !== 'string' || request.mission === '') throw new Error(`fireSchedule: mission must be a non-empty string but got: ${describe(request?.mission)}`);
    checkInstant(request.dueAt, 'fireSchedule: dueAt');
    checkInstant(request.firedAt, 'fireSchedule: firedAt');
    if (request.nextFireAt !== null) checkInstant(request.nextFireAt, 'fireSchedule: nextFireAt');
    if (!Number.isSafeInteger(request.attempt) || request.attempt < 0) throw new Error(`fireSchedule: attempt must be a whole number ≥ 0 but got: ${describe(request.attempt)}`);
    if (!Number.isSafeInteger(request.missed) || request.missed < 0) throw new Error(`fireSchedule: missed must be a whole number ≥ 0 but got: ${describe(request.missed)}`);
    if (request.run.mission !== request.mission) {
      throw new Error(`fireSchedule: the run is of mission '${request.run.mission}' but the schedule is '${request.mission}'`);
    }
    return { events: request.first.map((e) => prepareEvent(e, `fireSchedule '${request.mission}'`)) };
  }

  /** Runs inside a write transaction: claim, apply the limits, create the run. */
  fire(runs: Statements, request: FireRequest, events: ReturnType<typeof prepareEvent>[]): FireOutcome {
    const { mission, dueAt, attempt } = request;
    const current = this.sql.get.get(mission);
    if (current === undefined) return { outcome: 'taken' };
    if (attempt === 0) {
      if (this.sql.advance.run({ mission, due: dueAt, next: request.nextFireAt, at: request.firedAt }).changes !== 1) return { outcome: 'taken' };
    } else if (this.sql.firingExists.get({ mission, due_at: dueAt, attempt }) !== undefined) {
      return { outcome: 'taken' };
    }
    const spec = JSON.parse(current.spec) as ScheduleSpec;
    const active = this.sql.active.get(mission)!.n;
    const blocked =
      spec.skipIfRunning === true && active > 0
        ? ('skip-if-running' as const)
        : spec.maxConcurrency !== undefined && active >= spec.maxConcurrency
          ? ('max-concurrency' as const)
          : undefined;
    const firing = { mission, due_at: dueAt, attempt, fired_at: request.firedAt, missed: request.missed };
    if (blocked !== undefined) {
      // A retry waits for room; a tick that finds no room is consumed (that is what skipping means).
      if (attempt > 0) return { outcome: 'deferred', reason: blocked, active };
      this.sql.insertFiring.run({ ...firing, outcome: 'skipped', run_id: null, reason: blocked });
      return { outcome: 'skipped', reason: blocked, active };
    }
    const { run } = request;
    if (runs.runExists.get(run.runId) !== undefined) {
      throw new Error(`run '${run.runId}' already exists in this log; run ids must be unique — generate a new one`);
    }
    if (this.sql.insertFiring.run({ ...firing, outcome: 'started', run_id: run.runId, reason: null }).changes !== 1) return { outcome: 'taken' };
    const expiresAt = run.createdAt + request.ttlMs;
    runs.insertRun.run({
      run_id: run.runId,
      mission: run.mission,
      mission_hash: run.missionHash,
      mission_files: JSON.stringify(run.missionFiles),
      options: JSON.stringify(run.options),
      created_at: run.createdAt,
      last_seq: events.length,
      owner: request.owner,
      lease_expires_at: expiresAt,
    });
    const stored: StoredEvent[] = events.map((event, index) => {
      runs.insertEvent.run(run.runId, index + 1, event.type, event.stepPath, event.payloadJson, event.recordedAt);
      return storedFrom(run.runId, index + 1, event);
    });
    return { outcome: 'started', lease: { runId: run.runId, owner: request.owner, epoch: 1, expiresAt }, events: stored };
  }
}

function checkSchedule(s: NewSchedule): void {
  if (typeof s?.mission !== 'string' || s.mission === '') throw new Error(`upsertSchedule: mission must be a non-empty string but got: ${describe(s?.mission)}`);
  checkInstant(s.at, `upsertSchedule '${s.mission}': at`);
  if (s.firstFireAt !== null) checkInstant(s.firstFireAt, `upsertSchedule '${s.mission}': firstFireAt`);
  const kind = (s.spec?.trigger as { kind?: unknown } | undefined)?.kind;
  if (kind !== 'every' && kind !== 'cron' && kind !== 'at') {
    throw new Error(`upsertSchedule '${s.mission}': the trigger must be 'every', 'cron' or 'at' but got: ${describe(kind)}`);
  }
}

function toSchedule(row: ScheduleRow): ScheduleRecord {
  return {
    mission: row.mission,
    spec: JSON.parse(row.spec) as ScheduleSpec,
    specHash: row.spec_hash,
    missionHash: row.mission_hash,
    missionFiles: JSON.parse(row.mission_files) as ScheduleRecord['missionFiles'],
    options: JSON.parse(row.options) as ScheduleRecord['options'],
    nextFireAt: row.next_fire_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
