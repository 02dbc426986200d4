/**
 * The studio store's slices: runs merged from list and pushes (a newer push is not overwritten by
 * an older list), live seqs from appended events, selection moving the scrubber, clamped keyboard
 * stepping, and the pin of "compare with…".
 */
import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../renderer/src/lib/protocol.js';
import { createStudioStore } from '../../renderer/src/store/studio-store.js';
import { knownLastSeq } from '../../renderer/src/store/runs-slice.js';
import { clampSeq } from '../../renderer/src/store/scrub-slice.js';

function summary(runId: string, updatedAt: number, over: Partial<RunSummary> = {}): RunSummary {
  return {
    runId, mission: 'M', status: 'running', startedAt: 1, updatedAt, durationMs: 0, steps: 0, effects: 0, crashesSurvived: 0, resumes: 0,
    lastSeq: 10, waitingOn: null, waitingSince: null, wakeAt: null, error: null, failures: 0, firstFailure: null, ...over,
  };
}



describe('runs slice', () => {
  it('keeps a pushed summary that is newer than the list that arrives after it', () => {
    const store = createStudioStore();
    store.getState().upsertRun(summary('a', 200, { status: 'completed' }));
    store.getState().setRuns([summary('a', 100), summary('b', 100)]);
    expect(store.getState().runsById.a!.status).toBe('completed');
    expect(Object.keys(store.getState().runsById).sort()).toEqual(['a', 'b']);
    expect(store.getState().runsLoaded).toBe(true);
  });

  it('ignores a summary older than the one it has (a slow run.get after a push)', () => {
    const store = createStudioStore();
    store.getState().upsertRun(summary('a', 300, { status: 'suspended' }));
    store.getState().upsertRun(summary('a', 250, { status: 'running' }));
    expect(store.getState().runsById.a!.status).toBe('suspended');
    store.getState().upsertRun(summary('a', 400, { status: 'completed' }));
    expect(store.getState().runsById.a!.status).toBe('completed');
  });

  it('keeps the later-composed of two summaries of one record: a run.get answer that crossed the push saying the run is orphaned', () => {
    const store = createStudioStore();
    // The push (composed after the owner died) arrives first; the answer, composed before, after it.
    store.getState().upsertRun(summary('a', 300, { orphaned: true, composedAt: 2_000 }));
    store.getState().upsertRun(summary('a', 300, { composedAt: 1_000 }));
    expect(store.getState().runsById.a!.orphaned).toBe(true);
    store.getState().setRuns([summary('a', 300, { composedAt: 1_500 })]);
    expect(store.getState().runsById.a!.orphaned).toBe(true);
    // A later composition of the same record stands, whichever way it goes.
    store.getState().upsertRun(summary('a', 300, { composedAt: 3_000 }));
    expect(store.getState().runsById.a!.orphaned).toBeUndefined();
    // The record decides before the stamp: more events win over a later stamp.
    store.getState().upsertRun(summary('a', 300, { lastSeq: 11, composedAt: 2_500 }));
    expect(store.getState().runsById.a!.lastSeq).toBe(11);
    store.getState().upsertRun(summary('a', 300, { lastSeq: 10, composedAt: 9_000 }));
    expect(store.getState().runsById.a!.lastSeq).toBe(11);
  });

  it('counts the runs the list says the log holds, and asks the table to read its pages again when a run appears or moves', () => {
    const store = createStudioStore();
    store.getState().setRuns([summary('a', 100)], 5_000);
    expect(store.getState().runsTotal).toBe(5_000);
    const listed = store.getState().runsListVersion;
    // The same run, newer but in the same place of every filter: the pages hold it already.
    store.getState().upsertRun(summary('a', 150));
    expect(store.getState().runsListVersion).toBe(listed);
    // A status change may move it out of (or into) a filter; a new run shifts every page.
    store.getState().upsertRun(summary('a', 160, { status: 'completed' }));
    expect(store.getState().runsListVersion).toBe(listed + 1);
    store.getState().upsertRun(summary('a', 170, { status: 'completed', failures: 2 }));
    expect(store.getState().runsListVersion).toBe(listed + 2);
    store.getState().upsertRun(summary('new', 1));
    expect(store.getState().runsListVersion).toBe(listed + 3);
    // A list without a total keeps the one it had.
    store.getState().setRuns([summary('a', 180, { status: 'completed', failures: 2 })]);
    expect(store.getState().runsTotal).toBe(5_000);
  });

  it('tracks the highest seq appended, never below the summary', () => {
    const store = createStudioStore();
    store.getState().upsertRun(summary('a', 1, { lastSeq: 10 }));
    store.getState().noteAppended('a', 14);
    store.getState().noteAppended('a', 12);
    expect(knownLastSeq(store.getState(), 'a')).toBe(14);
    store.getState().upsertRun(summary('a', 2, { lastSeq: 20 }));
    expect(knownLastSeq(store.getState(), 'a')).toBe(20);
    expect(knownLastSeq(store.getState(), null)).toBe(0);
  });
});

describe('selection and scrub slices', () => {
  it('moves the scrubber with the selected seq and resets both on a new run', () => {
    const store = createStudioStore();
    store.getState().selectRun('a');
    store.getState().selectSeq(7);
    expect(store.getState().scrubSeq).toBe(7);
    store.getState().pin(3);
    store.getState().selectRun('b');
    expect(store.getState()).toMatchObject({ selectedRunId: 'b', selectedSeq: null, scrubSeq: null, pinnedSeq: null });
  });

  it('steps within [1, lastSeq], starting from the end when following', () => {
    const store = createStudioStore();
    store.getState().stepScrub(-1, 50);
    expect(store.getState().scrubSeq).toBe(49);
    store.getState().stepScrub(+10, 50);
    expect(store.getState().scrubSeq).toBe(50);
    store.getState().stepScrub(-100, 50);
    expect(store.getState().scrubSeq).toBe(1);
    expect(store.getState().selectedSeq).toBe(1);
    expect(clampSeq(0, 0)).toBe(0);
    expect(clampSeq(3.6, 10)).toBe(4);
  });
});
