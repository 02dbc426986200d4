/**
 * §H7 — webhook wait with storage and guard, abort path — durable.
 *
 * Our wait is durable: the run suspends (`waitingOn: wait:/hooks/payment`) and the process could
 * exit. The test delivers the webhook by POSTing to a real webhook server (startWebhookServer with
 * an in-process Worker), which commits the delivery to the log's inbox and wakes the run; the
 * worker finishes it. Variants: status "failed" → abort "payment failed" (hooks keeps the event,
 * payments empty); no webhook → with a FakeClock advanced past 5000 ms, a worker tick fails the
 * run with the timeout; the same delivery POSTed twice (same Idempotency-Key) is consumed once;
 * a delivery that arrives before the run reaches the wait is not lost. On every log backend
 * (test/support/temp-log.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../engine/env/fake-env.js';
import type { RunResult } from '../../engine/executor/run-mission.js';
import type { EventLog, RunStatus } from '../../engine/log/log.js';
import { startWebhookServer, type WebhookServer } from '../../engine/worker/webhook-server.js';
import { Worker } from '../../engine/worker/worker.js';
import { backends, type Backend } from '../support/temp-log.js';
import { builtCli, cliStore, missionFiles, openConformance, parseRunOutput, runCli, type Conformance } from './harness.js';

const SUCCEEDED = { eventId: 'ev1', paymentId: 'pay_1', status: 'succeeded' };

let c: Conformance;
let worker: Worker;
let hooks: WebhookServer | undefined;
let ended: RunResult[];

async function setup(backend: Backend, opts: { clock?: FakeClock; slowPayments?: Promise<void> } = {}): Promise<void> {
  c = await openConformance({ backend, ...(opts.clock ? { env: (real) => ({ ...real, clock: opts.clock! }) } : {}) });
  const slow = opts.slowPayments;
  c.api.on('POST /payments', slow ? async () => (await slow, { body: { id: 'pay_1' } }) : { body: { id: 'pay_1' } });
  ended = [];
  worker = new Worker({ log: c.log, env: c.env, dataDir: c.dataDir, owner: 'conformance-worker', onRunEnd: (r) => ended.push(r) });
  hooks = await startWebhookServer({ log: c.log, env: c.env, worker, dataDir: c.dataDir, port: 0 });
}

afterEach(async () => {
  worker.stop();
  await worker.drain();
  await hooks?.close();
  hooks = undefined;
  await c.close();
});

async function deliver(body: unknown, key: string): Promise<{ status: number; body: { accepted?: boolean; duplicate?: boolean } }> {
  const res = await fetch(`${hooks!.url}/hooks/payment`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { accepted?: boolean; duplicate?: boolean } };
}

/** Waits (real time) until the run reaches one of `statuses`, then until the worker is idle. */
async function settled(log: EventLog, runId: string, statuses: RunStatus[] = ['completed', 'failed']): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (statuses.includes((await log.getRun(runId))!.status)) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  await worker.drain();
  expect(statuses).toContain((await log.getRun(runId))!.status);
}

function expectPaymentRequest(): void {
  expect(c.api.lines()).toEqual(['POST /payments']);
  const req = c.api.requests[0]!;
  expect(req.body).toEqual({ amount: 100, currency: 'GBP' });
  expect(req.headers['content-type']).toMatch(/^application\/json/);
  expect(typeof req.headers['idempotency-key']).toBe('string');
}

async function suspendedRun(): Promise<string> {
  const r = await c.start(missionFiles('h7'));
  expect(r.status).toBe('suspended');
  expect(r.status === 'suspended' && r.waitingOn).toBe('wait:/hooks/payment');
  const run = (await c.log.getRun(r.runId))!;
  expect(run.status).toBe('suspended');
  expect(run.waitingOn).toBe('wait:/hooks/payment');
  expect(run.owner).toBeNull();
  return r.runId;
}

