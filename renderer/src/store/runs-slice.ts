/**
 * Runs slice: the latest RunSummary per run id the studio has seen — in a 'runs.list' page, a
 * 'run.get' answer or a 'runs.changed' push. Summaries are the engine's view models and are
 * stored as received; added here are the highest seq seen in 'run.appended' pushes, so live views
 * can grow before the next summary arrives, how many runs the log holds, and `runsListVersion`,
 * bumped when a run appears or changes status: the runs table's pages (engine-side filters,
 * lib/use-runs-pages.ts) may then hold the wrong runs and are read again.
 */
import type { StateCreator } from 'zustand';
import type { RunSummary } from '../lib/protocol.js';
import { fresherSummary, isNewerSummary } from '../lib/summary-order.js';
import type { StudioState } from './studio-store.js';

export interface RunsSlice {
  runsById: Record<string, RunSummary>;
  /** Highest seq seen per run from pushes (never lower than what the summary said). */
  liveSeqByRun: Record<string, number>;
  runsLoaded: boolean;
  /** Runs in the log (the unfiltered list's total), once listed. */
  runsTotal: number | null;
  runsListVersion: number;
  /** Run ids the engine said it does not hold (run.get: not-found), with its message. */
  missingRuns: Record<string, string>;
  setRuns: (runs: RunSummary[], total?: number) => void;
  upsertRun: (run: RunSummary) => void;
  /** The log's count of runs, read again when a run the page did not know appears. */
  setRunsTotal: (total: number) => void;
  noteAppended: (runId: string, lastSeq: number) => void;
  noteRunMissing: (runId: string, message: string) => void;
}

function without(missing: Record<string, string>, runIds: string[]): Record<string, string> {
  if (!runIds.some((id) => id in missing)) return missing;
  const next = { ...missing };
  for (const id of runIds) delete next[id];
  return next;
}

export const createRunsSlice: StateCreator<StudioState, [], [], RunsSlice> = (set) => ({
  runsById: {},
  liveSeqByRun: {},
  runsLoaded: false,
  runsTotal: null,
  runsListVersion: 0,
  missingRuns: {},
  setRuns: (runs, total) =>
    set((state) => {
      const runsById: Record<string, RunSummary> = {};
      // A push may have arrived while the list was in flight: keep whichever is newer.
      for (const run of runs) {
        runsById[run.runId] = fresherSummary(state.runsById[run.runId], run);
      }
      for (const [id, run] of Object.entries(state.runsById)) if (!runsById[id]) runsById[id] = run;
      return {
        runsById,
        runsLoaded: true,
        runsTotal: total ?? state.runsTotal,
        runsListVersion: state.runsListVersion + 1,
        missingRuns: without(state.missingRuns, runs.map((r) => r.runId)),
      };
    }),
  upsertRun: (run) =>
    set((state) => {
      // Pushes and run.get answers can cross: an older summary never replaces a newer one.
      const known = state.runsById[run.runId];
      if (known && isNewerSummary(known, run)) return {};
      const moved = !known || known.status !== run.status || known.failures !== run.failures;
      return {
        runsById: { ...state.runsById, [run.runId]: run },
        missingRuns: without(state.missingRuns, [run.runId]),
        ...(moved ? { runsListVersion: state.runsListVersion + 1 } : {}),
      };
    }),
  setRunsTotal: (total) => set((state) => (state.runsTotal === total ? {} : { runsTotal: total })),
  // The log answered that it holds no such run (a link to a pruned run, a run pruned while open):
  // what the page knew of it goes, so the run-missing page shows rather than a stale header.
  noteRunMissing: (runId, message) =>
    set((state) => {
      const { [runId]: _gone, ...runsById } = state.runsById;
      return { runsById, missingRuns: { ...state.missingRuns, [runId]: message } };
    }),
  noteAppended: (runId, lastSeq) =>
    set((state) => {
      const max = Math.max(state.liveSeqByRun[runId] ?? 0, lastSeq);
      if (max === state.liveSeqByRun[runId]) return {};
      return { liveSeqByRun: { ...state.liveSeqByRun, [runId]: max } };
    }),
});

/**
 * Why a run has nothing to scrub yet: its summary has not arrived ('loading' — not "no events",
 * which said a run that was only loading had none), or it has logged no event ('empty').
 */
export function noEventsReason(state: Pick<RunsSlice, 'runsById' | 'liveSeqByRun'>, runId: string): 'loading' | 'empty' | null {
  if (knownLastSeq(state, runId) >= 1) return null;
  return state.runsById[runId] === undefined ? 'loading' : 'empty';
}

/** The highest seq known for a run, from its summary or from pushes. */
export function knownLastSeq(state: Pick<RunsSlice, 'runsById' | 'liveSeqByRun'>, runId: string | null): number {
  if (!runId) return 0;
  return Math.max(state.runsById[runId]?.lastSeq ?? 0, state.liveSeqByRun[runId] ?? 0);
}
