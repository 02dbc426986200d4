/**
 * Schedules (§B.8): `schedule: every N unit | cron "…" | at "…"` with `timezone`,
 * `maxConcurrency`, `skipIfRunning` and `retry`, run by `reqon worker`.
 *
 * Missions given to a worker register their schedule in the log (upsert by mission name, with
 * the mission's files and hash, so every worker on the database can fire it). Every worker fires
 * what is due: a firing is claimed in the SAME transaction that creates its run (the log's
 * `fireSchedule`: a compare-and-set on next_fire_at, a (mission, due, attempt) primary key), so
 * exactly one run starts per firing however many workers race, and a crash cannot lose a firing
 * that was claimed or claim one without its run. Due instants are rows, never in-memory timers.
 *
 * After downtime the missed ticks are coalesced: the schedule fires ONCE for the oldest missed
 * instant, records how many ticks it swallowed (`missed`), says so, and moves on to the first
 * instant after now — never a burst.
 */
import { cronFieldsProblem } from '../lang/check-values.js';
import { atInstant, zoneOffsetMs } from '../lang/zone-time.js';
import { createHash } from 'node:crypto';
import { Cron } from 'croner';
import { SCHEDULE_UNIT_MS, type Schedule } from '../lang/ast.js';
import { prepareNewRun, modelFor, missionHash, type EngineDeps } from '../executor/run-mission.js';
import type { EventLog, Lease, MissionFiles, RunOptions, ScheduleRecord, ScheduleSpec } from '../log/log.js';

/** Retry defaults of the language (§B.8) when a `retry { }` block leaves a field out. */
export const DEFAULT_SCHEDULE_RETRIES = 3;
export const DEFAULT_SCHEDULE_RETRY_DELAY_S = 60;

/** Past this many missed cron ticks we stop counting one by one and jump to now. */
const MAX_COUNTED_MISSES = 10_000;

/** A mission has no schedule, or a schedule the worker cannot use. */
export class ScheduleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScheduleError';
  }
}

/** The stored form of a mission's `schedule:` (the `at` instant resolved in its time zone). */
export function scheduleSpecOf(schedule: Schedule): ScheduleSpec {
  const timezone = schedule.timezone?.value;
  const t = schedule.trigger;
  let trigger: ScheduleSpec['trigger'];
  switch (t.kind) {
    case 'every':
      trigger = { kind: 'every', everyMs: t.amount * SCHEDULE_UNIT_MS[t.unit] };
      break;
    case 'cron':
      trigger = { kind: 'cron', expression: t.expression.value };
      break;
    case 'at':
      trigger = { kind: 'at', at: parseAt(t.when.value, timezone ?? 'UTC') };
      break;
    default: {
      const never: never = t;
      throw new ScheduleError(`unknown schedule trigger ${JSON.stringify(never)}`);
    }
  }
  return {
    trigger,
    ...(timezone !== undefined ? { timezone } : {}),
    ...(schedule.maxConcurrency !== undefined ? { maxConcurrency: schedule.maxConcurrency } : {}),
    ...(schedule.skipIfRunning !== undefined ? { skipIfRunning: schedule.skipIfRunning } : {}),
    ...(schedule.retry
      ? { retry: { maxRetries: schedule.retry.maxRetries ?? DEFAULT_SCHEDULE_RETRIES, delaySeconds: schedule.retry.delaySeconds ?? DEFAULT_SCHEDULE_RETRY_DELAY_S } }
      : {}),
  };
}

/** Changes to these fields re-arm the schedule; limits and retries apply without re-arming. */
export function specHash(spec: ScheduleSpec): string {
  return createHash('sha256').update(JSON.stringify({ trigger: spec.trigger, timezone: spec.timezone ?? null })).digest('hex');
}

const crons = new Map<string, Cron>();

