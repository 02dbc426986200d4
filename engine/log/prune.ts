/**
 * Pruning a log (`reqon prune`, `reqon worker --prune-completed-before`): whole finished runs
 * removed, through the log contract alone (RunRetention), so it is the same on every backend.
 *
 * What goes: a run that completed or failed before the horizon, under no live lease, whose
 * failure no schedule retry waits on — its row, every event (memory stores live in events, so
 * they go too) and the webhook deliveries it claimed. What stays: every run that can still
 * resume (running, suspended on a timer, a pause or a webhook wait: the log refuses to delete an
 * event of a run that has its row), sql/nosql store tables (shared by every run of a mission,
 * never a run's own), schedules and their firings (a firing keeps the id of the run it started),
 * unclaimed webhook deliveries (the inbox expires those), and — below — the runs that hold a
 * mission's latest checkpoint.
 *
 * Checkpoints: `since: lastSync` reads the newest checkpoint of a mission and key across its
 * runs, of the API the run fetches from (EventTable.lastCheckpoint: a run whose --source points
 * elsewhere reads that URL's). A run holding the newest one of a mission, key and API is kept, so
 * the next sync from that API carries on where its last one ended instead of starting over. The marks are read once, before
 * the first batch: a later checkpoint can only raise a mark, and its run is then kept for it.
 *
 * Work is in short transactions: a batch of run rows, then their events `batchEvents` at a time,
 * with a turn of the event loop between transactions, so a worker in the same process (and
 * writers in other processes) keep committing while a large log is pruned.
 */
import type { PrunableRun, RunRetention, SpaceReport } from './log.js';

export interface PruneOptions {
  /** Runs that finished (were last updated) before this instant may go. */
  finishedBefore: number;
  /** The clock that judges leases (PostgreSQL judges them by its own). */
  now: () => number;
  /** List what would go (onRun), delete nothing. */
  dryRun?: boolean;
  /** Runs listed, and their rows deleted, per transaction (default 200). */
  batchRuns?: number;
  /** Events deleted per transaction (default 5000). */
  batchEvents?: number;
  /** Also rewrite the database to give space back where that blocks writers (SQLite's VACUUM). */
  vacuum?: boolean;
  /** Each run that goes (or would go, in a dry run). */
  onRun?: (run: PrunableRun) => void;
  /** After each transaction, the totals so far. */
  progress?: (totals: PruneTotals) => void;
  /** Asked between transactions: true stops the prune there (what is done stays done). */
  shouldStop?: () => boolean;
}

export interface PruneTotals {
  /** Runs whose rows went (in a dry run: that would go). */
  runs: number;
  /** Their events deleted (in a dry run: their events). */
  events: number;
  /** Claimed webhook deliveries deleted with their runs. */
  deliveries: number;
  /** Bytes of the deleted rows' text. */
  bytes: number;
  /** Finished runs kept because they hold their mission's latest checkpoint under a key (of an API). */
  keptForCheckpoint: number;
  /** Listed runs that changed before their row could go (taken, written or resumed meanwhile): kept. */
  changedMeanwhile: number;
}

export interface PruneSummary extends PruneTotals {
  dryRun: boolean;
  /** Stopped by shouldStop before the end. */
  stopped: boolean;
  /** After the prune (not in a dry run). */
  space?: SpaceReport;
  /** In a dry run: what an earlier prune, stopped or killed, left queued; the next prune deletes it first. */
  queued?: { runs: number; events: number };
}

/** "12 runs pruned, 3400 events deleted (1.2 MiB)": a progress line, the same in the CLI and the worker. */
export function describeTotals(t: PruneTotals): string {
  return `${t.runs} runs pruned, ${t.events} events deleted (${byteText(t.bytes)})`;
}

export function byteText(bytes: number): string {
  return bytes >= 1048576 ? `${(bytes / 1048576).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}

const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function pruneLog(log: RunRetention, opts: PruneOptions): Promise<PruneSummary> {
  const batchRuns = opts.batchRuns ?? 200;
  const batchEvents = opts.batchEvents ?? 5000;
  const dryRun = opts.dryRun === true;
  const totals: PruneTotals = { runs: 0, events: 0, deliveries: 0, bytes: 0, keptForCheckpoint: 0, changedMeanwhile: 0 };
  const stop = () => opts.shouldStop?.() === true;
  const report = () => opts.progress?.({ ...totals });

  const deleteQueued = async (): Promise<boolean> => {
    for (;;) {
      const done = await log.deletePrunedEvents(batchEvents);
      totals.events += done.events;
      totals.bytes += done.bytes;
      if (done.events > 0) report();
      if (!done.left) return true;
      if (stop()) return false;
      await yieldTurn();
    }
  };

  // Events a previous prune queued and did not get to (it was stopped, or died) go first; a dry
  // run says how many (probe 112 K11: it said "0 runs (0 events)" and the next prune deleted 190k).
  const queued = dryRun ? await log.queuedPrunedEvents() : undefined;
  if (!dryRun && !(await deleteQueued())) return { ...totals, dryRun, stopped: true };

  // One mark per mission, key and API, as lastCheckpoint reads them.
  const markOf = (mission: string, key: string, api: string | undefined) => JSON.stringify([mission, key, api ?? null]);
  const marks = new Map<string, number>();
  for (const m of await log.checkpointMarks()) marks.set(markOf(m.mission, m.key, m.api), m.syncedAt);
  const holdsLatest = (run: PrunableRun) =>
    run.checkpoints.some((c) => {
      const mark = marks.get(markOf(run.mission, c.key, c.api));
      return mark === undefined || c.syncedAt >= mark;
    });

  let after: { updatedAt: number; runId: string } | undefined;
  for (;;) {
    if (stop()) return { ...totals, dryRun, stopped: true, ...(queued ? { queued } : {}) };
    const listed = await log.prunableRuns({ finishedBefore: opts.finishedBefore, now: opts.now(), limit: batchRuns, ...(after ? { after } : {}) });
    if (listed.length === 0) break;
    const last = listed[listed.length - 1]!;
    after = { updatedAt: last.updatedAt, runId: last.runId };
    const going = listed.filter((run) => !holdsLatest(run));
    totals.keptForCheckpoint += listed.length - going.length;
    if (dryRun) {
      for (const run of going) {
        opts.onRun?.(run);
        totals.runs++;
        totals.events += run.lastSeq;
      }
      report();
      continue;
    }
    if (going.length > 0) {
      const pruned = await log.pruneRuns(going, opts.finishedBefore, opts.now());
      const gone = new Set(pruned.runIds);
      for (const run of going) if (gone.has(run.runId)) opts.onRun?.(run);
      totals.runs += pruned.runIds.length;
      totals.deliveries += pruned.deliveries;
      totals.bytes += pruned.bytes;
      totals.changedMeanwhile += going.length - pruned.runIds.length;
      report();
      await yieldTurn();
      if (!(await deleteQueued())) return { ...totals, dryRun, stopped: true };
    }
  }
  if (dryRun) return { ...totals, dryRun, stopped: false, queued: queued! };
  return { ...totals, dryRun, stopped: false, space: await log.reclaimSpace({ vacuum: opts.vacuum === true }) };
}
