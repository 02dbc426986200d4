/**
 * Crash lab: pick a crash point and occurrence (from crash.points, counted on this run as the
 * crash-free reference), start a fresh run of the same mission armed with it, and watch the
 * engine's lab: the process dying by SIGKILL, the restart, replay catching up with the log
 * (replayed prefix vs live part), then the verdict — stores equal to the reference run and every
 * effect applied exactly once by the demo API's own counters. Chaos mode crashes at random
 * points until the run finishes.
 */
import { useEffect, useMemo, useState } from 'react';
import type { CrashPointName, StartRunRequest } from '../lib/protocol.js';
import { invoke } from '../lib/bridge.js';
import { useRequest } from '../lib/use-request.js';
import { useCrashLab } from '../lib/use-crash-lab.js';
import { describeFailure } from '../lib/protocol-failure.js';
import { parseKeyValues } from '../lib/key-values.js';
import { useStudio } from '../store/studio-store.js';
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
  const info = useRequest('studio.info', {});
  const lab = useCrashLab();
  const [point, setPoint] = useState<CrashPointName | null>(null);
  const [occurrence, setOccurrence] = useState(1);
  const [maxCrashes, setMaxCrashes] = useState(8);
  const [prepError, setPrepError] = useState<string | null>(null);
  const [sources, setSources] = useState('');
  const source = useRequest('run.source', { runId });

  // The lab starts fresh runs, which need the same `--source` overrides as the reference run.
  // The protocol does not carry a run's options, so offer the demo API for a one-source mission.
  useEffect(() => {
    const demo = info.data?.demoApiUrl;
    const entry = source.data?.files.find((f) => f.path === source.data?.entry);
    if (!demo || !entry || sources !== '') return;
    const names = [...entry.text.matchAll(/^\s*source\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{/gm)].map((m) => m[1]!);
    if (names.length === 1) setSources(`${names[0]}=${demo}`);
  }, [info.data, source.data]); // eslint-disable-line react-hooks/exhaustive-deps

  const available = useMemo(() => (points.data ?? []).filter((p) => p.occurrences > 0), [points.data]);
  const chosen = available.find((p) => p.point === point) ?? available[0] ?? null;
  const statsUrl = info.data?.demoApiUrl ? `${info.data.demoApiUrl.replace(/\/$/, '')}/__stats` : undefined;

  // The lab runs the same mission text this run started with, and compares against this run.
  const missionRequest = async (): Promise<StartRunRequest | null> => {
    try {
      const parsedSources = parseKeyValues(sources.split(',').join('\n'), 'Sources');
      const mission = await invoke('run.source', { runId });
      const entry = mission.files.find((f) => f.path === mission.entry) ?? mission.files[0];
      if (!entry) throw new Error(`run "${runId}" has no mission source to re-run`);
      return { missionText: entry.text, ...(Object.keys(parsedSources).length > 0 ? { sources: parsedSources } : {}) };
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
    lab.start({ ...mission, crashAt: `${chosen.point}:${Math.min(occurrence, chosen.occurrences)}`, referenceRunId: runId, ...(statsUrl ? { statsUrl } : {}) });
  };

  const startChaos = async () => {
    setPrepError(null);
    const mission = await missionRequest();
    if (!mission) return;
    lab.chaos({ ...mission, maxCrashes, referenceRunId: runId, ...(statsUrl ? { statsUrl } : {}) });
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
          <label className="field">
            <span>Occurrence</span>
            <select aria-label="Occurrence" value={occurrence} onChange={(e) => setOccurrence(Number(e.target.value))}>
              {Array.from({ length: chosen?.occurrences ?? 0 }, (_, i) => (
                <option key={i + 1} value={i + 1}>
                  {i + 1}
                </option>
              ))}
            </select>
          </label>
          <button className="primary danger" aria-label="Start armed run" disabled={!chosen || running} onClick={() => void startArmed()}>
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
          <button aria-label="Chaos mode" className="danger-outline" disabled={running} onClick={() => void startChaos()}>
            Chaos mode
          </button>
        </div>
        {chosen && <p className="muted point-help">{chosen.point}: {POINT_HELP[chosen.point]}. The process kills itself with SIGKILL there; the lab restarts it.</p>}
        {!statsUrl && info.data && <p className="muted">No demo API known to this studio: the verdict will check stores only, not effect counters.</p>}
        {(prepError ?? lab.error) && <div className="error-box" role="alert">{prepError ?? lab.error}</div>}
      </section>
      {status && (
        <>
          <CrashLabPhases status={status} />
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
