/**
 * The mission a run remembers — its row's files, which a resume, a verify and a fork run — must be
 * the mission its log says it ran. The row is the log's mutable part (no trigger guards it): its
 * files edited outside the engine (`sql("ledger")` made `sql("shadow")`) were verified "✓" and
 * resumed into another table (helper 75). The files must hash to the row's `missionHash`, and that
 * must be the hash the log's own events name last: `run.started`'s, or a `run.resumed` that
 * adopted an edited mission. Either mismatch is a damaged log.
 */
import { DamagedLogError } from '../journal/journal.js';
import type { EventPayloads } from '../log/events.js';
import type { EventTable, RunRecord } from '../log/log.js';
import { missionHash } from './mission-cache.js';

export async function assertRememberedMission(log: Pick<EventTable, 'read'>, run: RunRecord): Promise<void> {
  const hashed = missionHash(run.missionFiles);
  if (hashed !== run.missionHash) {
    throw new DamagedLogError(run.runId, `the mission its run row remembers is not the one it ran (its files hash to ${hashed.slice(0, 12)}…, the row says ${run.missionHash.slice(0, 12)}…: edited outside the engine)`);
  }
  let named: { hash: string; seq: number } | undefined;
  // A fork's copy of its parent's log names the parent's missions (a resume that adopted an edit):
  // the fork's own start names its own, and only what follows its copy can name another.
  let copiedTo = 0;
  // Up to the seq the row was read at: a resume adopting an edit meanwhile moves both on.
  for (const e of await log.read(run.runId, { types: ['run.started', 'run.resumed'], toSeq: run.lastSeq })) {
    if (e.type === 'run.started') copiedTo = (e.payload as EventPayloads['run.started']).forkedFrom?.atSeq ?? 0;
    else if (e.seq <= copiedTo) continue;
    const hash = (e.payload as EventPayloads['run.started'] | EventPayloads['run.resumed']).missionHash;
    if (hash !== undefined) named = { hash, seq: e.seq };
  }
  if (named !== undefined && named.hash !== run.missionHash) {
    throw new DamagedLogError(
      run.runId,
      `the mission its run row remembers is not the one its log names (seq ${named.seq} names ${named.hash.slice(0, 12)}…, the row ${run.missionHash.slice(0, 12)}…: edited outside the engine)`,
      named.seq,
    );
  }
}
