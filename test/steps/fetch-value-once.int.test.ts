/**
 * Log format 3: a single-answer fetch's body is logged once, in its `http.response`; its
 * `fetch.completed` says `valueInAnswer` instead of holding a second copy (a 5 MB answer logged
 * 10 MB). The state the studio folds from the log still shows the whole body as `response`, and
 * when `response` is not that body — a since fetch answered 304 is `[]` — the value is logged.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { StateAtHandler } from '../../engine/inspect/state-at.js';
import { LOG_FORMAT, type StoredEvent } from '../../engine/log/events.js';
import { openConformance, type Conformance } from '../conformance/harness.js';

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
});

afterEach(async () => {
  await c.close();
});

const completedOf = (events: StoredEvent[]) =>
  events.filter((e): e is StoredEvent<'fetch.completed'> => e.type === 'fetch.completed').map((e) => e.payload);

describe('a single answer is logged once', () => {
  it('keeps the body in http.response only, and the fold still shows it as the response', async () => {
    const body = { orders: Array.from({ length: 200 }, (_, i) => ({ id: `o${i}`, note: 'x'.repeat(100) })), total: 200, marker: 'only-in-the-answer' };
    c.api.on('GET /orders', { body });
    const files = c.mission('Once', `mission Once {
  source Api { auth: none, base: "http://unused" }
  store orders: memory("orders")
  action Sync {
    get "/orders"
    store response.orders -> orders { key: .id }
  }
  run Sync
}
`);
    const result = await c.start(files);
    expect(result.status).toBe('completed');
    const events = await c.events(result.runId);
    expect(events[0]).toMatchObject({ type: 'run.started', payload: { format: LOG_FORMAT } });
    expect(LOG_FORMAT).toBeGreaterThanOrEqual(3);
    const [completed] = completedOf(events);
    expect(completed).toMatchObject({ pages: 1, status: 200, valueInAnswer: true });
    expect(completed).not.toHaveProperty('value');
    // The body's text appears in the log once.
    const logged = events.map((e) => JSON.stringify(e.payload)).join('\n');
    expect(logged.split('only-in-the-answer').length - 1).toBe(1);
    expect(Object.keys(await c.store(result.runId, 'orders'))).toHaveLength(200);

    // The state after the fetch (before the store) has the whole body as `response`.
    const fetchEnd = events.find((e) => e.type === 'fetch.completed')!;
    const state = runFold(new StateAtHandler(), events.filter((e) => e.seq <= fetchEnd.seq));
    expect(state.response).toEqual(body);
    await c.expectVerified(result.runId);
  });

  it('logs the value when the response is not the answer body (a since fetch answered 304 is [])', async () => {
    c.api.on('GET /people', [{ body: [{ id: 1 }] }, { status: 304 }]);
    const files = c.mission('Since', `mission Since {
  source Api { auth: none, base: "http://unused" }
  store people: memory("people")
  action Sync {
    get "/people" { since: lastSync("people") { header: "If-Modified-Since" } }
    store response -> people { key: .id }
  }
  run Sync
}
`);
    const first = await c.start(files);
    expect(first.status).toBe('completed');
    const second = await c.start(files);
    expect(second.status).toBe('completed');
    expect(c.api.requests).toHaveLength(2);
    const [notModified] = completedOf(await c.events(second.runId));
    expect(notModified).toMatchObject({ status: 304, value: [] });
    expect(notModified).not.toHaveProperty('valueInAnswer');
    await c.expectVerified(second.runId);
  });
});
