/**
 * When a sync checkpoint (`since: lastSync(…)`) may advance (GUARANTEES 15).
 *
 * Rule: a checkpoint advances only when every record of the fetch it covers has completed every
 * step of its action without failure. So it advances at the END of the action (or after the last
 * page of a streamed sync, which ends its action by construction), in a commit that follows every
 * write the action made — never with an earlier store step, which covers only what it stores
 * (a `store response -> raw` before a loop storing cleaned records covers nothing of `clean`) —
 * and never on a failed action. A failure that a loop tolerated (`onError continue` or `queue`)
 * after the checkpoint's fetch holds the checkpoint back: it does not advance, the run says so
 * (a progress line), and the next run fetches the same records again (stores upsert by key, so
 * the ones already stored are overwritten, not doubled). Being held back is decided from the walk
 * (the same on replay), never from the world.
 */
import { checkpointApiOf } from './http-runtime.js';
import { NondeterminismError } from '../journal/nondeterminism-error.js';
import { passCheckpoints } from './step-runtime.js';
import type { Frame, PendingCheckpoint, StepRuntime } from './step-runtime.js';

/** Checkpoints pending when a failure was tolerated: they cover a record that failed. */
const held = new WeakSet<PendingCheckpoint>();
/** How many records the first store after a checkpoint's fetch wrote (the `records` of its event). */
const covered = new WeakMap<PendingCheckpoint, number>();

/**
 * A store step at the action's own level wrote `records` records: the pending checkpoints that
 * have no count yet (their fetch's first store) report it when they advance. `total` (the last
 * page of a streamed sync) sets it whatever it was.
 */
export function noteStored(pending: readonly PendingCheckpoint[], records: number, total = false): void {
  for (const c of pending) if (total || !covered.has(c)) covered.set(c, records);
}

/**
 * Replay of a log written before checkpoints waited for the end of their action: there, a store
 * step at the action's level advanced them, and its `checkpoint.advanced` events follow its
 * writes at its path. Returns the pending checkpoints for the caller to take as recorded there.
 */
export function recordedWithStore(frame: Frame, path: string, rt: Pick<StepRuntime, 'journal'>): PendingCheckpoint[] {
  if (frame.inIteration || !rt.journal.replaying || frame.checkpoints.length === 0) return [];
  if (rt.journal.peek(path)?.type !== 'checkpoint.advanced') return [];
  return frame.checkpoints.splice(0);
}

/** Actions (by their shared list of pending checkpoints) in which a loop tolerated a failure. */
const tolerating = new WeakSet<readonly PendingCheckpoint[]>();

/** A loop tolerated a failure: every checkpoint pending in its action is held back. */
export function holdCheckpoints(pending: readonly PendingCheckpoint[]): void {
  tolerating.add(pending);
  for (const c of pending) held.add(c);
}

/**
 * A checkpoint set by hand (`store { "k": now() } -> sync_state { key: "k" }`) says everything up
 * to now synced: a failure a loop of its action tolerated before it holds it back too, not only
 * one after (probe 110 K7: it advanced past the failed record; from log format 10, `heldByEarlier`).
 */
export function pendSetCheckpoint(pending: PendingCheckpoint[], checkpoint: PendingCheckpoint, heldByEarlier: boolean): void {
  pending.push(checkpoint);
  if (heldByEarlier && tolerating.has(pending)) held.add(checkpoint);
}

/** Takes the pending checkpoints that may advance now; the held ones are dropped, and said so. */
export function releasableCheckpoints(pending: PendingCheckpoint[], path: string, rt: Pick<StepRuntime, 'progress'>): PendingCheckpoint[] {
  const out: PendingCheckpoint[] = [];
  for (const c of pending.splice(0)) {
    if (!held.has(c)) {
      out.push(c);
      continue;
    }
    rt.progress(
      `${path}: checkpoint "${c.key}" held back: a loop of its action tolerated a failure, so the next run fetches those records again`,
    );
  }
  return out;
}

/** The end of an action: its pending checkpoints that may advance do, after everything it wrote. */
export async function advanceActionCheckpoints(pending: PendingCheckpoint[], path: string, rt: StepRuntime): Promise<void> {
  const checkpoints = releasableCheckpoints(pending, path, rt);
  if (checkpoints.length === 0) return;
  let live = false;
  for (const c of checkpoints) {
    if (takeCheckpoint(c, path, rt)) continue;
    const records = covered.get(c);
    rt.journal.emit('checkpoint.advanced', path, {
      key: c.key,
      syncedAt: c.syncedAt,
      ...(records !== undefined ? { records } : {}),
      ...(c.api !== undefined ? { api: c.api } : {}),
      ...(c.query !== undefined ? { query: c.query } : {}),
      ...(c.querySha256 !== undefined ? { querySha256: c.querySha256 } : {}),
    });
    live = true;
  }
  // The commit carries every write still buffered: the checkpoint never lands before them.
  if (live) await rt.journal.commit({ durable: false });
  const passed = passCheckpoints(checkpoints, path, rt, live);
  if (passed) await passed;
}

/**
 * The recorded `checkpoint.advanced` at `path`, taken when replay reaches it; it must be of the
 * checkpoint the mission advances now: an edit of its key (`lastSync("orders-main")` became
 * `lastSync("orders-other")`) or of the API it is of reads and advances another checkpoint, and
 * passed as the same, the edited run would resume having advanced the old one. It must advance
 * to the same instant too: an edit of `updateFrom` (or its removal) moves the next run's start,
 * past records it would then never ask for. The instant is the replayed start of the fetch or a
 * value of its replayed answer, so an unedited mission always matches it.
 */
export function takeCheckpoint(c: PendingCheckpoint, path: string, rt: StepRuntime): boolean {
  const recorded = rt.journal.take(path, 'checkpoint.advanced');
  if (!recorded) return false;
  const { key, api } = recorded.payload;
  // A checkpoint recorded before checkpoints named their API (format 1) is compared by key alone;
  // one recorded with its URL's query (before 2026-12-05) by the URL without it.
  if (key !== c.key || (api !== undefined && (c.api === undefined || checkpointApiOf(api) !== checkpointApiOf(c.api)))) {
    const shown = (k: string, a: string | undefined) => `checkpoint "${k}"${a !== undefined ? ` of ${a}` : ''}`;
    throw new NondeterminismError(rt.runId, path, recorded.seq, `advancing ${shown(key, api)}`, `advancing ${shown(c.key, c.api)}`, {
      change: `the checkpoint of this fetch changed: ${shown(key, api)} became ${shown(c.key, c.api)}`,
    });
  }
  const { syncedAt } = recorded.payload;
  if (syncedAt !== c.syncedAt) {
    const at = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms));
    throw new NondeterminismError(rt.runId, path, recorded.seq, `advancing checkpoint "${key}" to ${at(syncedAt)}`, `advancing it to ${at(c.syncedAt)}`, {
      change: `the instant checkpoint "${key}" advances to changed (its updateFrom, or the fetch's start, was edited): ${at(syncedAt)} became ${at(c.syncedAt)}, where the next run asks from`,
    });
  }
  return true;
}
