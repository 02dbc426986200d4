/**
 * A run status as a coloured pill; the colour comes from the status alone (see styles.css), and a
 * completed run that went on after failures (a loop's `onError continue`) has its own colour and
 * says how many: success is never shown for a run whose every POST got a 422.
 */
import type { RunStatus, RunsStatusFilter, RunSummary } from '../lib/protocol.js';

/** The statuses the runs filter offers (the engine filters by them): a run status, or a completed run with failures. */
export type StatusFilter = RunsStatusFilter;

export function statusOf(run: Pick<RunSummary, 'status' | 'failures'>): StatusFilter {
  return run.status === 'completed' && run.failures > 0 ? 'completed-with-failures' : run.status;
}

/** What the badge says; `compact` (the runs table's narrow column): "⚠ 3 failures" — no ✓ beside failures. */
export function badgeText(status: RunStatus, failures: number, compact: boolean): string {
  const count = `${failures} failure${failures === 1 ? '' : 's'}`;
  return statusOf({ status, failures }) === 'completed-with-failures' ? (compact ? `⚠ ${count}` : `completed with ${count}`) : status;
}

/** A compact badge has the whole sentence as its title; a stopped import is no running run. */
export function StatusBadge({ status, failures = 0, compact = false, stopped = false }: { status: RunStatus; failures?: number; compact?: boolean; stopped?: boolean }) {
  if (stopped) {
    return (
      <span className="status-badge status-stopped" data-status="stopped" title="imported: its log ends before the run's end, and it never moves again">
        {compact ? 'stopped' : 'stopped before its end'}
      </span>
    );
  }
  const shown = statusOf({ status, failures });
  const text = badgeText(status, failures, compact);
  return (
    <span className={`status-badge status-${shown}`} data-status={shown} title={shown === 'completed-with-failures' ? badgeText(status, failures, false) : undefined}>
      {text}
    </span>
  );
}
