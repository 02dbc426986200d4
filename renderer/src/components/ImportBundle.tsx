/**
 * Opening a run bundle (.reqonrun, from "Export" or `reqon export`): drop it anywhere on the
 * window, or pick it with "Open bundle…". The engine checks it and writes it into the log
 * read-only (run.import); the run then opens with every view. A file that is no bundle is
 * refused with what is wrong with it.
 */
import { useEffect, useRef, useState } from 'react';
import { invoke } from '../lib/bridge.js';
import { describeFailure } from '../lib/protocol-failure.js';
import { useStudio } from '../store/studio-store.js';

export function ImportBundle() {
  const selectRun = useStudio((s) => s.selectRun);
  const [message, setMessage] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  const open = async (file: File) => {
    setMessage(`Opening ${file.name}…`);
    try {
      const { runId } = await invoke('run.import', { text: await file.text() });
      setMessage(`Opened ${file.name} (read-only)`);
      selectRun(runId);
    } catch (err) {
      setMessage(`${file.name}: ${describeFailure(err)}`);
    }
  };

  useEffect(() => {
    const over = (e: DragEvent) => {
      if (!e.dataTransfer?.types.includes('Files')) return;
      e.preventDefault();
      setDragging(true);
    };
    const leave = () => setDragging(false);
    const drop = (e: DragEvent) => {
      const file = e.dataTransfer?.files[0];
      if (!file) return;
      e.preventDefault();
      setDragging(false);
      void open(file);
    };
    window.addEventListener('dragover', over);
    window.addEventListener('dragleave', leave);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragover', over);
      window.removeEventListener('dragleave', leave);
      window.removeEventListener('drop', drop);
    };
  });

  return (
    <div className="import-bundle">
      <button aria-label="Open run bundle" onClick={() => input.current?.click()} title="Open a .reqonrun bundle (or drop one on the window)">
        Open bundle…
      </button>
      <input
        ref={input}
        type="file"
        accept=".reqonrun,application/json"
        hidden
        aria-label="Run bundle file"
        onChange={(e) => {
          const file = e.target.files?.[0];
          e.target.value = '';
          if (file) void open(file);
        }}
      />
      {message && (
        <span className="muted" role="status" data-testid="import-status" title={message}>
          {message}
        </span>
      )}
      {dragging && <div className="import-bundle-drop">Drop a .reqonrun bundle to open it read-only</div>}
    </div>
  );
}
