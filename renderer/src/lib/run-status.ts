/**
 * What a run's status badge says (components/StatusBadge.tsx) and the status the runs table sorts
 * and filters it by: a completed run that went on after failures is a status of its own, and no
 * ✓ is shown beside failures.
 */
import type { RunStatus, RunsStatusFilter, RunSummary } from './protocol.js';

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

