/**
 * A link to a run this log does not hold (#run=nope: pruned, another database, a typo) opened a
 * page that said "loading run…" for ever and, on the State tab, "This run has no events yet" —
 * as if the run existed and were starting. The engine answers run.get with not-found; the store
 * keeps that answer per run id and the page says it (App shows runMissing instead of the run's
 * views). A summary of that run arriving later (it was started, imported) clears it.
 */
import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../renderer/src/lib/protocol.js';
import { createStudioStore } from '../../renderer/src/store/studio-store.js';

const summary = (runId: string): RunSummary => ({
  runId, mission: 'M', status: 'running', startedAt: 1, updatedAt: 2, durationMs: 0, steps: 0, effects: 0, crashesSurvived: 0, resumes: 0,
  lastSeq: 1, waitingOn: null, waitingSince: null, wakeAt: null, error: null, failures: 0, firstFailure: null,
});

describe('a run the log does not hold', () => {
  it('is remembered with the engine\'s message, and forgotten when the run appears', () => {
    const store = createStudioStore();
    store.getState().selectRun('nope');
    store.getState().noteRunMissing('nope', 'no run "nope" in this database; list runs with runs.list');
    expect(store.getState().missingRuns.nope).toBe('no run "nope" in this database; list runs with runs.list');
    store.getState().upsertRun(summary('nope'));
    expect(store.getState().missingRuns.nope).toBeUndefined();
    store.getState().noteRunMissing('gone', 'no run "gone"');
    store.getState().setRuns([summary('gone')]);
    expect(store.getState().missingRuns.gone).toBeUndefined();
  });
});
