/**
 * The left sidebar: the live runs table with its text and status filters, and "New run".
 * Rows come from the engine a page at a time, filtered there (RunsSidebarTable); 'runs.changed'
 * pushes keep them current. Its width is dragged
 * at its right edge and it collapses to a rail; both are remembered (localStorage).
 */
import { useState } from 'react';
import { useStudio } from '../store/studio-store.js';
import { readStored, useStoredWidth, writeStored } from '../lib/use-stored-width.js';
import type { StatusFilter } from '../lib/run-status.js';
import { RunsSidebarTable } from './RunsSidebarTable.js';
import { StartRun } from './StartRun.js';
import { ResizeHandle } from './ResizeHandle.js';

const STATUSES: (StatusFilter | 'all')[] = ['all', 'running', 'suspended', 'completed', 'completed-with-failures', 'failed'];
const LABELS: Partial<Record<StatusFilter | 'all', string>> = { all: 'All statuses', 'completed-with-failures': 'completed with failures' };
const COLLAPSED_KEY = 'reqon.sidebar.collapsed';

export function RunsSidebar() {
  const runsTotal = useStudio((s) => s.runsTotal);
  // A run pushed since the list was read counts too.
  const noRuns = useStudio((s) => s.runsLoaded && s.runsTotal === 0 && Object.keys(s.runsById).length === 0);
  const [text, setText] = useState('');
  const [status, setStatus] = useState<StatusFilter | 'all'>('all');
  const [starting, setStarting] = useState(false);
  // Until the user drags it: about a third of the window, enough for the table's main columns.
  const width = useStoredWidth('reqon.sidebar.width', Math.round(Math.min(620, Math.max(300, window.innerWidth * 0.36))), 260, 1200);
  const [collapsed, setCollapsedState] = useState(() => readStored(COLLAPSED_KEY) === '1');
  const setCollapsed = (c: boolean) => {
    setCollapsedState(c);
    writeStored(COLLAPSED_KEY, c ? '1' : '0');
  };

  if (collapsed) {
    return (
      <aside className="runs-sidebar collapsed" aria-label="Runs">
        <button className="ghost runs-sidebar-toggle" aria-label="Show runs" title="Show the runs" onClick={() => setCollapsed(false)}>
          »
        </button>
        <span className="runs-sidebar-rail-label">Runs <span className="num">{runsTotal ?? 0}</span></span>
        {starting && <StartRun onClose={() => setStarting(false)} />}
      </aside>
    );
  }

  return (
    // The page keeps at least 560 px for the open run whatever width was stored (styles.css).
    <aside className="runs-sidebar" aria-label="Runs" style={{ ['--sidebar-w' as string]: `${width.width}px` }}>
      <header className="runs-sidebar-header">
        <span className="brand">
          <span className="brand-mark" aria-hidden="true">◆</span> Reqon Studio
        </span>
        <span className="runs-sidebar-header-actions">
          <button className="primary" aria-label="New run" onClick={() => setStarting(true)}>
            + New run
          </button>
          <button className="ghost runs-sidebar-toggle" aria-label="Hide runs" title="Hide the runs" onClick={() => setCollapsed(true)}>
            «
          </button>
        </span>
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
      {noRuns ? (
        <div className="runs-sidebar-empty">No runs yet. Start one with “New run” or `reqon run FILE`.</div>
      ) : (
        <RunsSidebarTable text={text} status={status} />
      )}
      {starting && <StartRun onClose={() => setStarting(false)} />}
      <ResizeHandle className="runs-sidebar-resizer" label="Resize the runs sidebar" width={width} />
    </aside>
  );
}
