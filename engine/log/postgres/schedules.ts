/**
 * Schedules and their firings on PostgreSQL (the tables of sqlite/schedule-tables.ts).
 *
 * Invariant: a firing and its run are created in ONE transaction. The schedule's row is locked
 * first (`SELECT … FOR UPDATE`), so workers firing the same schedule on many connections take
 * turns: the compare-and-set of next_fire_at (attempt 0) or the firing's primary key (retries)
 * decides the winner, and the concurrency limits are counted while no one else can start a run
 * of the schedule.
 */
import type { PoolClient } from 'pg';
import type { StoredEvent } from '../events.js';
import type { FireOutcome, FireRequest, NewSchedule, RetryCandidate, ScheduleFiring, ScheduleRecord, ScheduleSpec } from '../log.js';
import { checkInstant, describe, prepareEvent, storedFrom, type PreparedEvent } from '../rows.js';
import { insertEvents, insertRun } from './run-sql.js';

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

export async function upsertSchedule(client: PoolClient, s: NewSchedule): Promise<ScheduleRecord> {
  checkSchedule(s);
  const { rows } = await client.query<ScheduleRow>('SELECT * FROM reqon_schedules WHERE mission = $1 FOR UPDATE', [s.mission]);
  const current = rows[0];
  // Same spec: keep the firing position (a restart must neither re-arm an `at` nor skip a tick).
  const next = current !== undefined && current.spec_hash === s.specHash ? current.next_fire_at : s.firstFireAt;
  const values = [s.mission, JSON.stringify(s.spec), s.specHash, s.missionHash, JSON.stringify(s.missionFiles), JSON.stringify(s.options), next];
  const written =
    current === undefined
      ? await client.query<ScheduleRow>(
          `INSERT INTO reqon_schedules (mission, spec, spec_hash, mission_hash, mission_files, options, next_fire_at, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
           ON CONFLICT (mission) DO UPDATE SET spec = EXCLUDED.spec, spec_hash = EXCLUDED.spec_hash, mission_hash = EXCLUDED.mission_hash,
             mission_files = EXCLUDED.mission_files, options = EXCLUDED.options, next_fire_at = EXCLUDED.next_fire_at,
             updated_at = greatest(reqon_schedules.updated_at, EXCLUDED.updated_at)
           RETURNING *`,
          [...values, s.at],
        )
      : await client.query<ScheduleRow>(
          `UPDATE reqon_schedules SET spec = $2, spec_hash = $3, mission_hash = $4, mission_files = $5, options = $6, next_fire_at = $7,
                  updated_at = greatest(updated_at, $8)
            WHERE mission = $1 RETURNING *`,
          [...values, s.at],
        );
  return toSchedule(written.rows[0]!);
}

export async function getSchedule(client: PoolClient, mission: string): Promise<ScheduleRecord | undefined> {
  const { rows } = await client.query<ScheduleRow>('SELECT * FROM reqon_schedules WHERE mission = $1', [mission]);
  return rows[0] === undefined ? undefined : toSchedule(rows[0]);
}

export async function removeSchedule(client: PoolClient, mission: string): Promise<boolean> {
  return ((await client.query('DELETE FROM reqon_schedules WHERE mission = $1', [mission])).rowCount ?? 0) === 1;
}

export async function listSchedules(client: PoolClient): Promise<ScheduleRecord[]> {
  const { rows } = await client.query<ScheduleRow>('SELECT * FROM reqon_schedules ORDER BY mission COLLATE "C"');
  return rows.map(toSchedule);
}

export async function scheduleFirings(client: PoolClient, mission: string, page?: { after?: { dueAt: number; attempt: number }; limit?: number }): Promise<ScheduleFiring[]> {
  // A page is a seek on the primary key (mission, due_at, attempt).
  const { rows } = await client.query<{
    mission: string; due_at: number; attempt: number; fired_at: number; outcome: 'started' | 'skipped'; run_id: string | null; reason: string | null; missed: number;
  }>(
    page === undefined
      ? 'SELECT * FROM reqon_schedule_firings WHERE mission = $1 ORDER BY due_at, attempt'
      : 'SELECT * FROM reqon_schedule_firings WHERE mission = $1 AND (due_at, attempt) > ($2, $3) ORDER BY due_at, attempt LIMIT $4',
    page === undefined ? [mission] : [mission, page.after?.dueAt ?? Number.MIN_SAFE_INTEGER, page.after?.attempt ?? -1, page.limit ?? null],
  );
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

export async function retryCandidates(client: PoolClient, mission: string, maxRetries: number): Promise<RetryCandidate[]> {
  if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) throw new Error(`retryCandidates: maxRetries must be a whole number ≥ 0 but got: ${describe(maxRetries)}`);
  const { rows } = await client.query<{ due_at: number; attempt: number; run_id: string; failed_at: number }>(
    `SELECT f.due_at, f.attempt, f.run_id, r.updated_at AS failed_at
       FROM reqon_schedule_firings f JOIN reqon_runs r ON r.run_id = f.run_id
      WHERE f.mission = $1 AND f.outcome = 'started' AND r.status = 'failed' AND f.attempt < $2
        AND NOT EXISTS (SELECT 1 FROM reqon_schedule_firings g
                         WHERE g.mission = f.mission AND g.due_at = f.due_at AND g.attempt = f.attempt + 1)
      ORDER BY f.due_at, f.attempt`,
    [mission, maxRetries],
  );
  return rows.map((r) => ({ dueAt: r.due_at, attempt: r.attempt, runId: r.run_id, failedAt: r.failed_at }));
}

