/**
 * Studio inspector speed on a long run: a synthetic 100k-event log (paged fetches, a loop of
 * POSTs, store writes over 5k keys, binds, checkpoints, a pause and a crash/resume) is folded into
 * the timeline model, loaded into the fold cache, and asked for the state at 100 random seqs.
 * Targets (printed, not asserted): state-at-seq p95 well under 50 ms.
 */
import { performance } from 'node:perf_hooks';
import type { EventPayloads, EventType, StoredEvent } from '../../engine/log/events.js';
import { RunFoldCache } from '../../engine/inspect/fold-cache.js';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { TimelineHandler } from '../../engine/inspect/timeline.js';
import type { BenchResult } from './bench-types.js';
// The same positions every bench run.
import { prng } from '../support/prng.js';

const EVENTS = 100_000;
const QUERIES = 100;


export function syntheticRun(total: number): StoredEvent[] {
  const events: StoredEvent[] = [];
  let at = 1_700_000_000_000;
  const add = <T extends EventType>(type: T, stepPath: string, payload: EventPayloads[T]) => {
    at += 3;
    events.push({ runId: 'bench', seq: events.length + 1, type, stepPath, payload, recordedAt: at } as StoredEvent);
  };
  add('run.started', '', { mission: 'Bench', missionHash: 'h' });
  add('stage.started', '', { index: 0, actions: ['Sync'] });
  add('action.started', 'Sync', { action: 'Sync', attempt: 1 });
  add('step.started', 'Sync/0', { stepType: 'for', line: 4 });
  // One iteration adds at most 14 events; stop early enough to land on `total` exactly.
  for (let i = 0; events.length < total - 4 - 14; i += 1) {
    const p = `Sync/0[${i}]`;
    add('step.started', `${p}/0`, { stepType: 'post', line: 5 });
    add('http.request', `${p}/0`, { effectId: `e${i}`, attempt: 1, idempotencyKey: `k${i}`, request: { method: 'POST', url: `http://api/orders/${i}`, headers: {}, body: { n: i } } });
    if (i % 97 === 0) add('http.error', `${p}/0`, { effectId: `e${i}`, attempt: 1, error: { code: 'http.503', message: 'HTTP 503' }, durationMs: 4, verdict: 'retry', retryInMs: 50 });
    add('http.response', `${p}/0`, { effectId: `e${i}`, attempt: 1, response: { status: 201, headers: {}, body: { id: i } }, durationMs: 2, verdict: 'success' });
    add('fetch.completed', `${p}/0`, { effectId: `e${i}`, pages: 1, status: 201, value: { id: i, ok: true } });
    add('step.completed', `${p}/0`, { stepType: 'post' });
    add('step.started', `${p}/1`, { stepType: 'store', line: 6 });
    add('store.write', `${p}/1`, { effectId: `s${i}`, store: i % 2 === 0 ? 'orders' : 'audit', key: `o${i % 5000}`, record: { id: i % 5000, total: i, tag: `t${i % 13}` }, op: 'set' });
    add('step.completed', `${p}/1`, { stepType: 'store', bind: { name: 'last', value: i } });
    if (i % 500 === 0) add('checkpoint.advanced', `${p}/1`, { key: 'orders', syncedAt: at });
    if (i === 4000) {
      add('pause.created', `${p}/1`, { pauseId: 'p1', dueAt: at + 3000 });
      add('run.suspended', '', { reason: 'timer', dueAt: at + 3000 });
      add('run.resumed', '', { reason: 'pause', owner: 'w2', replayFromSeq: events.length });
      add('pause.resumed', `${p}/1`, { pauseId: 'p1', by: 'timer' });
    }
    if (i === 9000) add('run.resumed', '', { reason: 'crash', owner: 'w3', replayFromSeq: events.length });
  }
  while (events.length < total - 4) add('value.recorded', 'Sync/0', { source: 'now', value: at });
  add('step.completed', 'Sync/0', { stepType: 'for' });
  add('action.completed', 'Sync', { action: 'Sync', outcome: 'done' });
  add('stage.completed', '', { index: 0 });
  add('run.completed', '', { actionsRun: ['Sync'] });
  return events;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function benchmarks(): Promise<BenchResult[]> {
  const events = syntheticRun(EVENTS);

  let t = performance.now();
  const model = runFold(new TimelineHandler('bench'), events);
  const timelineMs = performance.now() - t;

  t = performance.now();
  const cache = new RunFoldCache('bench', { storeKinds: { orders: 'sql', audit: 'memory' } });
  cache.append(events);
  const cacheMs = performance.now() - t;

  const random = prng(42);
  const latencies: number[] = [];
  for (let q = 0; q < QUERIES; q += 1) {
    const seq = 1 + Math.floor(random() * events.length);
    const start = performance.now();
    const state = cache.stateAt(seq);
    latencies.push(performance.now() - start);
    if (state.seq !== seq) throw new Error(`state at ${seq} answered seq ${state.seq}`);
  }
  latencies.sort((a, b) => a - b);
  if (model.bars.length === 0) throw new Error('timeline of the synthetic run has no bars');

  return [
    { name: 'studio: events in synthetic run', value: events.length, unit: 'events' },
    { name: 'studio: timeline model build (100k events)', value: timelineMs, unit: 'ms' },
    { name: 'studio: fold cache load (100k events)', value: cacheMs, unit: 'ms' },
    { name: 'studio: state-at-seq p50', value: percentile(latencies, 50), unit: 'ms' },
    { name: 'studio: state-at-seq p95 (target < 50)', value: percentile(latencies, 95), unit: 'ms' },
  ];
}