function cronFor(expression: string, timezone: string | undefined): Cron {
  const key = `${timezone ?? ''}\u0000${expression}`;
  let cron = crons.get(key);
  if (!cron) {
    const fields = cronFieldsProblem(expression);
    if (fields !== undefined) throw new ScheduleError(`invalid cron expression "${expression}": ${fields}`);
    try {
      cron = new Cron(expression, { paused: true, ...(timezone ? { timezone } : {}) });
    } catch (e) {
      throw new ScheduleError(`invalid cron expression "${expression}": ${(e as Error).message.replace(/^CronPattern:\s*/, '')}`);
    }
    crons.set(key, cron);
  }
  return cron;
}

/**
 * When clocks go back, the local times of the hour before repeat. A schedule whose hour is a
 * wildcard or a range (`*\/15 * * * *`, `0 * * * *`, `*\/15 0-5 * * *`) fires through both passes, by real time;
 * croner skipped one pass or both (helper 75: New York's `*\/15` went from 05:45Z to 07:00Z, four
 * firings lost without a word). A schedule at a fixed hour (`30 1 * * *`) fires in the first pass
 * only, as croner gives it. So for a wildcard hour (or where croner answered nothing after
 * `after`) the next firing is the earliest of croner's and of the pattern read at each UTC offset
 * the zone has at `after` and at that firing, where the zone really has that offset then.
 */
function atRealOffsets(expression: string, zone: string, after: number, zoned: number | null): number | null {
  let best = zoned;
  // The offsets the zone has now, at croner's answer, and a day on (where croner answered none).
  const offsets = new Set([offsetAt(zone, after), offsetAt(zone, zoned ?? after + DAY_AHEAD_MS)]);
  for (const offset of offsets) {
    // The pattern read at this offset, from `after` on, until it lands where the zone has it:
    // read at the offset after a change, it first lands before the change (Lord Howe's half hour).
    let from = after;
    for (let tries = 0; tries < MAX_OFFSET_TRIES; tries++) {
      const at = cronAtOffset(expression, offset).nextRun(new Date(from))?.getTime();
      if (at === undefined || (best !== null && at >= best)) break;
      if (offsetAt(zone, at) === offset) {
        best = at;
        break;
      }
      from = at;
    }
  }
  return best;
}

const DAY_AHEAD_MS = 26 * 3600 * 1000;
/** Landings tried per offset: a minute pattern crosses a change of up to two hours in fewer. */
const MAX_OFFSET_TRIES = 150;

/**
 * The hour field names more than fixed hours — `*`, `*\/N`, a range `0-5` (with or without a
 * step): the schedule fires through hours as they pass, wherever the clock stands; `1` or `1,13`
 * are fixed times (helper 76: `*\/15 0-5 * * *` lost the repeated hour's firings).
 */
function hourIsWildcard(expression: string): boolean {
  const text = expression.trim();
  // A nickname: `@hourly` is every hour, `@daily`, `@weekly`… a fixed midnight.
  if (text.startsWith('@')) return text === '@hourly';
  return !/^\d+(,\d+)*$/.test(text.split(/\s+/)[1] ?? '');
}

const offsetCrons = new Map<string, Cron>();

function cronAtOffset(expression: string, minutesEast: number): Cron {
  const key = `${minutesEast}\u0000${expression}`;
  let cron = offsetCrons.get(key);
  if (!cron) {
    cron = new Cron(expression, { paused: true, utcOffset: minutesEast });
    offsetCrons.set(key, cron);
  }
  return cron;
}

/** The zone's offset from UTC at `ms`, in minutes east. */
function offsetAt(zone: string, ms: number): number {
  return Math.round(zoneOffsetMs(zone, ms) / 60_000);
}

/** The first due instant strictly after `after`, or null when the schedule never fires again. */
export function nextFireAfter(spec: ScheduleSpec, after: number): number | null {
  const t = spec.trigger;
  switch (t.kind) {
    case 'every':
      return after + t.everyMs;
    case 'cron': {
      // UTC unless the schedule names a zone: the same mission fires at the same instants on every machine.
      const zone = spec.timezone ?? 'UTC';
      const next = cronFor(t.expression, zone).nextRun(new Date(after));
      const zoned = next === null ? null : next.getTime();
      if (zone === 'UTC') return zoned;
      // Inside a repeated hour croner may answer an instant before `after`: never one of ours.
      const ahead = zoned !== null && zoned > after ? zoned : null;
      return hourIsWildcard(t.expression) || ahead === null ? atRealOffsets(t.expression, zone, after, ahead) : ahead;
    }
    case 'at':
      return t.at > after ? t.at : null;
    default: {
      const never: never = t;
      throw new ScheduleError(`unknown schedule trigger ${JSON.stringify(never)}`);
    }
  }
}

