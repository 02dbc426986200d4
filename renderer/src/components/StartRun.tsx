/**
 * "New run": a modal that takes a mission from a file input, a dropped .vague file or pasted
 * text, plus optional `--env`/`--source`-style overrides and a crash point, and calls run.start.
 * For the demo mission, Sources starts with the demo API the studio runs. On success it opens
 * the new run.
 */
import { useEffect, useMemo, useState, type DragEvent } from 'react';
import { invoke } from '../lib/bridge.js';
import { failureText } from '../lib/protocol-failure.js';
import { useStudio } from '../store/studio-store.js';
import { parseKeyValues } from '../lib/key-values.js';
import { useRequest } from '../lib/use-request.js';

export function StartRun({ onClose }: { onClose: () => void }) {
  const selectRun = useStudio((s) => s.selectRun);
  const setTab = useStudio((s) => s.setTab);
  const [fileName, setFileName] = useState<string | null>(null);
  const [missionText, setMissionText] = useState('');
  const [sources, setSources] = useState('');
  const [env, setEnv] = useState('');
  const [crashAt, setCrashAt] = useState('');
  const [dragging, setDragging] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const info = useRequest('studio.info', {});
  // The demo mission runs against the demo API this studio started: offer its URL for the
  // mission's source (the mission's own base URL is a fixed port that may not be it).
  const demoSource = useMemo(() => {
    const url = info.data?.demoApiUrl;
    if (!url || !/\bmission\s+DemoOrders\b/.test(missionText)) return null;
    const name = /\bsource\s+([A-Za-z_]\w*)/.exec(missionText)?.[1];
    return name ? `${name}=${url}` : null;
  }, [info.data, missionText]);
  useEffect(() => {
    if (demoSource !== null) setSources((current) => (current.trim() === '' ? demoSource : current));
  }, [demoSource]);

  const readFile = async (file: File) => {
    if (!file.name.endsWith('.vague')) {
      setError(`"${file.name}" is not a mission: expected a .vague file`);
      return;
    }
    setFileName(file.name);
    setMissionText(await file.text());
    setError(null);
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    const file = e.dataTransfer.files[0];
    if (file) void readFile(file);
  };

  const start = async () => {
    setError(null);
    if (!missionText.trim()) {
      setError('The mission is empty: choose or drop a .vague file, or paste its text.');
      return;
    }
    let parsedSources: Record<string, string>;
    let parsedEnv: Record<string, string>;
    try {
      parsedSources = parseKeyValues(sources, 'Sources');
      parsedEnv = parseKeyValues(env, 'Env');
    } catch (err) {
      setError((err as Error).message);
      return;
    }
    setBusy(true);
    try {
      const { runId } = await invoke('run.start', {
        missionText,
        ...(Object.keys(parsedSources).length ? { sources: parsedSources } : {}),
        ...(Object.keys(parsedEnv).length ? { env: parsedEnv } : {}),
        ...(crashAt.trim() ? { crashAt: crashAt.trim() } : {}),
      });
      selectRun(runId);
      setTab('timeline');
      onClose();
    } catch (err) {
      setError(failureText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="modal-backdrop" onClick={onClose}>
      <div className="modal" role="dialog" aria-label="Start a run" aria-modal="true" onClick={(e) => e.stopPropagation()}>
        <header className="modal-header">
          <h2>Start a run</h2>
          <button className="ghost" aria-label="Close" onClick={onClose}>
            ✕
          </button>
        </header>
        <div
          className={`drop-zone${dragging ? ' dragging' : ''}`}
          aria-label="Mission drop zone"
          onDragOver={(e) => {
            e.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={onDrop}
        >
          <span>{fileName ? `Mission: ${fileName}` : 'Drop a .vague mission here, or'}</span>
          <label className="file-button">
            choose a file
            <input
              type="file"
              accept=".vague"
              aria-label="Mission file"
              onChange={(e) => {
                const file = e.target.files?.[0];
                if (file) void readFile(file);
              }}
            />
          </label>
        </div>
        <label className="field">
          <span>Mission text</span>
          <textarea
            aria-label="Mission text"
            spellCheck={false}
            rows={10}
            value={missionText}
            onChange={(e) => setMissionText(e.target.value)}
            placeholder={'mission Example {\n  source Api { auth: none, base: "http://127.0.0.1:4010" }\n  …\n}'}
          />
        </label>
        <div className="field-row">
          <label className="field">
            <span>Sources (NAME=URL per line)</span>
            <textarea aria-label="Sources" rows={2} value={sources} onChange={(e) => setSources(e.target.value)} />
          </label>
          <label className="field">
            <span>Env (K=V per line)</span>
            <textarea aria-label="Env" rows={2} value={env} onChange={(e) => setEnv(e.target.value)} />
          </label>
        </div>
        <label className="field">
          <span>Crash at (optional, e.g. after-effect:2)</span>
          <input aria-label="Crash at" value={crashAt} onChange={(e) => setCrashAt(e.target.value)} />
        </label>
        {error && (
          <div className="error-box" role="alert">
            {error}
          </div>
        )}
        <footer className="modal-footer">
          <button onClick={onClose}>Cancel</button>
          <button className="primary" aria-label="Start run" disabled={busy} onClick={() => void start()}>
            {busy ? 'Starting…' : 'Start run'}
          </button>
        </footer>
      </div>
    </div>
  );
}
