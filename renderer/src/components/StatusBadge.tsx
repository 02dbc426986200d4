/**
 * A run status as a coloured pill; the colour comes from the status alone (see styles.css).
 */
import type { RunStatus } from '../lib/protocol.js';

export function StatusBadge({ status }: { status: RunStatus }) {
  return (
    <span className={`status-badge status-${status}`} data-status={status}>
      {status}
    </span>
  );
}
