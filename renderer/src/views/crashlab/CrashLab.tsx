/**
 * Crash lab: pick a crash point and occurrence (from crash.points, counted on this run), and the
 * engine's lab makes a crash-free reference run and an armed run of the same mission, both
 * through its answer proxy (the armed run is served the reference's answers), then shows the
 * process dying by SIGKILL, the restart, replay catching up with the log, and a verdict that
 * lists what it compared. Chaos mode arms a series of points the reference run reached, shown as
 * they are picked. Sources start as the run's own `--source` values; a source whose mission gives
 * no base URL must be filled in.
 */
import { useEffect, useMemo, useState, type ReactNode } from 'react';
import type { CrashPointName, StartRunRequest } from '../../lib/protocol.js';
import { useRequest } from '../../lib/use-request.js';
import { useCrashLab } from '../../lib/use-crash-lab.js';
import { describeFailure } from '../../lib/protocol-failure.js';
import { parseKeyValues } from '../../lib/key-values.js';
import { useStudio } from '../../store/studio-store.js';
import { useKeptState } from '../../lib/use-kept-state.js';
import { CrashLabPhases } from './CrashLabPhases.js';
import { CrashLabProcesses } from './CrashLabProcesses.js';
import { CrashLabVerdict } from './CrashLabVerdict.js';

/** The engine's wording (engine/journal/effects.ts, CRASH_POINT_HELP): the renderer takes only types from it. */
const POINT_HELP: Record<CrashPointName, string> = {
  'before-effect': 'about to send a request or write a store batch',
  'after-effect': 'a request answered (or a file/postgrest batch written), its outcome not yet in the log',
  'mid-store': 'inside a store batch, before it commits',
  'after-checkpoint': 'a sync checkpoint committed, before the next step',
  'before-wait': 'a pause or wait recorded, before the run suspends',
};

