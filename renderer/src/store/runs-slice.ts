/**
 * Runs slice: the latest RunSummary per run id, as listed by 'runs.list' and replaced by each
 * 'runs.changed' push. Summaries are the engine's view models and are stored as received; the
 * only thing added here is the highest seq seen in 'run.appended' pushes, so live views can
 * grow before the next summary arrives.
 */
import type { StateCreator } from 'zustand';
import type { RunSummary } from '../lib/protocol.js';
import type { StudioState } from './studio-store.js';

export interface RunsSlice {
  runsById: Record<string, RunSummary>;
  /** Highest seq seen per run from pushes (never lower than what the summary said). */
  liveSeqByRun: Record<string, number>;
  runsLoaded: boolean;
  setRuns: (runs: RunSummary[]) => void;
  upsertRun: (run: RunSummary) => void;
  noteAppended: (runId: string, lastSeq: number) => void;
}

export const createRunsSlice: StateCreator<StudioState, [], [], RunsSlice> = (set) => ({
  runsById: {},
  liveSeqByRun: {},
  runsLoaded: false,
  setRuns: (runs) =>
    set((state) => {
      const runsById: Record<string, RunSummary> = {};
      // A push may have arrived while the list was in flight: keep whichever is newer.
      for (const run of runs) {
        const pushed = state.runsById[run.runId];
        runsById[run.runId] = pushed && pushed.updatedAt > run.updatedAt ? pushed : run;
      }
      for (const [id, run] of Object.entries(state.runsById)) if (!runsById[id]) runsById[id] = run;
      return { runsById, runsLoaded: true };
    }),
  upsertRun: (run) =>
    set((state) => {
      // Pushes and run.get answers can cross: an older summary never replaces a newer one.
      const known = state.runsById[run.runId];
      if (known && known.updatedAt > run.updatedAt) return {};
      return { runsById: { ...state.runsById, [run.runId]: run } };
    }),
  noteAppended: (runId, lastSeq) =>
    set((state) => {
      const max = Math.max(state.liveSeqByRun[runId] ?? 0, lastSeq);
      if (max === state.liveSeqByRun[runId]) return {};
      return { liveSeqByRun: { ...state.liveSeqByRun, [runId]: max } };
    }),
});

/** The highest seq known for a run, from its summary or from pushes. */
export function knownLastSeq(state: Pick<RunsSlice, 'runsById' | 'liveSeqByRun'>, runId: string | null): number {
  if (!runId) return 0;
  return Math.max(state.runsById[runId]?.lastSeq ?? 0, state.liveSeqByRun[runId] ?? 0);
}
