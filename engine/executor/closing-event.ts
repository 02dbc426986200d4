/**
 * The closing event of a finished run: every writer of a run's end (execute, a lab's stop, a
 * mission that can no longer replay, an import) appends it in the commit that sets the status,
 * and nothing appends after it — so it is the event at the row's last seq. One that is not lost
 * its end outside the engine: `verify` says DAMAGED LOG, `resume` refuses to answer an end the
 * log does not hold. One definition for both (helper 88).
 */
import { DamagedLogError } from '../journal/journal.js';
import type { StoredEvent } from '../log/events.js';
import type { EventLog, RunRecord } from '../log/log.js';

export async function closingEvent(log: EventLog, run: RunRecord): Promise<StoredEvent<'run.completed'> | StoredEvent<'run.failed'> | DamagedLogError> {
  const closing = run.status === 'completed' ? 'run.completed' : 'run.failed';
  const [last] = await log.read(run.runId, { fromSeq: run.lastSeq, toSeq: run.lastSeq });
  if (last?.type === closing) return last as StoredEvent<'run.completed'> | StoredEvent<'run.failed'>;
  const ends = last ? `ends at seq ${last.seq} with ${last.type}${last.stepPath ? ` at ${last.stepPath}` : ''}` : `holds no event at seq ${run.lastSeq}`;
  return new DamagedLogError(run.runId, `its run row says ${run.status}, but its log ${ends}, not ${closing}: events were removed outside the engine`, run.lastSeq + 1);
}
