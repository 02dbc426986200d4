/**
 * `reqon log copy`: moves a whole log to another one (SQLite file → PostgreSQL, or back), through
 * the log contract alone, so it works between any two backends.
 *
 * What is copied, in this order: the webhook inbox (every delivery, claimed or not); the
 * schedules; every sql/nosql store table, row by row in its order (`restoreTable`), rows written
 * by runs since pruned included — tables before runs, so that a run a worker on the target takes
 * over as soon as its copy ends writes on top of them; each run (oldest first) with its events and
 * their seqs — created through `createRun` with its `run.started`, the rest appended (its
 * `store.write` events as the events they are: their rows came with the tables) under a lease with
 * the status it had, and the lease then dropped (a running run is left for a worker to take over);
 * each run's inbox claims, in its last commit; the schedules' firings.
 *
 * Then verified, never assumed: run count, every run's row (status, wait, mission, last seq) and
 * every event (seq, type, step path, instant, payload) compared one by one, delivery, schedule
 * and firing counts, and every table's rows. The first difference is the error.
 *
 * Refused: a source with a run under a live lease (a worker is running it: stop the workers
 * first, or the copy would race them), and a target that already holds runs, schedules or
 * deliveries unless `append` (a run id already there is then an error, before anything is
 * written for that run).
 */
import { isDeepStrictEqual } from 'node:util';
import type { NewEvent, StoredEvent } from '../log/events.js';
import type { CommitEntry, EventLog, RunRecord, StoreTableRef, StoredDelivery } from '../log/log.js';

/** The copier's lease owner: not `host:pid:nonce`, so no worker ever presumes it dead. */
export const COPY_OWNER = 'reqon-log-copy';
/** Long enough that a copy that died mid-run leaves that run visibly owned, never taken over half-copied. */
const COPY_TTL_MS = 7 * 86_400_000;
/** Events per commit while a run is copied (the last commit carries its status and drops the lease). */
const CHUNK = 2000;
/** Rows per transaction while a table is copied. */
const TABLE_CHUNK = 2000;

export class LogCopyError extends Error {
  override readonly name = 'LogCopyError';
}

export interface CopyReport {
  runs: number;
  events: number;
  deliveries: number;
  schedules: number;
  firings: number;
  tables: (StoreTableRef & { rows: number })[];
}

export interface CopyOptions {
  append?: boolean;
  /** The instant that decides whether a source lease is still live. */
  now: number;
  progress?: (line: string) => void;
}

export async function copyLog(from: EventLog, to: EventLog, opts: CopyOptions): Promise<CopyReport> {
  const progress = opts.progress ?? (() => {});
  const runs = (await from.listRuns()).reverse();
  const live = runs.find((r) => r.owner !== null && (r.leaseExpiresAt ?? 0) > opts.now);
  if (live) {
    throw new LogCopyError(
      `run ${live.runId} is owned by ${live.owner} until ${new Date(live.leaseExpiresAt!).toISOString()}: stop the workers on the source log before copying it (a copy would race them)`,
    );
  }
  const deliveries = await from.allDeliveries();
  const schedules = await from.listSchedules();
  if (!opts.append) {
    const [run] = await to.listRuns({ limit: 1 });
    const [schedule] = await to.listSchedules();
    const [delivery] = await to.allDeliveries();
    if (run || schedule || delivery) {
      const what = run ? `run ${run.runId}` : schedule ? `the schedule of ${schedule.mission}` : `a webhook delivery on ${delivery!.path}`;
      throw new LogCopyError(`the target log is not empty (it holds ${what}); copy into an empty log, or pass --append to add to it`);
    }
  }

  for (const d of deliveries) {
    const outcome = await to.deliverWebhook(d.path, d.eventId, d.payload, d.receivedAt);
    if (outcome !== 'accepted') throw new LogCopyError(`webhook delivery ${d.eventId} on ${d.path} is already in the target log`);
  }
  progress(`copied ${deliveries.length} webhook deliveries`);
  for (const s of schedules) {
    if (await to.getSchedule(s.mission)) throw new LogCopyError(`the target log already has a schedule for ${s.mission}`);
    const { nextFireAt, createdAt, updatedAt: _updated, ...definition } = s;
    await to.upsertSchedule({ ...definition, firstFireAt: nextFireAt, at: createdAt });
  }
  progress(`copied ${schedules.length} schedules`);

  const tables = await from.listTables();
  for (const t of tables) {
    const rows = await from.readTable(t.storeKind, t.table);
    for (let at = 0; at < rows.length; at += TABLE_CHUNK) await to.restoreTable(t.storeKind, t.table, rows.slice(at, at + TABLE_CHUNK));
    progress(`copied ${t.storeKind} table ${t.table} (${rows.length} rows)`);
  }

  const claims = new Map<string, StoredDelivery[]>();
  for (const d of deliveries) if (d.claimedRun !== null) claims.set(d.claimedRun, [...(claims.get(d.claimedRun) ?? []), d]);
  let events = 0;
  for (const [i, run] of runs.entries()) {
    events += await copyRun(from, to, run, claims.get(run.runId) ?? []);
    if ((i + 1) % 50 === 0 || i === runs.length - 1) progress(`copied ${i + 1}/${runs.length} runs (${events} events)`);
  }

  let firings = 0;
  for (const s of schedules) {
    const all = await from.scheduleFirings(s.mission);
    if (all.length > 0) await to.restoreFirings(all);
    firings += all.length;
  }
  progress(`copied ${firings} schedule firings; verifying`);

  return verifyCopy(from, to, { runs, deliveries: deliveries.length, schedules: schedules.length, firings, tables, append: opts.append === true });
}

