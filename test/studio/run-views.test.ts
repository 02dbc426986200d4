/**
 * A run's view in the studio (engine/server/run-views.ts) builds its costlier folds on first use
 * and then feeds them incrementally: whenever events arrive in pieces, and whichever view was
 * asked first, the timeline window, the timeline model, the state at a seq and the events held
 * equal what fresh folds of the same events give.
 */
import { describe, expect, it } from 'vitest';
import { RunFoldCache } from '../../engine/inspect/fold-cache.js';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { TimelineHandler } from '../../engine/inspect/timeline.js';
import { TimelineWindowIndex } from '../../engine/inspect/timeline-window.js';
import { outlineMission } from '../../engine/inspect/mission-outline.js';
import type { EventLog, RunRecord } from '../../engine/log/log.js';
import { StateAtHandler } from '../../engine/inspect/state-at.js';
import { FINISHED_VIEWS_KEPT, RunView, RunViews, VIEW_IDLE_MS, WARM_SLICE } from '../../engine/server/run-views.js';
import { EventBuilder, sampleRun } from './event-builder.js';

const record: RunRecord = {
  runId: 'run-1',
  mission: 'Orders',
  missionHash: 'h1',
  missionFiles: { entry: 'orders.vague', files: [{ path: 'orders.vague', text: 'mission Orders {}\n' }] },
  options: { sources: {}, env: {} },
  status: 'running',
  createdAt: 0,
  updatedAt: 0,
  lastSeq: 0,
  owner: null,
  leaseEpoch: 0,
  leaseExpiresAt: null,
  wakeAt: null,
  waitingOn: null,
};

describe('RunView', () => {
  it('keeps lazily built timeline and state folds equal to fresh folds as events arrive in pieces', () => {
    const events = sampleRun().events;
    const view = new RunView(record);
    view.append(events.slice(0, 12));
    // The timeline is asked for first, half-way through the run …
    const early = view.timelineWindow({ axis: 'seq' });
    expect(early.lastSeq).toBe(12);
    expect(early).toEqual(new TimelineWindowIndex(runFold(new TimelineHandler('run-1'), events.slice(0, 12))).window({ axis: 'seq' }));
    view.append(events.slice(12, 25));
    // … the state fold only now, and both are fed what arrives afterwards.
    expect(view.cache.stateAt(20)).toEqual(freshState(events, 20));
    expect(view.append(events.slice(20))).toHaveLength(events.length - 25);
    expect(view.lastSeq).toBe(events.length);

    const fresh = runFold(new TimelineHandler('run-1'), events);
    expect(view.timelineData()).toEqual(fresh);
    expect(view.timelineWindow({ axis: 'time', px: 200 })).toEqual(new TimelineWindowIndex(fresh).window({ axis: 'time', px: 200 }));
    expect(view.cache.stateAt(events.length)).toEqual(freshState(events, events.length));
    expect(view.slice(30, 3).map((e) => e.seq)).toEqual([30, 31, 32]);
    expect(view.slice(1, 1_000)).toHaveLength(events.length);
  });

  it('does not answer a window of an older head after new events arrived', () => {
    const events = sampleRun().events;
    const view = new RunView(record);
    view.append(events.slice(0, 10));
    const before = view.timelineWindow({ axis: 'seq', px: 100 });
    view.append(events.slice(10));
    const after = view.timelineWindow({ axis: 'seq', px: 100 });
    expect(before.lastSeq).toBe(10);
    expect(after.lastSeq).toBe(events.length);
    expect(after.barCount).toBeGreaterThan(before.barCount);
  });
});

