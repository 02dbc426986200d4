/**
 * Hand-written event sequences for the inspector tests: `log.add(type, stepPath, payload)` assigns
 * seq 1, 2, 3… and a recordedAt 10 ms apart, like a real log would.
 */
import type { EventPayloads, EventType, StoredEvent } from '../../engine/log/events.js';

export class EventBuilder {
  readonly events: StoredEvent[] = [];
  private at: number;

  constructor(
    readonly runId = 'run-1',
    start = 1_700_000_000_000,
  ) {
    this.at = start;
  }

  add<T extends EventType>(type: T, stepPath: string, payload: EventPayloads[T], advanceMs = 10): StoredEvent<T> {
    this.at += advanceMs;
    const event: StoredEvent<T> = { runId: this.runId, seq: this.events.length + 1, type, stepPath, payload, recordedAt: this.at };
    this.events.push(event as StoredEvent);
    return event;
  }

  get lastSeq(): number {
    return this.events.length;
  }
}

/** A small complete run: fetch, map, store two records, a pause, a crash and a resume. */
export function sampleRun(): EventBuilder {
  const log = new EventBuilder();
  log.add('run.started', '', { mission: 'Orders', missionHash: 'h1' }); // 1
  log.add('stage.started', '', { index: 0, actions: ['Sync'] }); // 2
  log.add('action.started', 'Sync', { action: 'Sync', attempt: 1 }); // 3
  log.add('step.started', 'Sync.0', { stepType: 'get', line: 5 }); // 4
  log.add('http.request', 'Sync.0', { effectId: 'e1', attempt: 1, request: { method: 'GET', url: 'http://api/orders', headers: {} } }); // 5
  log.add('http.error', 'Sync.0', { effectId: 'e1', attempt: 1, error: { code: 'http.503', message: 'HTTP 503' }, durationMs: 4, verdict: 'retry', retryInMs: 100 }); // 6
  log.add('http.request', 'Sync.0', { effectId: 'e1', attempt: 2, request: { method: 'GET', url: 'http://api/orders', headers: {} } }); // 7
  log.add('http.response', 'Sync.0', { effectId: 'e1', attempt: 2, response: { status: 200, headers: {}, body: { items: [] } }, durationMs: 3, verdict: 'success' }); // 8
  log.add('fetch.completed', 'Sync.0', { effectId: 'e1', pages: 1, status: 200, value: [{ id: 'a', n: 1 }, { id: 'b', n: 2 }] }); // 9
  log.add('step.completed', 'Sync.0', { stepType: 'get' }); // 10
  log.add('step.started', 'Sync.1', { stepType: 'let', line: 6 }); // 11
  log.add('step.completed', 'Sync.1', { stepType: 'let', bind: { name: 'count', value: 2 } }); // 12
  log.add('step.started', 'Sync.2', { stepType: 'store', line: 7 }); // 13
  log.add('store.write', 'Sync.2', { effectId: 's1', store: 'orders', key: 'a', record: { id: 'a', n: 1 }, op: 'set' }); // 14
  log.add('store.write', 'Sync.2', { effectId: 's1', store: 'orders', key: 'b', record: { id: 'b', n: 2 }, op: 'set' }); // 15
  log.add('checkpoint.advanced', 'Sync.2', { key: 'orders', syncedAt: 1_700_000_000_100, records: 2 }); // 16
  log.add('step.completed', 'Sync.2', { stepType: 'store' }); // 17
  log.add('step.started', 'Sync.3', { stepType: 'pause', line: 8 }); // 18
  log.add('pause.created', 'Sync.3', { pauseId: 'p1', dueAt: 1_700_000_003_000 }); // 19
  log.add('run.suspended', '', { reason: 'timer', dueAt: 1_700_000_003_000 }); // 20
  log.add('run.resumed', '', { reason: 'pause', owner: 'w1', replayFromSeq: 20 }, 3000); // 21
  log.add('pause.resumed', 'Sync.3', { pauseId: 'p1', by: 'timer' }); // 22
  log.add('step.completed', 'Sync.3', { stepType: 'pause' }); // 23
  log.add('step.started', 'Sync.4', { stepType: 'post', line: 9 }); // 24
  log.add('http.request', 'Sync.4', { effectId: 'e2', attempt: 1, request: { method: 'POST', url: 'http://api/ack', headers: {} }, idempotencyKey: 'k2' }); // 25
  log.add('run.resumed', '', { reason: 'crash', owner: 'w2', replayFromSeq: 25 }); // 26
  log.add('step.started', 'Sync.4', { stepType: 'post', line: 9 }); // 27
  log.add('http.request', 'Sync.4', { effectId: 'e2', attempt: 1, request: { method: 'POST', url: 'http://api/ack', headers: {} }, idempotencyKey: 'k2' }); // 28
  log.add('http.response', 'Sync.4', { effectId: 'e2', attempt: 1, response: { status: 201, headers: {}, body: { ok: true } }, durationMs: 2, verdict: 'success' }); // 29
  log.add('fetch.completed', 'Sync.4', { effectId: 'e2', pages: 1, status: 201, value: { ok: true } }); // 30
  log.add('step.completed', 'Sync.4', { stepType: 'post' }); // 31
  log.add('action.completed', 'Sync', { action: 'Sync', outcome: 'done' }); // 32
  log.add('stage.completed', '', { index: 0 }); // 33
  log.add('run.completed', '', { actionsRun: ['Sync'] }); // 34
  return log;
}