export function CrashLab({ runId }: { runId: string }) {
  const selectRun = useStudio((s) => s.selectRun);
  const setTab = useStudio((s) => s.setTab);
  const points = useRequest('crash.points', { runId });
  const lab = useCrashLab(runId);
  // The form is kept per run across tabs and reloads (it came back at its defaults).
  const form = `crashlab:${runId}`;
  const [point, setPoint] = useKeptState<CrashPointName | null>(`${form}:point`, null, { persist: true });
  const [occurrence, setOccurrence] = useKeptState(`${form}:occurrence`, 1, { persist: true });
  const [maxCrashes, setMaxCrashes] = useKeptState(`${form}:maxCrashes`, 8, { persist: true });
  const [prepError, setPrepError] = useState<string | null>(null);
  // null until prefilled or typed: a field the user emptied stays empty (helper 98: it came back filled).
  const [typedSources, setSources] = useKeptState<string | null>(`${form}:sources`, null, { persist: true });
  const sources = typedSources ?? '';
  const source = useRequest('run.source', { runId });

  // The lab's runs talk to the same API as this run: prefill its remembered `--source` values.
  useEffect(() => {
    if (!source.data || typedSources !== null) return;
    const remembered = Object.entries(source.data.sources).map(([name, url]) => `${name}=${url}`);
    if (remembered.length > 0) setSources(remembered.join(', '));
  }, [source.data]); // eslint-disable-line react-hooks/exhaustive-deps
  const given = useMemo(() => {
    try {
      return parseKeyValues(sources.split(',').join('\n'), 'Sources');
    } catch {
      return {};
    }
  }, [sources]);
  // Sources the mission declares no base URL for, and the field does not give: the lab cannot reach them.
  const unreachable = Object.entries(source.data?.declaredSources ?? {})
    .filter(([name, base]) => base === null && given[name] === undefined)
    .map(([name]) => name);

  const available = useMemo(() => (points.data ?? []).filter((p) => p.occurrences > 0), [points.data]);
  const chosen = available.find((p) => p.point === point) ?? available[0] ?? null;
  const occurrences = chosen?.occurrences ?? 0;
  const picked = Math.min(Math.max(1, occurrence), Math.max(1, occurrences));

  // The lab runs the same mission text this run started with, and compares against this run.
  // The lab's runs start the mission the reference run recorded (every file of a folder mission),
  // which the studio takes from the log: only the sources typed here go with the request.
  const missionRequest = async (): Promise<StartRunRequest | null> => {
    try {
      const parsedSources = parseKeyValues(sources.split(',').join('\n'), 'Sources');
      return Object.keys(parsedSources).length > 0 ? { sources: parsedSources } : {};
    } catch (err) {
      setPrepError(describeFailure(err));
      return null;
    }
  };

  const startArmed = async () => {
    if (!chosen) return;
    setPrepError(null);
    const mission = await missionRequest();
    if (!mission) return;
    lab.start({ ...mission, crashAt: `${chosen.point}:${picked}`, referenceRunId: runId });
  };

  const startChaos = async () => {
    setPrepError(null);
    const mission = await missionRequest();
    if (!mission) return;
    lab.chaos({ ...mission, maxCrashes, referenceRunId: runId });
  };

  const status = lab.status;
  const running = lab.busy || (status !== null && status.phase !== 'done' && status.phase !== 'failed');

  return (
    <div className="crash-lab">
      <section className="panel crash-lab-controls" aria-label="Crash lab controls">
        <h3>
          Inject a crash <span className="muted">reference run: {runId}</span>
        </h3>
        {points.error && <div className="error-text" role="alert">{points.error.code}: {points.error.message}</div>}
        {points.data && available.length === 0 && <div className="muted">This run reaches no crash point: nothing to inject.</div>}
        <div className="crash-lab-form">
          <label className="field">
            <span>Crash point</span>
            <select aria-label="Crash point" value={chosen?.point ?? ''} onChange={(e) => { setPoint(e.target.value as CrashPointName); setOccurrence(1); }}>
              {available.map((p) => (
                <option key={p.point} value={p.point}>
                  {p.point} ({p.occurrences}×)
                </option>
              ))}
            </select>
          </label>
          <label className="field narrow">
            {/* A number, not a list: a 100k-event run reaches a point tens of thousands of times. */}
            <span>Occurrence (1–{occurrences})</span>
            <input
              aria-label="Occurrence"
              type="number"
              min={1}
              max={Math.max(1, occurrences)}
              value={occurrence}
              onChange={(e) => setOccurrence(Math.floor(Number(e.target.value)) || 1)}
            />
          </label>
          <button className="primary danger" aria-label="Start armed run" disabled={!chosen || running || unreachable.length > 0} onClick={() => void startArmed()}>
            ⚡ Start armed run
          </button>
          <label className="field sources">
            <span>Sources (NAME=URL)</span>
            <input aria-label="Lab sources" value={sources} spellCheck={false} placeholder="Name=http://…, Other=…" onChange={(e) => setSources(e.target.value)} />
          </label>
          <span className="divider" />
          <label className="field narrow">
            <span>Max crashes</span>
            <input aria-label="Max crashes" type="number" min={1} max={50} value={maxCrashes} onChange={(e) => setMaxCrashes(Math.max(1, Number(e.target.value) || 1))} />
          </label>
          <button aria-label="Chaos mode" className="danger-outline" disabled={running || unreachable.length > 0} onClick={() => void startChaos()}>
            Chaos mode
          </button>
        </div>
        {chosen && <p className="muted point-help">{chosen.point}: {POINT_HELP[chosen.point]}. The process kills itself with SIGKILL there; the lab restarts it.</p>}
        {occurrence !== picked && chosen && <p className="muted">This run reaches {chosen.point} {occurrences}×: occurrence {picked} will be armed.</p>}
        {unreachable.length > 0 && (
          <div className="error-text" role="alert" aria-label="Sources required">
            Sources: the mission declares no base URL for {unreachable.join(', ')}; give {unreachable.map((n) => `${n}=URL`).join(', ')}.
          </div>
        )}
        <p className="muted">Both lab runs go through the lab's proxy: the armed run is served the answers the crash-free run got, and its writes are counted per Idempotency-Key there, never sent to the API again.</p>
        {(prepError ?? lab.error) && <div className="error-box" role="alert">{prepError ?? lab.error}</div>}
      </section>
      {status && (
        <>
          <CrashLabPhases status={status} />
          {status.picks.length > 0 && (
            <p className="muted" aria-label="Crash picks">
              Armed, one per process: {status.picks.map((p) => <code key={p}>{p}</code>).reduce<ReactNode[]>((out, c, i) => (i === 0 ? [c] : [...out, ' → ', c]), [])}
            </p>
          )}
          <CrashLabProcesses
            status={status}
            exits={lab.exits}
            onOpenRun={(id) => {
              selectRun(id);
              setTab('timeline');
            }}
          />
          {status.error && <div className="error-box" role="alert">{status.error}</div>}
          {status.verdict && <CrashLabVerdict verdict={status.verdict} />}
        </>
      )}
    </div>
  );
}