/** Where a newly registered schedule starts: the next tick after `now`; an `at` keeps its instant even if past (it fires once). */
export function firstFireAt(spec: ScheduleSpec, now: number): number | null {
  return spec.trigger.kind === 'at' ? spec.trigger.at : nextFireAfter(spec, now);
}

/**
 * The firing due at `due`, seen at `now`: how many later ticks (<= now) it swallows, and the
 * first instant after now (the next firing). `every` keeps its phase: due + k·interval.
 */
export function coalesce(spec: ScheduleSpec, due: number, now: number): { next: number | null; missed: number; atLeast?: true } {
  const t = spec.trigger;
  if (t.kind === 'every') {
    const missed = now > due ? Math.floor((now - due) / t.everyMs) : 0;
    return { next: due + (missed + 1) * t.everyMs, missed };
  }
  let next = nextFireAfter(spec, due);
  let missed = 0;
  while (next !== null && next <= now) {
    missed++;
    // Counted no further: `missed` is then a lower bound, and said so (it read as exact).
    if (missed >= MAX_COUNTED_MISSES) return { next: nextFireAfter(spec, now), missed, atLeast: true };
    next = nextFireAfter(spec, next);
  }
  return { next, missed };
}

export function describeSchedule(spec: ScheduleSpec): string {
  const t = spec.trigger;
  const when =
    t.kind === 'every' ? `every ${t.everyMs} ms` : t.kind === 'cron' ? `cron "${t.expression}" (${spec.timezone ?? 'UTC'})` : `at ${new Date(t.at).toISOString()}`;
  const limits = [
    spec.skipIfRunning ? 'skipIfRunning' : '',
    spec.maxConcurrency !== undefined ? `maxConcurrency ${spec.maxConcurrency}` : '',
    spec.retry ? `retry ${spec.retry.maxRetries}× after ${spec.retry.delaySeconds} s` : '',
  ].filter((s) => s !== '');
  return limits.length > 0 ? `${when}, ${limits.join(', ')}` : when;
}

/**
 * Registers the mission's schedule (upsert by mission name). Throws MissionInvalidError when the
 * mission does not check, ScheduleError when it has no schedule.
 */
export async function registerSchedule(log: EventLog, files: MissionFiles, options: RunOptions, now: number): Promise<ScheduleRecord> {
  const model = modelFor(files);
  const schedules = model.mission.schedules ?? [];
  const schedule = schedules[schedules.length - 1]; // the last one wins (§B.2)
  const name = model.mission.name.name;
  if (!schedule) throw new ScheduleError(`mission "${name}" (${files.entry}) has no \`schedule:\`; add one, e.g. \`schedule: every 1 hours\`, or start it with \`reqon run\``);
  const spec = scheduleSpecOf(schedule);
  if (spec.trigger.kind === 'cron') cronFor(spec.trigger.expression, spec.timezone ?? 'UTC');
  return log.upsertSchedule({
    mission: name,
    spec,
    specHash: specHash(spec),
    missionHash: missionHash(files),
    missionFiles: files,
    options,
    firstFireAt: firstFireAt(spec, now),
    at: now,
  });
}

/** A run a firing (or a retry) just created, owned by the caller's lease: execute it. */
export interface FiredRun {
  mission: string;
  runId: string;
  lease: Lease;
  dueAt: number;
  attempt: number;
  missed: number;
}

/**
 * One pass over the registered schedules: retries whose delay is up, then firings that are due.
 * Creates at most `room` runs and returns them for the caller to execute. With `dueBy`, only
 * what was due by that instant fires (a `--once` pass: what was due when it started), so a
 * schedule that comes due again while its run goes on cannot keep the pass alive.
 */
