/**
 * The Events list's renderer helpers: the line each event's row says (eventLine), the step filter
 * for "this step, every iteration" (everyIteration), and the store's one shape for "no filter"
 * (setEventFilter drops empty parts and sorts types, so the URL and the engine's search key agree).
 */
import { describe, expect, it } from 'vitest';
import { eventLine, everyIteration } from '../../renderer/src/lib/event-line.js';
import { createStudioStore } from '../../renderer/src/store/studio-store.js';
import type { StoredEvent } from '../../renderer/src/lib/protocol.js';

const ev = (type: string, payload: unknown, stepPath = 'Sync/1[3]/0'): StoredEvent => ({ runId: 'r', seq: 1, type, stepPath, payload, recordedAt: 0 }) as StoredEvent;

describe('eventLine', () => {
  it('says what a request, an answer, a store write and a failure did', () => {
    expect(eventLine(ev('http.request', { effectId: 'e', attempt: 1, request: { method: 'POST', url: 'http://127.0.0.1:9/confirmations?x=1', headers: {} } }))).toBe('POST /confirmations?x=1');
    expect(eventLine(ev('http.response', { effectId: 'e', attempt: 1, response: { status: 422, headers: {}, body: {} }, durationMs: 3, verdict: 'fail' }))).toBe('→ 422 fail');
    expect(eventLine(ev('store.write', { effectId: 'e', store: 'orders', key: 'o-1', record: {}, op: 'set' }))).toBe('orders ← o-1');
    expect(eventLine(ev('step.failed', { stepType: 'validate', error: { code: 'E_VALIDATE', message: 'amount must be > 0 (got -3)' } }))).toBe('amount must be > 0 (got -3)');
    expect(eventLine(ev('loop.iteration', { index: 3, key: 'o-1004', skipped: true }))).toBe('[3] o-1004 (skipped)');
    expect(eventLine(ev('run.started', { mission: 'M', missionHash: 'h', forkedFrom: { runId: 'p', atSeq: 40 } }, ''))).toBe('M, forked from p at #40');
    // A relative URL (no base) is shown as it is.
    expect(eventLine(ev('http.request', { effectId: 'e', attempt: 1, request: { method: 'GET', url: '/orders', headers: {} } }))).toBe('GET /orders');
    expect(eventLine(ev('stage.completed', { index: 0 }, ''))).toBe('');
  });
});

describe('everyIteration', () => {
  it('puts * for each iteration index, and is null outside a loop', () => {
    expect(everyIteration('Sync/1[4]/0[2]/1')).toBe('Sync/1[*]/0[*]/1');
    expect(everyIteration('Sync/1[12345]')).toBe('Sync/1[*]');
    expect(everyIteration('Sync/1>0/2')).toBeNull();
    expect(everyIteration('')).toBeNull();
  });
});

describe('the Events filter in the store', () => {
  it('drops empty parts and sorts types, and is kept when another run is opened', () => {
    const store = createStudioStore();
    store.getState().setEventFilter({ types: ['store.write', 'http.request'], step: '', text: '' });
    expect(store.getState().eventFilter).toEqual({ types: ['http.request', 'store.write'] });
    store.getState().setEventFilter({ types: [], step: 'Sync/1[*]/0', text: 'o-1' });
    expect(store.getState().eventFilter).toEqual({ step: 'Sync/1[*]/0', text: 'o-1' });
    store.getState().selectRun('another');
    expect(store.getState().eventFilter).toEqual({ step: 'Sync/1[*]/0', text: 'o-1' });
    store.getState().setEventFilter({});
    expect(store.getState().eventFilter).toEqual({});
  });
});