describe.each(backends)('%s: H7 Hooks', (backend) => {
  it('suspends on the wait; the delivered webhook completes it: hooks ev1, payments pay_1', async () => {
    await setup(backend);
    const runId = await suspendedRun();
    expectPaymentRequest();

    expect(await deliver(SUCCEEDED, 'dlv-1')).toEqual({ status: 202, body: expect.objectContaining({ accepted: true, duplicate: false }) });
    await settled(c.log, runId);
    expect(ended.map((r) => [r.runId, r.status])).toEqual([[runId, 'completed']]);
    expect(ended[0]!.actionsRun).toEqual(['Pay']);
    expect((await c.log.getRun(runId))!.status).toBe('completed');
    // Resuming replays the POST from the log: it was sent once.
    expectPaymentRequest();
    expect(await c.store(runId, 'hooks')).toEqual({ ev1: SUCCEEDED });
    expect(await c.store(runId, 'payments')).toEqual({ pay_1: { id: 'pay_1', status: 'succeeded' } });
    expect((await c.events(runId)).filter((e) => e.type === 'webhook.received')).toHaveLength(1);
    await c.expectVerified(runId);
  });

  it('variant status "failed": the run fails "payment failed", hooks has the event, payments is empty', async () => {
    await setup(backend);
    const runId = await suspendedRun();
    const failed = { ...SUCCEEDED, status: 'failed' };
    expect((await deliver(failed, 'dlv-f')).status).toBe(202);
    await settled(c.log, runId);
    expect(ended).toHaveLength(1);
    const result = ended[0]!;
    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error.message).toBe('payment failed');
    expect(result.actionsRun).toEqual([]);
    expect(await c.store(runId, 'hooks')).toEqual({ ev1: failed });
    expect(await c.store(runId, 'payments')).toEqual({});
    expectPaymentRequest();
    await c.expectVerified(runId);
  });

  it('variant no webhook: past 5000 ms (FakeClock) a worker tick fails it with the webhook timeout', async () => {
    const clock = new FakeClock();
    await setup(backend, { clock });
    const runId = await suspendedRun();
    expect((await c.log.getRun(runId))!.wakeAt).toBe(clock.now() + 5000);
    await clock.advance(4999);
    expect(await worker.tick()).toBe(0);
    await clock.advance(2);
    expect(await worker.tick()).toBe(1);
    await worker.drain();
    expect(ended).toHaveLength(1);
    const result = ended[0]!;
    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error.message).toBe('Webhook timeout: no events received within 5000ms');
    expect((await c.log.getRun(runId))!.status).toBe('failed');
    expect(await c.store(runId, 'hooks')).toEqual({});
    expect(await c.store(runId, 'payments')).toEqual({});
    const completed = (await c.events(runId)).filter((e) => e.type === 'wait.completed');
    expect(completed.map((e) => e.payload)).toEqual([expect.objectContaining({ events: 0, timedOut: true })]);
    expectPaymentRequest();
    await c.expectVerified(runId);
  });

  it('a delivery that arrives before the run reaches the wait is kept, and a second POST of it is consumed once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await setup(backend, { slowPayments: gate });
    const running = c.start(missionFiles('h7'));
    // Wait until POST /payments is in flight: the run is `running`, not yet at its wait.
    for (let i = 0; i < 400 && c.api.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(c.api.lines()).toEqual(['POST /payments']);
    const [runRecord] = await c.log.listRuns({ status: 'running' });
    expect(runRecord).toBeDefined();

    expect(await deliver(SUCCEEDED, 'dlv-early')).toEqual({ status: 202, body: expect.objectContaining({ accepted: true, duplicate: false }) });
    // The sender retries with the same Idempotency-Key: acknowledged as a duplicate.
    expect(await deliver(SUCCEEDED, 'dlv-early')).toEqual({ status: 202, body: expect.objectContaining({ accepted: true, duplicate: true }) });
    release();

    const result = await running;
    expect(result.status).toBe('completed');
    const events = await c.events(result.runId);
    // It never had to suspend: the delivery was waiting in the inbox.
    expect(events.some((e) => e.type === 'run.suspended')).toBe(false);
    expect(events.filter((e) => e.type === 'webhook.received').map((e) => (e.payload as { eventId: string }).eventId)).toEqual(['dlv-early']);
    expect(await c.store(result.runId, 'hooks')).toEqual({ ev1: SUCCEEDED });
    expect(await c.store(result.runId, 'payments')).toEqual({ pay_1: { id: 'pay_1', status: 'succeeded' } });
    expect(await c.log.webhookInbox('/hooks/payment')).toEqual([]);
    expectPaymentRequest();
    await c.expectVerified(result.runId);
  });

  it('a delivery POSTed twice while the run waits is consumed once', async () => {
    // With `expectedEvents: 1` the first delivery completes the run and its path is no longer
    // served (404), so the repeat could not reach a live wait: this copy waits for two events.
    await setup(backend);
    const files = missionFiles('h7', (t) => t.replace('expectedEvents: 1', 'expectedEvents: 2'), c.dir);
    const r = await c.start(files);
    expect(r.status).toBe('suspended');
    const runId = r.runId;

    expect((await deliver(SUCCEEDED, 'dlv-1')).body.duplicate).toBe(false);
    expect((await deliver(SUCCEEDED, 'dlv-1')).body.duplicate).toBe(true);
    // The first woke the run, which claimed it and suspended again (one of two events).
    for (let i = 0; i < 400; i++) {
      const claimed = (await c.events(runId)).filter((e) => e.type === 'webhook.received').length;
      if (claimed > 0 && (await c.log.getRun(runId))!.status === 'suspended') break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await worker.drain();
    expect((await c.log.getRun(runId))!.status).toBe('suspended');
    expect((await c.events(runId)).filter((e) => e.type === 'webhook.received')).toHaveLength(1);
    expect(await c.log.webhookInbox('/hooks/payment')).toEqual([]);

    const second = { eventId: 'ev2', paymentId: 'pay_1', status: 'succeeded' };
    expect((await deliver(second, 'dlv-2')).body.duplicate).toBe(false);
    await settled(c.log, runId);
    const received = (await c.events(runId)).filter((e) => e.type === 'webhook.received').map((e) => (e.payload as { eventId: string }).eventId);
    expect(received).toEqual(['dlv-1', 'dlv-2']);
    expect(await c.store(runId, 'hooks')).toEqual({ ev1: SUCCEEDED, ev2: second });
    // Two events make `response` a list, whose `.status` is not "succeeded": the abort arm runs.
    expect(ended.at(-1)!.status).toBe('failed');
    expectPaymentRequest();
    await c.expectVerified(runId);
  });

  it('the built CLI: `reqon run` exits 10 (suspended), the webhook completes it, `reqon store` shows it', async () => {
    await setup(backend);
    const cli = await builtCli();
    const run = await runCli(cli, ['run', missionFiles('h7').entry, '--db', c.dbPath, '--source', `Api=${c.api.url}`, '--json', '--quiet'], {
      cwd: c.dir,
      env: { REQON_DATA_DIR: c.dataDir },
    });
    expect(run.code).toBe(10);
    const { runId, result } = parseRunOutput(run.stdout);
    expect(result.status).toBe('suspended');
    expect((await c.log.getRun(runId))!.waitingOn).toBe('wait:/hooks/payment');
    expect((await deliver(SUCCEEDED, 'dlv-cli')).status).toBe(202);
    await settled(c.log, runId);
    expect((await c.log.getRun(runId))!.status).toBe('completed');
    expect(await cliStore(cli, c, runId, 'hooks')).toEqual({ ev1: SUCCEEDED });
    expect(await cliStore(cli, c, runId, 'payments')).toEqual({ pay_1: { id: 'pay_1', status: 'succeeded' } });
    expectPaymentRequest();
    await c.expectVerified(runId);
  });
});