/** Validation outside the transaction. */
export function prepareFire(request: FireRequest): PreparedEvent[] {
  if (typeof request?.mission !== 'string' || request.mission === '') throw new Error(`fireSchedule: mission must be a non-empty string but got: ${describe(request?.mission)}`);
  checkInstant(request.dueAt, 'fireSchedule: dueAt');
  checkInstant(request.firedAt, 'fireSchedule: firedAt');
  if (request.nextFireAt !== null) checkInstant(request.nextFireAt, 'fireSchedule: nextFireAt');
  if (!Number.isSafeInteger(request.attempt) || request.attempt < 0) throw new Error(`fireSchedule: attempt must be a whole number ≥ 0 but got: ${describe(request.attempt)}`);
  if (!Number.isSafeInteger(request.missed) || request.missed < 0) throw new Error(`fireSchedule: missed must be a whole number ≥ 0 but got: ${describe(request.missed)}`);
  if (request.run.mission !== request.mission) {
    throw new Error(`fireSchedule: the run is of mission '${request.run.mission}' but the schedule is '${request.mission}'`);
  }
  return request.first.map((e) => prepareEvent(e, `fireSchedule '${request.mission}'`));
}

/** Inside the group's transaction: claim, apply the limits, create the run. */
export async function fireSchedule(client: PoolClient, request: FireRequest, events: PreparedEvent[]): Promise<FireOutcome> {
  const { mission, dueAt, attempt } = request;
  const { rows } = await client.query<ScheduleRow>('SELECT * FROM reqon_schedules WHERE mission = $1 FOR UPDATE', [mission]);
  const current = rows[0];
  if (current === undefined) return { outcome: 'taken' };
  if (attempt === 0) {
    if (current.next_fire_at !== dueAt) return { outcome: 'taken' };
    await client.query('UPDATE reqon_schedules SET next_fire_at = $2, updated_at = greatest(updated_at, $3) WHERE mission = $1', [
      mission,
      request.nextFireAt,
      request.firedAt,
    ]);
  } else {
    const exists = await client.query('SELECT 1 FROM reqon_schedule_firings WHERE mission = $1 AND due_at = $2 AND attempt = $3', [mission, dueAt, attempt]);
    if (exists.rowCount !== 0) return { outcome: 'taken' };
  }
  const spec = JSON.parse(current.spec) as ScheduleSpec;
  const counted = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM reqon_schedule_firings f JOIN reqon_runs r ON r.run_id = f.run_id
      WHERE f.mission = $1 AND r.status IN ('running', 'suspended')`,
    [mission],
  );
  const active = counted.rows[0]!.n;
  const blocked =
    spec.skipIfRunning === true && active > 0
      ? ('skip-if-running' as const)
      : spec.maxConcurrency !== undefined && active >= spec.maxConcurrency
        ? ('max-concurrency' as const)
        : undefined;
  const insertFiring = (outcome: 'started' | 'skipped', runId: string | null, reason: string | null) =>
    client.query(
      `INSERT INTO reqon_schedule_firings (mission, due_at, attempt, fired_at, outcome, run_id, reason, missed)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (mission, due_at, attempt) DO NOTHING`,
      [mission, dueAt, attempt, request.firedAt, outcome, runId, reason, request.missed],
    );
  if (blocked !== undefined) {
    // A retry waits for room; a tick that finds no room is consumed (that is what skipping means).
    if (attempt > 0) return { outcome: 'deferred', reason: blocked, active };
    await insertFiring('skipped', null, blocked);
    return { outcome: 'skipped', reason: blocked, active };
  }
  const { run } = request;
  if ((await insertFiring('started', run.runId, null)).rowCount !== 1) return { outcome: 'taken' };
  const expiresAt = await insertRun(client, run, request.owner, request.ttlMs, events.length);
  await insertEvents(client, run.runId, 1, events);
  const stored: StoredEvent[] = events.map((event, index) => storedFrom(run.runId, index + 1, event));
  return { outcome: 'started', lease: { runId: run.runId, owner: request.owner, epoch: 1, expiresAt }, events: stored };
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

/** Inserts firings recorded elsewhere (`reqon log copy`) inside the caller's transaction; a duplicate fails it. */
export async function restoreFirings(client: PoolClient, firings: readonly ScheduleFiring[]): Promise<void> {
  for (const f of firings) {
    checkInstant(f.dueAt, 'restoreFirings: dueAt');
    checkInstant(f.firedAt, 'restoreFirings: firedAt');
  }
  for (const f of firings) {
    await client.query(
      `INSERT INTO reqon_schedule_firings (mission, due_at, attempt, fired_at, outcome, run_id, reason, missed)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [f.mission, f.dueAt, f.attempt, f.firedAt, f.outcome, f.runId, f.reason, f.missed],
    );
  }
}
