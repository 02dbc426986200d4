/**
 * assets/language/wait-shorthands.vague run end to end: `retryOnTimeout` retries the action when
 * its wait times out with no event, and `storage: events` stores the event the retried wait takes
 * under its event id. Deliveries go through the real webhook server on 127.0.0.1; the worker
 * wakes the run at the timeout and at the delivery.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { startWebhookServer, type WebhookServer } from '../../engine/worker/webhook-server.js';
import { Worker } from '../../engine/worker/worker.js';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/wait-shorthands.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;
let worker: Worker;
let hooks: WebhookServer;
let looping: Promise<void>;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('POST /shipped', { status: 201, body: { ok: true } });
  worker = new Worker({ log: c.log, env: c.env, dataDir: c.dataDir, owner: 'wait-shorthands-worker', pollMs: 20 });
  hooks = await startWebhookServer({ log: c.log, env: c.env, worker, dataDir: c.dataDir, port: 0 });
  // The worker's loop wakes the run when its wait times out.
  looping = worker.loop(false);
});

afterEach(async () => {
  worker.stop();
  await looping;
  await worker.drain();
  await hooks.close();
  await c.close();
});

/** Polls (real time) until `done` holds for the run's events, at most ~20 s. */
async function until(runId: string, done: (events: StoredEvent[]) => boolean): Promise<StoredEvent[]> {
  for (let i = 0; i < 800; i++) {
    const events = await c.events(runId);
    if (done(events)) return events;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`run ${runId} never got there: ${(await c.events(runId)).map((e) => e.type).join(', ')}`);
}

describe('wait shorthands in a run', () => {
  it('retryOnTimeout retries the action after a timeout; storage: events stores the event the retry takes', async () => {
    const result = await c.start(files());
    expect(result.status).toBe('suspended');
    // The first wait times out with no event, and the action's second attempt waits again.
    await until(result.runId, (events) => events.filter((e) => e.type === 'wait.registered').length === 2);
    const events = await c.events(result.runId);
    expect(events.filter((e) => e.type === 'wait.completed').map((e) => (e.payload as { timedOut: boolean }).timedOut)).toEqual([true]);
    expect(events.filter((e) => e.type === 'action.retrying').map((e) => (e.payload as { attempt: number }).attempt)).toEqual([2]);
    const res = await fetch(`${hooks.url}/hooks/ship`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'ship-1' },
      body: JSON.stringify({ id: 'ev1', order: 'o1' }),
    });
    expect(res.status).toBe(202);
    await until(result.runId, (events) => events.at(-1)?.type === 'run.completed' || events.at(-1)?.type === 'run.failed');
    expect((await c.log.getRun(result.runId))!.status).toBe('completed');
    const stored = await c.store(result.runId, 'events');
    // Under its event id, as `storage: { target: events }` stores it.
    const received = (await c.events(result.runId)).filter((e) => e.type === 'webhook.received').map((e) => (e.payload as { eventId: string }).eventId);
    expect(received).toHaveLength(1);
    expect(stored).toEqual({ [received[0]!]: { id: 'ev1', order: 'o1' } });
    expect(c.api.requests.map((r) => [r.method, r.url, r.body])).toEqual([['POST', '/shipped', { got: 1 }]]);
    await worker.drain();
    await c.expectVerified(result.runId);
  });

  it('a wait with no path: its retries listen on the path its first attempt gave out, and take a late delivery there (helper 82)', async () => {
    // Each attempt listened on a path of its own: the sender, given the first URL, delivered there
    // after the first attempt timed out, was answered 202, and the run failed with the delivery kept.
    const text = fs.readFileSync(ENTRY, 'utf8').replace('path: "/hooks/ship",\n', '');
    const entry = path.join(c.dir, 'generated.vague');
    fs.writeFileSync(entry, text);
    const result = await c.start({ entry, files: [{ path: entry, text }] });
    expect(result.status).toBe('suspended');
    await until(result.runId, (events) => events.filter((e) => e.type === 'wait.registered').length === 2);
    const paths = (await c.events(result.runId)).filter((e) => e.type === 'wait.registered').map((e) => (e.payload as { path: string }).path);
    expect(paths[1]).toBe(paths[0]);
    const res = await fetch(`${hooks.url}${paths[0]}`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'late-1' }, body: JSON.stringify({ id: 'ev1' }) });
    expect(res.status).toBe(202);
    await until(result.runId, (events) => events.at(-1)?.type === 'run.completed' || events.at(-1)?.type === 'run.failed');
    expect((await c.log.getRun(result.runId))!.status).toBe('completed');
    await worker.drain();
    await c.expectVerified(result.runId);
  });
});