describe('RunView.warmState', () => {
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

  it('folds State in the background a slice per turn, takes what arrives meanwhile, and equals a fresh fold', async () => {
    const log = new EventBuilder('run-1');
    log.add('run.started', '', { mission: 'Orders', missionHash: 'h1' });
    for (let i = 0; log.lastSeq < 3 * WARM_SLICE + 500; i += 1) {
      log.add('store.write', 'Sync/0', { effectId: `e${i}`, store: 'orders', key: `o${i % 700}`, record: { i }, op: 'set' });
    }
    const view = new RunView(record);
    view.append(log.events.slice(0, 2 * WARM_SLICE));
    // Held, not folded: listing runs reads views without paying for their State.
    expect(view.stateFolded).toBe(0);
    view.warmState();
    view.warmState(); // a second open while warming starts nothing more
    expect(view.stateFolded).toBe(0);
    await turn();
    expect(view.stateFolded).toBe(WARM_SLICE);
    view.append(log.events.slice(2 * WARM_SLICE));
    for (let i = 0; i < 10 && view.stateFolded < log.lastSeq; i += 1) await turn();
    expect(view.stateFolded).toBe(log.lastSeq);
    expect(view.cache.stateAt(log.lastSeq)).toEqual(runFold(new StateAtHandler(outlineMission(record.missionFiles), 'run-1'), log.events));
    expect(view.cache.stateAt(WARM_SLICE + 3)).toEqual(runFold(new StateAtHandler(outlineMission(record.missionFiles), 'run-1'), log.events.slice(0, WARM_SLICE + 3)));
  });

  it('`cache` folds at once what warming has not reached yet', async () => {
    const events = sampleRun().events;
    const view = new RunView(record);
    view.append(events);
    view.warmState();
    expect(view.cache.stateAt(events.length)).toEqual(runFold(new StateAtHandler(outlineMission(record.missionFiles), 'run-1'), events));
    expect(view.stateFolded).toBe(events.length);
    await turn();
    expect(view.stateFolded).toBe(events.length);
  });
});

function freshState(events: ReturnType<typeof sampleRun>['events'], seq: number) {
  const cache = new RunFoldCache('run-1', outlineMission(record.missionFiles));
  cache.append(events.slice(0, seq));
  return cache.stateAt(seq);
}

describe('RunViews: which views are kept', () => {
  // A log of runs, each a few events long; `reads` counts the whole-log reads (a view made anew).
  function fakeLog(statuses: Record<string, RunRecord['status']>) {
    const reads: string[] = [];
    const events = sampleRun().events;
    const log = {
      getRun: (runId: string) => Promise.resolve(statuses[runId] === undefined ? undefined : { ...record, runId, status: statuses[runId]!, lastSeq: events.length }),
      read: (runId: string, opts: { fromSeq: number }) => {
        if (opts.fromSeq === 1) reads.push(runId);
        return Promise.resolve(events.filter((e) => e.seq >= opts.fromSeq).map((e) => ({ ...e, runId })));
      },
    } as unknown as EventLog;
    return { log, reads };
  }

  it('keeps the most recently used finished runs, and drops a view left unused, whatever its status', async () => {
    const statuses: Record<string, RunRecord['status']> = { live: 'running' };
    for (let i = 0; i < FINISHED_VIEWS_KEPT + 3; i++) statuses[`done${i}`] = i % 2 === 0 ? 'completed' : 'failed';
    const { log, reads } = fakeLog(statuses);
    let now = 0;
    const views = new RunViews(log, () => now);
    await views.get('live');
    for (let i = 0; i < FINISHED_VIEWS_KEPT + 3; i++) {
      now += 1_000;
      await views.get(`done${i}`);
      await views.get('live'); // the live poll reads a running run on every tick
    }
    // The running run and the last FINISHED_VIEWS_KEPT finished ones are held; the first three were dropped.
    expect(views.size).toBe(FINISHED_VIEWS_KEPT + 1);
    expect(views.peek('done0')).toBeUndefined();
    expect(views.peek('done2')).toBeUndefined();
    expect(views.peek('done3')).toBeDefined();
    // Asked for again, a dropped run is read anew, whole; a held one only past what it holds.
    reads.length = 0;
    expect((await views.get('done0')).lastSeq).toBe(sampleRun().events.length);
    await views.get('done8');
    expect(reads).toEqual(['done0']);
    // Unused for VIEW_IDLE_MS, every view goes; one used meanwhile stays.
    now += VIEW_IDLE_MS - 1;
    await views.get('live');
    now += 2;
    views.sweep();
    expect([...['live', 'done0', 'done8'].filter((id) => views.peek(id) !== undefined)]).toEqual(['live']);
    expect(views.size).toBe(1);
  });
});
