import { describe, expect, it } from 'vitest';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { StateAtHandler } from '../../engine/inspect/state-at.js';
import { EventBuilder, sampleRun } from './event-builder.js';

const at = (seq: number, options = {}) => runFold(new StateAtHandler(options), sampleRun().events.slice(0, seq));

describe('StateAtHandler', () => {
  it('shows the step being executed with its line and file', () => {
    const state = at(5, { entryFile: 'orders.vague' });
    expect(state.seq).toBe(5);
    expect(state.event?.type).toBe('http.request');
    expect(state.currentStep).toEqual({ stepPath: 'Sync.0', line: 5, file: 'orders.vague' });
    expect(state.response).toBeNull();
  });

  it('takes the response from fetch.completed and variables from step.completed.bind', () => {
    const state = at(12);
    expect(state.response).toEqual([{ id: 'a', n: 1 }, { id: 'b', n: 2 }]);
    expect(state.variables).toEqual({ count: 2 });
    // At its step.completed, the step shown is the one that completed (no step is open).
    expect(state.event?.type).toBe('step.completed');
    expect(state.currentStep).toEqual({ stepPath: 'Sync.1', line: 6, file: '' });
    expect(at(13).currentStep?.stepPath).toBe('Sync.2');
  });

  it('folds store writes, checkpoints and the store kinds the mission declares', () => {
    const mid = at(14, { storeKinds: { orders: 'sql', audit: 'memory' } });
    expect(mid.stores).toEqual([
      { name: 'audit', kind: 'memory', records: [] },
      { name: 'orders', kind: 'sql', records: [{ key: 'a', record: { id: 'a', n: 1 } }] },
    ]);
    const after = at(16);
    expect(after.stores[0]!.records.map((r) => r.key)).toEqual(['a', 'b']);
    expect(after.stores[0]!.kind).toBe('unknown');
    expect(after.checkpoints).toEqual([{ key: 'orders', syncedAt: 1_700_000_000_100 }]);
  });

  it('lists a pending timer until the pause is resumed', () => {
    expect(at(20).pending).toEqual([
      { kind: 'timer', id: 'p1', since: sampleRun().events[18]!.recordedAt, dueAt: 1_700_000_003_000, path: null },
    ]);
    expect(at(22).pending).toEqual([]);
  });

  it('replaces the response with step.completed.response and resets the frame on action.started', () => {
    const log = new EventBuilder();
    log.add('action.started', 'A', { action: 'A', attempt: 1 });
    log.add('step.started', 'A.0', { stepType: 'map', line: 2 });
    log.add('step.completed', 'A.0', { stepType: 'map', response: { mapped: true }, bind: { name: 'x', value: 1 } });
    const inA = runFold(new StateAtHandler(), log.events);
    expect(inA.response).toEqual({ mapped: true });
    expect(inA.variables).toEqual({ x: 1 });
    log.add('action.started', 'B', { action: 'B', attempt: 1 });
    const inB = runFold(new StateAtHandler(), log.events);
    expect(inB.variables).toEqual({});
    expect(inB.response).toBeNull();
    log.add('action.started', 'A', { action: 'A', attempt: 2 });
    expect(runFold(new StateAtHandler(), log.events).variables).toEqual({});
  });

  it('uses the file that declares the action of the current step', () => {
    const log = new EventBuilder();
    log.add('action.started', 'Load', { action: 'Load', attempt: 1 });
    log.add('step.started', 'Load.0', { stepType: 'get', line: 3 });
    const state = runFold(new StateAtHandler({ entryFile: 'm/mission.vague', actionFiles: { Load: 'm/load.vague' } }), log.events);
    expect(state.currentStep).toEqual({ stepPath: 'Load.0', line: 3, file: 'm/load.vague' });
  });

  it('a snapshot is independent of later events', () => {
    const handler = new StateAtHandler();
    const events = sampleRun().events;
    for (const e of events.slice(0, 14)) handler.handleEvent(e);
    const snap = handler.snapshot();
    for (const e of events.slice(14)) handler.handleEvent(e);
    const restored = new StateAtHandler();
    restored.restore(snap);
    expect(restored.data().stores[0]!.records).toHaveLength(1);
    expect(handler.data().stores[0]!.records).toHaveLength(2);
  });
});

describe('StateAtHandler on paginated fetches', () => {
  it('rebuilds the response from the successful pages when fetch.completed has no value', () => {
    const log = new EventBuilder();
    log.add('action.started', 'A', { action: 'A', attempt: 1 });
    log.add('step.started', 'A/0', { stepType: 'get', line: 2 });
    const page = (body: unknown, verdict: 'success' | 'retry') =>
      log.add('http.response', 'A/0', { effectId: 'f', attempt: 1, response: { status: verdict === 'retry' ? 503 : 200, headers: {}, body }, durationMs: 1, verdict });
    page({ orders: [{ id: 1 }, { id: 2 }], page: 1 }, 'success');
    page({ error: 'busy' }, 'retry');
    page({ orders: [{ id: 3 }], page: 2 }, 'success');
    log.add('fetch.completed', 'A/0', { effectId: 'f', pages: 2, status: 200 });
    const state = runFold(new StateAtHandler(), log.events);
    expect(state.response).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
  });

  it("takes a single answer's body from its successful http.response when fetch.completed says valueInAnswer (format 3)", () => {
    const log = new EventBuilder();
    log.add('action.started', 'A', { action: 'A', attempt: 1 });
    log.add('step.started', 'A/0', { stepType: 'get', line: 2 });
    const answer = (body: unknown, verdict: 'success' | 'retry') =>
      log.add('http.response', 'A/0', { effectId: 'f', attempt: 1, response: { status: verdict === 'retry' ? 503 : 200, headers: {}, body }, durationMs: 1, verdict });
    answer({ error: 'busy' }, 'retry');
    answer({ orders: [{ id: 1 }], total: 1 }, 'success');
    log.add('fetch.completed', 'A/0', { effectId: 'f', pages: 1, status: 200, valueInAnswer: true });
    const state = runFold(new StateAtHandler(), log.events);
    // The whole body, as `response` was: not its items, as for pages.
    expect(state.response).toEqual({ orders: [{ id: 1 }], total: 1 });
  });

  it('gathers every page of a paginated fetch, each page an effect id of its own', () => {
    const log = new EventBuilder();
    log.add('action.started', 'A', { action: 'A', attempt: 1 });
    log.add('step.started', 'A/0', { stepType: 'get', line: 2 });
    for (const [i, items] of [[{ id: 1 }], [{ id: 2 }], []].entries()) {
      log.add('http.response', 'A/0', { effectId: `page-${i}`, attempt: 1, response: { status: 200, headers: {}, body: { items } }, durationMs: 1, verdict: 'success' });
    }
    log.add('fetch.completed', 'A/0', { effectId: 'page-0', pages: 3, status: 200 });
    expect(runFold(new StateAtHandler(), log.events).response).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it("a fork's fetch.completed, whose effect id is the fork's while its copied answer keeps the parent's, still shows the answer", () => {
    const log = new EventBuilder();
    log.add('action.started', 'A', { action: 'A', attempt: 1 });
    log.add('step.started', 'A/0', { stepType: 'get', line: 2 });
    log.add('http.response', 'A/0', { effectId: 'ef_parent', attempt: 1, response: { status: 200, headers: {}, body: { secret: 42 } }, durationMs: 1, verdict: 'success' });
    log.add('fetch.completed', 'A/0', { effectId: 'ef_fork', pages: 1, status: 200, valueInAnswer: true });
    expect(runFold(new StateAtHandler(), log.events).response).toEqual({ secret: 42 });
  });
});

