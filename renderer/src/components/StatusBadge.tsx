/**
 * A run status as a coloured pill; the colour comes from the status alone (see styles.css), and a
 * completed run that went on after failures (a loop's `onError continue`) has its own colour and
 * says how many: success is never shown for a run whose every POST got a 422.
 */
import type { RunStatus, RunSummary } from '../lib/protocol.js';

/** The statuses the runs filter offers: a run status, or a completed run with failures. */
export type StatusFilter = RunStatus | 'completed-with-failures';

export function statusOf(run: Pick<RunSummary, 'status' | 'failures'>): StatusFilter {
  return run.status === 'completed' && run.failures > 0 ? 'completed-with-failures' : run.status;
}

export function StatusBadge({ status, failures = 0 }: { status: RunStatus; failures?: number }) {
  const shown = statusOf({ status, failures });
  return (
    <span className={`status-badge status-${shown}`} data-status={shown}>
      {shown === 'completed-with-failures' ? `completed with ${failures} failure${failures === 1 ? '' : 's'}` : status}
    </span>
  );
}
