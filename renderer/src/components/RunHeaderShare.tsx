/**
 * Forking and sharing the open run, in its header. "Fork from here" starts a new run whose log is
 * this run's up to the selected seq (any tab's selection: a timeline bar, an event row, the
 * scrubber), replayed, then live — with the same mission or an edit of it (run.fork, `reqon
 * fork`); the new run opens. "Export" downloads the run as a .reqonrun bundle (run.export). A
 * fork names its parent, an imported run says it is read-only.
 */
import { useState } from 'react';
import type { RunSummary } from '../lib/protocol.js';
import { invoke } from '../lib/bridge.js';
import { describeFailure } from '../lib/protocol-failure.js';
import { useStudio } from '../store/studio-store.js';

export function RunHeaderShare({ run }: { run: RunSummary }) {
  const selectedSeq = useStudio((s) => s.selectedSeq ?? s.scrubSeq);
  const selectRun = useStudio((s) => s.selectRun);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const atSeq = selectedSeq ?? run.lastSeq;

  const fork = async () => {
    setBusy(true);
    setMessage(null);
    try {
      const { runId } = await invoke('run.fork', { runId: run.runId, atSeq, ...(editing !== null ? { missionText: editing } : {}) });
      setEditing(null);
      selectRun(runId);
    } catch (err) {
      setMessage(describeFailure(err));
    } finally {
      setBusy(false);
    }
  };
  const edit = async () => {
    if (editing !== null) return setEditing(null);
    try {
      const source = await invoke('run.source', { runId: run.runId });
      setEditing(source.files.find((f) => f.path === source.entry)?.text ?? '');
    } catch (err) {
      setMessage(describeFailure(err));
    }
  };
  const exportRun = async () => {
    try {
      const { fileName, text } = await invoke('run.export', { runId: run.runId });
      const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = fileName;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
      setMessage(`Exported ${fileName}`);
    } catch (err) {
      setMessage(describeFailure(err));
    }
  };

  return (
    <div className="run-header-share">
      {run.forkedFrom && (
        <span className="muted" data-testid="forked-from">
          forked from{' '}
          <button className="link" onClick={() => selectRun(run.forkedFrom!.runId)} title="Open the parent run">
            {run.forkedFrom.runId}
          </button>{' '}
          at seq {run.forkedFrom.atSeq}
        </span>
      )}
      {run.imported && (
        <span className="badge" data-testid="imported" title="Opened from a run bundle: every view works, nothing continues it">
          imported · read-only
        </span>
      )}
      <span className="toolbar-spacer" />
      <button aria-label="Fork from here" disabled={busy} onClick={() => void fork()} title={`A new run: this run's log up to seq ${atSeq}, replayed, then live${editing !== null ? ', with the edited mission' : ''}`}>
        Fork from seq {atSeq}
      </button>
      <button aria-label="Edit mission for the fork" aria-pressed={editing !== null} onClick={() => void edit()}>
        {editing !== null ? 'Same mission' : 'Edit mission…'}
      </button>
      <button aria-label="Export run" onClick={() => void exportRun()} title="Download this run as a .reqonrun bundle (mission, options without secrets, events)">
        ⤓ Export
      </button>
      {message && <span className="muted" role="status">{message}</span>}
      {editing !== null && (
        <textarea className="run-header-share-mission" aria-label="Mission for the fork" spellCheck={false} value={editing} onChange={(e) => setEditing(e.target.value)} rows={10} />
      )}
    </div>
  );
}
