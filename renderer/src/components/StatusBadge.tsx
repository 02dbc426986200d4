/**
 * A run status as a coloured pill; the colour comes from the status alone (see styles.css), and a
 * completed run that went on after failures (a loop's `onError continue`) has its own colour and
 * says how many: success is never shown for a run whose every POST got a 422.
 */
import type { RunStatus } from '../lib/protocol.js';
import { badgeText, statusOf } from '../lib/run-status.js';

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
