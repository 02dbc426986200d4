/**
 * Checkpoints and pending timers/pauses/webhook waits at the scrubbed position.
 */
import type { PendingWait } from '../../lib/protocol.js';
import { formatDateTime } from '../../lib/time-format.js';

interface Props {
  checkpoints: { key: string; syncedAt: number }[];
  pending: PendingWait[];
}

export function ScrubberWaits({ checkpoints, pending }: Props) {
  return (
    <div className="panel-row">
      <section className="panel" aria-label="Checkpoints">
        <h3>Checkpoints</h3>
        {checkpoints.length === 0 ? (
          <div className="muted">none</div>
        ) : (
          <table className="mini-table">
            <tbody>
              {checkpoints.map((c) => (
                <tr key={c.key}>
                  <td><code>{c.key}</code></td>
                  <td>synced to {formatDateTime(c.syncedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section className="panel" aria-label="Pending waits">
        <h3>Pending</h3>
        {pending.length === 0 ? (
          <div className="muted">nothing pending</div>
        ) : (
          <table className="mini-table">
            <tbody>
              {pending.map((p) => (
                <tr key={`${p.kind}:${p.id}`}>
                  <td><span className={`wait-kind wait-${p.kind}`}>{p.kind}</span></td>
                  <td><code>{p.path ?? p.id}</code></td>
                  <td>since {formatDateTime(p.since)}</td>
                  <td>{p.dueAt !== null ? `due ${formatDateTime(p.dueAt)}` : 'until resumed'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
