/**
 * Replay diff: runs run.verify — against the run's own mission, or an edited mission pasted or
 * opened here — and shows the original and replayed step paths and effect IDs side by side,
 * aligned by index, with the divergence the engine found highlighted and explained.
 */
import { useEffect, useMemo } from 'react';
import { useStudio } from '../../store/studio-store.js';
import { keptValue, setKept, useKeptState } from '../../lib/use-kept-state.js';
import { invoke } from '../../lib/bridge.js';
import { unfinished, type VerifyReport } from '../../lib/protocol.js';
import { describeFailure } from '../../lib/protocol-failure.js';
import { alignVerifyRows } from '../../lib/verify-rows.js';
import { verdictView, verifyRequest, verifyTarget, type VerifyTarget } from '../../lib/verify-target.js';
import { ReplayDiffTable } from './ReplayDiffTable.js';

export function ReplayDiff({ runId }: { runId: string }) {
  // Kept per run while another tab or run is shown: an edit typed here, and the diff it produced.
  const kept = `replay-diff:${runId}`;
  const [editing, setEditing] = useKeptState(`${kept}:editing`, false, { persist: true });
  // The run's recorded files, and the texts of those edited (by path): a folder mission's action
  // files are edited as its entry is, one at a time in the box (helper 83: only the entry could be).
  const [source, setSource] = useKeptState<{ entry: string; files: { path: string; text: string }[] } | null>(`${kept}:source`, null);
  const [edits, setEdits] = useKeptState<Record<string, string>>(`${kept}:edits`, {}, { persist: true });
  const [file, setFile] = useKeptState<string | null>(`${kept}:file`, null, { persist: true });
  const recordedText = (path: string | null) => source?.files.find((f) => f.path === path)?.text ?? '';
  const shownText = file === null ? '' : (edits[file] ?? recordedText(file));
  const setShownText = (text: string) => {
    if (file !== null) setEdits((current) => ({ ...current, [file]: text }));
  };
  // The report with the mission it checked: a verdict is only ever shown beside what it checked.
  const [result, setResult] = useKeptState<{ report: VerifyReport; checked: VerifyTarget } | null>(`${kept}:result`, null);
  const report = result?.report ?? null;
  const [error, setError] = useKeptState<string | null>(`${kept}:error`, null);
  const [busy, setBusy] = useKeptState(`${kept}:busy`, false);
  // Only the latest verify's answer lands: an older one is for a mission no longer asked about.
  const latestKey = `${kept}:latest`;
  const rows = useMemo(() => (report ? alignVerifyRows(report) : []), [report]);
  const now = verifyTarget(editing, edits);
  // A verdict kept while the run went on (it was suspended or running then) no longer speaks for it.
  // (By its status and its last seq: a run resumed and suspended again is "suspended" both times.)
  const runNow = useStudio((s) => s.runsById[runId]);
  const checkedVerdict = result ? verdictView(result.report, result.checked, editing, edits) : null;
  const movedOn =
    result !== null && runNow !== undefined && (runNow.status !== result.report.runStatus || (result.report.lastSeq !== undefined && runNow.lastSeq !== result.report.lastSeq));
  const verdict =
    checkedVerdict && movedOn && checkedVerdict.stale === null
      ? { kind: 'stale' as const, text: `${checkedVerdict.text} — out of date: the run has logged more since (it is ${runNow!.status} at #${runNow!.lastSeq}); verify again`, stale: 'the run went on' }
      : checkedVerdict;
  // What a stale verdict drew (its divergence, its table) is dimmed and said to be out of date too.
  const stale = verdict !== null && verdict.stale !== null;

  // Editing starts from the run's own mission text, so a small change is a small edit.
  const startEditing = async () => {
    setEditing(true);
    await loadSource();
  };
  const loadSource = async () => {
    if (source !== null) return;
    try {
      const recorded = await invoke('run.source', { runId });
      const entry = recorded.files.some((f) => f.path === recorded.entry) ? recorded.entry : (recorded.files[0]?.path ?? recorded.entry);
      setSource({ entry, files: recorded.files });
      setFile((current) => current ?? entry);
      setEdits((current) => (Object.keys(current).length > 0 ? current : { [entry]: recorded.files.find((f) => f.path === entry)?.text ?? '' }));
    } catch (err) {
      setError(describeFailure(err));
    }
  };
  // An edit found again after a reload (its texts are kept in the tab): the recorded files too.
  useEffect(() => {
    if (editing && source === null) void loadSource();
  }, [runId]); // eslint-disable-line react-hooks/exhaustive-deps
  // A file's name as the folder mission's own (its entry's folder left out).
  const folder = source ? source.entry.slice(0, source.entry.lastIndexOf('/') + 1) : '';
  const shortName = (path: string) => (folder && path.startsWith(folder) ? path.slice(folder.length) : path);

  const verify = async () => {
    if (!('target' in now)) return;
    const { target } = now;
    const id = keptValue(latestKey, 0) + 1;
    setKept(latestKey, id, 0);
    const isLatest = () => keptValue(latestKey, 0) === id;
    setBusy(true);
    setError(null);
    try {
      const answer = await invoke('run.verify', verifyRequest(runId, target));
      if (isLatest()) setResult({ report: answer, checked: target });
    } catch (err) {
      if (!isLatest()) return;
      setError(describeFailure(err));
      setResult(null);
    } finally {
      if (isLatest()) setBusy(false);
    }
  };

  return (
    <div className="replay-diff">
      <div className="toolbar" role="toolbar" aria-label="Replay diff controls">
        <button className="primary" aria-label="Verify replay" disabled={busy || !('target' in now)} onClick={() => void verify()}>
          {busy ? 'Replaying…' : editing ? 'Verify against edited mission' : 'Verify replay'}
        </button>
        <label className="check">
          <input type="checkbox" aria-label="Use an edited mission" checked={editing} onChange={(e) => (e.target.checked ? void startEditing() : setEditing(false))} />
          use an edited mission
        </label>
        {editing && source !== null && source.files.length > 1 && (
          <label className="field">
            <span>file</span>
            <select aria-label="Edited file" value={file ?? source.entry} onChange={(e) => setFile(e.target.value)}>
              {source.files.map((f) => (
                <option key={f.path} value={f.path}>
                  {shortName(f.path)}
                  {edits[f.path] !== undefined && edits[f.path] !== f.text ? ' (edited)' : ''}
                </option>
              ))}
            </select>
          </label>
        )}
        {editing && (
          <label className="file-button">
            open .vague…
            <input
              type="file"
              accept=".vague"
              aria-label="Edited mission file"
              onChange={(e) => {
                const f = e.target.files?.[0];
                if (f) void f.text().then(setShownText);
              }}
            />
          </label>
        )}
        <span className="toolbar-spacer" />
        {verdict && (
          <span className={`verdict-chip ${verdict.kind}`} data-testid="verify-verdict" data-stale={verdict.stale !== null}>
            {verdict.text}
          </span>
        )}
      </div>
      {editing && (
        <textarea
          className="mission-editor"
          aria-label="Edited mission text"
          spellCheck={false}
          rows={8}
          value={shownText}
          onChange={(e) => setShownText(e.target.value)}
        />
      )}
      {editing && source !== null && 'refused' in now && !busy && (
        <div className="banner" role="note" aria-label="Nothing to verify">
          {now.refused}
        </div>
      )}
      {error && <div className="error-box" role="alert">{error}</div>}
      {report && stale && (
        <div className="banner" role="note" aria-label="Out of date">
          The verdict below is out of date ({verdict!.stale}): what it shows is what it checked then — verify again.
        </div>
      )}
      <div className="replay-diff-result" data-stale={stale} style={stale ? { opacity: 0.55 } : undefined}>
        {report?.divergence && (
          <div className="banner banner-error" role="alert" aria-label="Divergence">
            <div>
              <strong>{report.divergence.cause === 'edit' ? 'The edit changes what the run already did' : report.divergence.cause === 'damaged-log' ? 'The log is damaged' : 'Non-determinism'}</strong> at seq #
              {report.divergence.seq}, step <code>{report.divergence.stepPath}</code>
            </div>
            {report.divergence.change && (
              <div className="divergence-change" data-testid="divergence-change">
                {report.divergence.line !== undefined ? `${report.divergence.file !== undefined ? `${report.divergence.file} ` : ''}line ${report.divergence.line}: ` : ''}
                {report.divergence.change}
              </div>
            )}
            <div className="divergence-grid">
              <span className="muted">recorded</span>
              <code>{report.divergence.recorded}</code>
              <span className="muted">asked</span>
              <code>{report.divergence.asked}</code>
            </div>
            <p className="explanation">{report.divergence.explanation}</p>
          </div>
        )}
        {report && notChecked(report).length > 0 && (
          <div className="banner" role="note" aria-label="Not checked">
            Not checked: {notChecked(report).join('; ')}
          </div>
        )}
        {report ? (
          <ReplayDiffTable rows={rows} asked={report.divergence?.asked ?? null} />
        ) : (
          !error && (
            <div className="view-hint">
              Replays this run against its log without performing effects and compares every step path and effect ID with the original. Tick “use an edited
              mission” to check whether a change to the mission is compatible with this run.
            </div>
          )
        )}
      </div>
    </div>
  );
}

/** What the verdict did not cover: the report's own gaps, and what an unfinished run has yet to do. */
function notChecked(report: VerifyReport): string[] {
  const gaps = [...report.unchecked];
  if (report.ok && unfinished(report)) gaps.push(`what the run has yet to do — it is ${report.runStatus} and has not finished`);
  return gaps;
}
