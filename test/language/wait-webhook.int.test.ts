/**
 * assets/language/wait-webhook.vague: the events a `wait` received are `webhook` to the steps
 * after it — a match subject, fields in a store record, a path parameter and a request body —
 * replacing the mission's own earlier `let webhook`. Deliveries go through the real webhook server
 * on 127.0.0.1 into the log's inbox, and the worker wakes the run; a delivery the filter refuses
 * is not the one the wait takes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startWebhookServer, type WebhookServer } from '../../engine/worker/webhook-server.js';
import { Worker } from '../../engine/worker/worker.js';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/wait-webhook.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;
let worker: Worker;
let hooks: WebhookServer;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('POST /orders/o7/paid', { body: { ok: true } });
  worker = new Worker({ log: c.log, env: c.env, dataDir: c.dataDir, owner: 'wait-webhook-worker' });
  hooks = await startWebhookServer({ log: c.log, env: c.env, worker, dataDir: c.dataDir, port: 0 });
});

afterEach(async () => {
  worker.stop();
  await worker.drain();
  await hooks.close();
  await c.close();
});

async function deliver(body: unknown, key: string): Promise<number> {
  const res = await fetch(`${hooks.url}/hooks/order`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  return res.status;
}

/** Waits (real time) until the run is no longer suspended or running, then until the worker is idle. */
async function settled(runId: string): Promise<void> {
  for (let i = 0; i < 400 && ['suspended', 'running'].includes((await c.log.getRun(runId))!.status); i++) await new Promise((r) => setTimeout(r, 25));
  await worker.drain();
}

describe('`webhook` after a wait', () => {
  it('names the received event in match, store, path and body, and replays clean', async () => {
    const result = await c.start(files());
    expect(result.status).toBe('suspended');
    expect(await deliver({ id: 'ev0', order: 'o1', kind: 'paid', amount: 1 }, 'd0')).toBe(202);
    expect(await deliver({ id: 'ev1', order: 'o7', kind: 'paid', amount: 42, meta: { channel: 'card' } }, 'd1')).toBe(202);
    await settled(result.runId);
    expect((await c.log.getRun(result.runId))!.status).toBe('completed');
    expect(await c.store(result.runId, 'events')).toEqual({ ev1: { id: 'ev1', order: 'o7', kind: 'paid', amount: 42, meta: { channel: 'card' } } });
    expect(await c.store(result.runId, 'outcomes')).toEqual({ o7: { id: 'o7', paid: 42, via: 'card' } });
    expect(c.api.lines()).toEqual(['POST /orders/o7/paid']);
    expect(c.api.requests[0]!.body).toEqual({ event: 'ev1' });
    await c.expectVerified(result.runId);
  });

  it('takes the event that arrives while the run waits', async () => {
    const first = await c.start(files());
    expect(first.status).toBe('suspended');
    expect(await deliver({ id: 'ev2', order: 'o7', kind: 'refunded', amount: 3 }, 'd2')).toBe(202);
    await settled(first.runId);
    const run = (await c.log.getRun(first.runId))!;
    // `webhook.kind` is "refunded": the guard arm does not match and the run aborts, saying why.
    expect(run.status).toBe('failed');
    expect(await c.store(first.runId, 'outcomes')).toEqual({});
    expect(c.api.lines()).toEqual([]);
  });
});
