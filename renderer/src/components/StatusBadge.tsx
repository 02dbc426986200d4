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

/** `compact` (the runs table's narrow column) says "✓ 3 failures", with the whole sentence as its title. */
export function StatusBadge({ status, failures = 0, compact = false }: { status: RunStatus; failures?: number; compact?: boolean }) {
  const shown = statusOf({ status, failures });
  const count = `${failures} failure${failures === 1 ? '' : 's'}`;
  const text = shown === 'completed-with-failures' ? (compact ? `✓ ${count}` : `completed with ${count}`) : status;
  return (
    <span className={`status-badge status-${shown}`} data-status={shown} title={shown === 'completed-with-failures' ? `completed with ${count}` : undefined}>
      {text}
    </span>
  );
}
