/**
 * "Compare with…": the engine's state diff between the pinned position and the scrubber, one row
 * per changed path with before and after.
 */
import type { StateDiffEntry } from '../../lib/protocol.js';
import { jsonText, visibleControls } from '../../lib/visible-text.js';

function show(value: unknown): string {
  if (value === undefined) return '';
  const s = jsonText(value) ?? '';
  return s.length > 300 ? `${s.slice(0, 297)}…` : s;
}

interface Props {
  fromSeq: number;
  toSeq: number;
  entries: StateDiffEntry[] | null;
  error: string | null;
}

export function ScrubberDiff({ fromSeq, toSeq, entries, error }: Props) {
  return (
    <section className="panel" aria-label="State diff">
      <h3>
        State diff <span className="seq-chip">#{fromSeq}</span> → <span className="seq-chip">#{toSeq}</span>
        {entries && <span className="muted">{entries.length} changes</span>}
      </h3>
      {error && <div className="error-text" role="alert">{error}</div>}
      {!entries && !error && <div className="muted" aria-busy="true">Comparing…</div>}
      {entries && entries.length === 0 && <div className="muted">No differences between these two positions.</div>}
      {entries && entries.length > 0 && (
        <table className="diff-table" aria-label="Diff entries">
          <thead>
            <tr>
              <th>change</th>
              <th>path</th>
              <th>before (#{fromSeq})</th>
              <th>after (#{toSeq})</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.path} className={`diff-${e.change}`}>
                <td><span className={`change-chip change-${e.change}`}>{e.change}</span></td>
                <td><code>{visibleControls(e.path)}</code></td>
                <td className="diff-before"><code>{show(e.before)}</code></td>
                <td className="diff-after"><code>{show(e.after)}</code></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
