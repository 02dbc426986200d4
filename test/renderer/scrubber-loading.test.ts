/**
 * The State tab said "This run has no events yet." while the run was still loading (its summary
 * not yet arrived; the header said "loading run…"). It now says loading until the summary comes,
 * and "no events" only for a run known to have logged none.
 */
import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../renderer/src/lib/protocol.js';
import { noEventsReason } from '../../renderer/src/store/runs-slice.js';
import { createStudioStore } from '../../renderer/src/store/studio-store.js';

const summary = (runId: string, lastSeq: number): RunSummary => ({
  runId, mission: 'M', status: 'running', startedAt: 1, updatedAt: 2, durationMs: 0, steps: 0, effects: 0, crashesSurvived: 0, resumes: 0,
  lastSeq, waitingOn: null, waitingSince: null, wakeAt: null, error: null, failures: 0, firstFailure: null,
});

describe('why the State tab has nothing to scrub', () => {
  it('is loading before the run summary arrives, empty for a run of no events, nothing once it has events', () => {
    const store = createStudioStore();
    expect(noEventsReason(store.getState(), 'r')).toBe('loading');
    store.getState().setRuns([summary('r', 0)]);
    expect(noEventsReason(store.getState(), 'r')).toBe('empty');
    store.getState().setRuns([summary('r', 7)]);
    expect(noEventsReason(store.getState(), 'r')).toBeNull();
  });
});