export async function fireDueSchedules(log: EventLog, deps: EngineDeps, room: number, dueBy?: number): Promise<FiredRun[]> {
  const fired: FiredRun[] = [];
  const progress = deps.progress ?? (() => {});
  for (const schedule of await log.listSchedules()) {
    if (fired.length >= room) break;
    try {
      await fireOne(log, deps, schedule, room, fired, dueBy);
    } catch (error) {
      // One broken schedule (a mission this engine no longer accepts) must not starve the others.
      progress(`schedule ${schedule.mission}: cannot fire: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return fired;
}

async function fireOne(log: EventLog, deps: EngineDeps, schedule: ScheduleRecord, room: number, fired: FiredRun[], dueBy: number | undefined): Promise<void> {
  const progress = deps.progress ?? (() => {});
  const { spec, mission } = schedule;
  const now = deps.env.clock.now();
  // What may fire: due by now, and by `dueBy` when given. Missed ticks are still counted to now.
  const cutoff = dueBy === undefined ? now : Math.min(now, dueBy);
  if (spec.retry) {
    for (const failed of await log.retryCandidates(mission, spec.retry.maxRetries)) {
      if (fired.length >= room || failed.failedAt + spec.retry.delaySeconds * 1000 > cutoff) continue;
      const run = await fire(log, deps, schedule, failed.dueAt, failed.attempt + 1, null, 0);
      if (run) {
        progress(`schedule ${mission}: run ${failed.runId} failed; retry ${run.attempt} of ${spec.retry.maxRetries} → run ${run.runId}`);
        fired.push(run);
      }
    }
  }
  const due = schedule.nextFireAt;
  if (fired.length >= room || due === null || due > cutoff) return;
  const { next, missed, atLeast } = coalesce(spec, due, now);
  const run = await fire(log, deps, schedule, due, 0, next, missed);
  if (!run) return;
  // The firing is for the oldest missed tick; the ticks after it up to now ride on it.
  const late = missed > 0 ? ` (and for the ${missed}${atLeast ? ' or more' : ''} tick(s) after it missed until ${new Date(now).toISOString()}, coalesced into this one firing)` : '';
  progress(`schedule ${mission}: fired for ${new Date(due).toISOString()}${late} → run ${run.runId}; next ${next === null ? 'never' : new Date(next).toISOString()}`);
  fired.push(run);
}

async function fire(
  log: EventLog,
  deps: EngineDeps,
  schedule: ScheduleRecord,
  dueAt: number,
  attempt: number,
  nextFireAt: number | null,
  missed: number,
): Promise<FiredRun | undefined> {
  const prepared = prepareNewRun(schedule.missionFiles, schedule.options, deps, false, { scheduled: true });
  const outcome = await log.fireSchedule({
    mission: schedule.mission,
    dueAt,
    attempt,
    nextFireAt,
    missed,
    firedAt: deps.env.clock.now(),
    run: prepared.run,
    first: prepared.first,
    owner: prepared.owner,
    ttlMs: prepared.ttlMs,
  });
  switch (outcome.outcome) {
    case 'started':
      return { mission: schedule.mission, runId: prepared.run.runId, lease: outcome.lease, dueAt, attempt, missed };
    case 'skipped':
      deps.progress?.(
        `schedule ${schedule.mission}: skipped the firing for ${new Date(dueAt).toISOString()} (${outcome.reason}: ${outcome.active} run(s) running or suspended)`,
      );
      return undefined;
    case 'deferred':
    case 'taken':
      return undefined;
    default: {
      const never: never = outcome;
      throw new Error(`unknown firing outcome ${JSON.stringify(never)}`);
    }
  }
}

/** `at "…"`: an instant with `Z` or an offset as written; without one, wall time in `timezone`. */
export function parseAt(text: string, timezone: string): number {
  const instant = atInstant(text, timezone);
  if (instant === undefined) throw new ScheduleError(`schedule at "${text}" is not an ISO-8601 date-time such as "2025-06-01T09:00:00Z"`);
  return instant;
}