async function copyRun(from: EventLog, to: EventLog, run: RunRecord, claimed: StoredDelivery[]): Promise<number> {
  if (await to.getRun(run.runId)) throw new LogCopyError(`run ${run.runId} is already in the target log`);
  const all = await from.read(run.runId);
  const [first, ...rest] = all;
  if (!first || first.type !== 'run.started') throw new LogCopyError(`run ${run.runId} does not start with run.started; not copied`);
  if (all.length !== run.lastSeq || all.some((e, i) => e.seq !== i + 1)) {
    throw new LogCopyError(`run ${run.runId}: the source log's seqs are not 1..${run.lastSeq} (read ${all.length} events); not copied`);
  }
  const { lease } = await to.createRun(
    { runId: run.runId, mission: run.mission, missionHash: run.missionHash, missionFiles: run.missionFiles, options: run.options, createdAt: run.createdAt },
    COPY_OWNER,
    COPY_TTL_MS,
    [asNew(first)],
  );
  const entries: CommitEntry[] = rest.map((event) => ({ kind: 'event', event: asNew(event) }));
  for (const d of claimed) entries.push({ kind: 'claim-webhook', path: d.path, eventId: d.eventId, waitId: d.claimedWait ?? '' });
  for (let at = 0; ; at += CHUNK) {
    const last = at + CHUNK >= entries.length;
    await to.commit(lease, entries.slice(at, at + CHUNK), {
      durable: last,
      returnEvents: false,
      ...(last ? { status: { status: run.status, wakeAt: run.wakeAt, waitingOn: run.waitingOn, releaseLease: true } } : {}),
    });
    if (last) break;
  }
  return all.length;
}

function asNew(event: StoredEvent): NewEvent {
  return { type: event.type, stepPath: event.stepPath, payload: event.payload, recordedAt: event.recordedAt } as NewEvent;
}

/** Reads the target back and compares it with the source; throws at the first difference. */
async function verifyCopy(
  from: EventLog,
  to: EventLog,
  copied: { runs: RunRecord[]; deliveries: number; schedules: number; firings: number; tables: StoreTableRef[]; append: boolean },
): Promise<CopyReport> {
  const fail = (what: string) => {
    throw new LogCopyError(`verification failed: ${what}`);
  };
  let events = 0;
  for (const source of copied.runs) {
    const target = await to.getRun(source.runId);
    if (!target) fail(`run ${source.runId} is missing from the target`);
    for (const field of ['status', 'waitingOn', 'wakeAt', 'mission', 'missionHash', 'lastSeq', 'createdAt'] as const) {
      if (!isDeepStrictEqual(target![field], source[field])) fail(`run ${source.runId}: ${field} is ${JSON.stringify(target![field])} in the target, ${JSON.stringify(source[field])} in the source`);
    }
    if (target!.owner !== null) fail(`run ${source.runId} is still owned by ${target!.owner} in the target`);
    const a = await from.read(source.runId);
    const b = await to.read(source.runId);
    if (a.length !== b.length) fail(`run ${source.runId} has ${b.length} events in the target, ${a.length} in the source`);
    for (let i = 0; i < a.length; i++) {
      const x = a[i]!;
      const y = b[i]!;
      if (x.seq !== y.seq || x.type !== y.type || x.stepPath !== y.stepPath || x.recordedAt !== y.recordedAt || !isDeepStrictEqual(y.payload, x.payload)) {
        fail(`run ${source.runId}, seq ${x.seq} (${x.type}): the target holds seq ${y.seq} (${y.type} at ${y.stepPath}) with a different event`);
      }
    }
    events += a.length;
  }
  const targetRuns = (await to.listRuns()).length;
  const deliveries = (await to.allDeliveries()).length;
  const schedules = (await to.listSchedules()).length;
  const firings = (await Promise.all((await to.listSchedules()).map((s) => to.scheduleFirings(s.mission)))).flat().length;
  const tables: CopyReport['tables'] = [];
  for (const t of copied.tables) {
    const a = await from.readTable(t.storeKind, t.table);
    const b = await to.readTable(t.storeKind, t.table);
    // Appended to a target that had rows of its own: every source row must be there, as it is.
    const held = copied.append ? b.filter((row) => a.some((r) => r.key === row.key)) : b;
    if (!isDeepStrictEqual(held, a)) fail(`${t.storeKind} table ${t.table} holds ${held.length} of the source's rows in the target, ${a.length} in the source, or they differ`);
    tables.push({ ...t, rows: a.length });
  }
  // With --append the target held more before: what is counted there must at least include the copy.
  if (targetRuns < copied.runs.length) fail(`the target holds ${targetRuns} runs, fewer than the ${copied.runs.length} copied`);
  if (deliveries < copied.deliveries) fail(`the target holds ${deliveries} webhook deliveries, fewer than the ${copied.deliveries} copied`);
  if (schedules < copied.schedules || firings < copied.firings) fail(`the target holds ${schedules} schedules and ${firings} firings, fewer than the ${copied.schedules} and ${copied.firings} copied`);
  return { runs: copied.runs.length, events, deliveries: copied.deliveries, schedules: copied.schedules, firings: copied.firings, tables };
}
