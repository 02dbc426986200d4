/**
 * The left sidebar: the live runs table with its text and status filters, and "New run".
 * Rows come from the runs slice, which 'runs.changed' pushes keep current.
 */
import { useMemo, useState } from 'react';
import { useStudio } from '../store/studio-store.js';
import type { StatusFilter } from './StatusBadge.js';
import { RunsSidebarTable } from './RunsSidebarTable.js';
import { StartRun } from './StartRun.js';

const STATUSES: (StatusFilter | 'all')[] = ['all', 'running', 'suspended', 'completed', 'completed-with-failures', 'failed'];
const LABELS: Partial<Record<StatusFilter | 'all', string>> = { all: 'All statuses', 'completed-with-failures': 'completed with failures' };

export function RunsSidebar() {
  const runsById = useStudio((s) => s.runsById);
  const runsLoaded = useStudio((s) => s.runsLoaded);
  const [text, setText] = useState('');
  const [status, setStatus] = useState<StatusFilter | 'all'>('all');
  const [starting, setStarting] = useState(false);
  const runs = useMemo(() => Object.values(runsById), [runsById]);

  return (
    <aside className="runs-sidebar" aria-label="Runs">
      <header className="runs-sidebar-header">
        <span className="brand">
          <span className="brand-mark" aria-hidden="true">◆</span> Reqon Studio
        </span>
        <button className="primary" aria-label="New run" onClick={() => setStarting(true)}>
          + New run
        </button>
      </header>
      <div className="runs-sidebar-filters">
        <input
          type="search"
          aria-label="Filter runs"
          placeholder="Filter by mission or run id…"
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
        <select aria-label="Status filter" value={status} onChange={(e) => setStatus(e.target.value as StatusFilter | 'all')}>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {LABELS[s] ?? s}
            </option>
          ))}
        </select>
      </div>
      {runsLoaded && runs.length === 0 ? (
        <div className="runs-sidebar-empty">No runs yet. Start one with “New run” or `reqon run FILE`.</div>
      ) : (
        <RunsSidebarTable runs={runs} text={text} status={status} />
      )}
      {starting && <StartRun onClose={() => setStarting(false)} />}
    </aside>
  );
}
