/**
 * Webhooks over HTTP against `reqon worker --listen 0` (a real process on 127.0.0.1): a sender's
 * retry (same Idempotency-Key) is consumed once; a delivery that arrives before its run reaches
 * the `wait` is kept and applied once; `eventFilter` gates completion; `expectedEvents: 2` waits
 * for two; the `storage` target is written; a path no run waits on is 404; a body over 1 MiB is
 * 413; `pause { resumeOn: webhook "/approved" }` is resumed by a POST whose body becomes
 * `response`; with REQON_WEBHOOK_SECRET set, a missing or wrong Standard Webhooks signature is 401
 * and a good one 202 (the rest of the security model: webhooks-security.int.test.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRun } from '../../engine/executor/run-mission.js';
import { createRealEnv } from '../../engine/env/real-env.js';
import type { EventLog, RunStatus } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { MemoryStoreState } from '../../engine/stores/memory-fold.js';
import { signWebhook, webhookKey } from '../../engine/worker/webhook-security.js';
import { backends, tempLogTarget, type TempLogTarget } from '../support/temp-log.js';
import { buildCli, type CliBuild } from './support/build-cli.js';
import { killAll, spawnNode, waitFor, type Running } from './support/processes.js';

const SECRET = 's3cret-for-tests';
let build: CliBuild;
let dir: string;
let log: EventLog;
let signedLog: EventLog;
let worker: Running;
let signedWorker: Running;
let url: string;
let plainTarget: TempLogTarget | undefined;
let signedTarget: TempLogTarget | undefined;
let signedUrl: string;
const env = createRealEnv(process.env);

async function startWorker(db: string, extraEnv: Record<string, string>): Promise<{ proc: Running; url: string }> {
  const proc = spawnNode(build.cli, ['worker', '--listen', '0', '--poll', '50', '--db', db], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data'), ...extraEnv } });
  const line = await waitFor('the worker to print its webhook URL', () => /webhooks on (http:\/\/127\.0\.0\.1:\d+)/.exec(proc.stdout())?.[1]);
  return { proc, url: line };
}

async function start(name: string, text: string, on: EventLog = log): Promise<string> {
  const file = path.join(dir, `${name}.vague`);
  fs.writeFileSync(file, text);
  const result = await startRun({ entry: file, files: [{ path: file, text }] }, { sources: {}, env: {} }, { log: on, env, dataDir: path.join(dir, 'data') });
  expect(result.status).toBe('suspended');
  return result.runId;
}

function post(base: string, hookPath: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}${hookPath}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

async function status(runId: string, on: EventLog = log): Promise<RunStatus> {
  return (await on.getRun(runId))!.status;
}

async function completed(runId: string, on: EventLog = log): Promise<void> {
  await waitFor(`run ${runId} to complete`, async () => (await status(runId, on)) === 'completed', 15_000);
}

async function storeKeys(runId: string, store: string): Promise<Record<string, unknown>> {
  const state = MemoryStoreState.fromEvents(await log.read(runId));
  return Object.fromEntries(state.list(store).map((r) => [r.key, r.record]));
}

const settle = () => new Promise((r) => setTimeout(r, 400));

/** A branch the run did not wait on was delivered to: it goes on (`wentOn`), then the run waits again on what it waited on. */
async function goesOnThenWaitsAgain(runId: string, waitingOn: string | null, wentOn: () => Promise<boolean>): Promise<void> {
  await waitFor('the delivered branch to go on', wentOn, 15_000);
  await waitFor(`run ${runId} to suspend again`, async () => (await status(runId)) === 'suspended', 15_000);
  expect((await log.getRun(runId))!.waitingOn).toBe(waitingOn);
}

describe.each(backends)('%s: webhooks over HTTP', (backend) => {
  beforeAll(async () => {
    build = buildCli();
    plainTarget = await tempLogTarget(backend, 'reqon-webhooks-');
    signedTarget = await tempLogTarget(backend, 'reqon-webhooks-signed-');
    dir = plainTarget.dir;
    log = await openLog(plainTarget.target);
    signedLog = await openLog(signedTarget.target);
    const plain = await startWorker(plainTarget.target, { REQON_WEBHOOK_SECRET: '' });
    const signed = await startWorker(signedTarget.target, { REQON_WEBHOOK_SECRET: SECRET });
    [worker, url, signedWorker, signedUrl] = [plain.proc, plain.url, signed.proc, signed.url];
  }, 180_000);

  afterAll(async () => {
    for (const w of [worker, signedWorker]) {
      if (!w) continue;
      w.child.kill('SIGTERM');
      await w.exited;
    }
    killAll();
    await log?.close();
    await signedLog?.close();
    await plainTarget?.drop();
    await signedTarget?.drop();
  });

  it('a retried delivery (same Idempotency-Key) is consumed once; expectedEvents 2 waits for two; storage is written', async () => {
    const runId = await start(
      'dup',
      `mission Dup {
  store hooks: memory("hooks")
  action A {
    wait { path: "/dup", timeout: 60000, expectedEvents: 2, storage: { target: hooks, key: .n } }
  }
  run A
}
`,
    );
    const first = await post(url, '/dup', '{"n":1}', { 'Idempotency-Key': 'dup-1' });
    expect(first.status).toBe(202);
    expect(await first.json()).toMatchObject({ accepted: true, eventId: 'dup-1', duplicate: false });
    const retry = await post(url, '/dup', '{"n":1}', { 'Idempotency-Key': 'dup-1' });
    expect(retry.status).toBe(202);
    expect(await retry.json()).toMatchObject({ duplicate: true });
    await settle();
    expect(await status(runId)).toBe('suspended');
    expect((await log.read(runId)).filter((e) => e.type === 'webhook.received')).toHaveLength(1);

    expect((await post(url, '/dup', '{"n":2}', { 'Idempotency-Key': 'dup-2' })).status).toBe(202);
    await completed(runId);
    const received = (await log.read(runId)).filter((e) => e.type === 'webhook.received');
    expect(received.map((e) => (e.payload as { eventId: string }).eventId)).toEqual(['dup-1', 'dup-2']);
    expect(await storeKeys(runId, 'hooks')).toEqual({ '1': { n: 1 }, '2': { n: 2 } });
  });

  it('a delivery that arrives before the run reaches its wait is kept, then applied once', async () => {
    const runId = await start(
      'early',
      `mission Early {
  store got: memory("got")
  action A {
    pause { duration: "1500ms" }
    wait { path: "/early", timeout: 60000 }
    store response -> got { key: .id }
  }
  run A
}
`,
    );
    expect((await post(url, '/early', '{"id":"e1","v":1}', { 'X-Delivery-Id': 'early-1' })).status).toBe(202);
    expect((await post(url, '/early', '{"id":"e1","v":1}', { 'X-Delivery-Id': 'early-1' })).status).toBe(202);
    expect(await status(runId)).toBe('suspended');
    expect((await log.getRun(runId))!.waitingOn).toMatch(/^pause:/);
    await completed(runId);
    expect((await log.read(runId)).filter((e) => e.type === 'webhook.received')).toHaveLength(1);
    expect(await storeKeys(runId, 'got')).toEqual({ e1: { id: 'e1', v: 1 } });
  });

  it('eventFilter gates completion: a rejected delivery neither completes the wait nor keeps waking it', async () => {
    const runId = await start(
      'filter',
      `mission Filter {
  store got: memory("got")
  action A {
    wait { path: "/filtered", timeout: 60000, eventFilter: response.status == "ok" }
    store response -> got { key: .status }
  }
  run A
}
`,
    );
    expect((await post(url, '/filtered', '{"status":"bad"}')).status).toBe(202);
    await settle();
    await settle();
    expect(await status(runId)).toBe('suspended');
    const quiet = (await log.read(runId)).length;
    await settle();
    expect((await log.read(runId)).length).toBe(quiet); // not woken again and again by the same delivery
    expect((await post(url, '/filtered', '{"status":"ok"}')).status).toBe(202);
    await completed(runId);
    expect(await storeKeys(runId, 'got')).toEqual({ ok: { status: 'ok' } });
    expect((await log.read(runId)).filter((e) => e.type === 'webhook.received')).toHaveLength(1);
  });

  it('a wait whose filter refused every delivery times out saying so, not "no events received"', async () => {
    const runId = await start(
      'filter-timeout',
      `mission FilterTimeout {
  action A {
    wait { path: "/filtered-out", timeout: 600, eventFilter: response.status == "ok" }
  }
  run A
}
`,
    );
    expect((await post(url, '/filtered-out', '{"status":"bad"}')).status).toBe(202);
    await waitFor(`run ${runId} to fail`, async () => (await status(runId)) === 'failed', 15_000);
    const failed = (await log.read(runId)).find((e) => e.type === 'run.failed')!;
    expect((failed.payload as { error: { message: string } }).error.message).toBe(
      "Webhook timeout: no event that passes the wait's eventFilter (deliveries it refused stay unclaimed in the inbox) received within 600ms",
    );
  });

  it('a delivery for a parallel branch\'s pause resumes that branch at once, while the run waits on a sibling\'s timer', async () => {
    // Before, it was kept until the sibling's hour-long timer had fired: only the pause the run
    // waited on was looked at.
    const runId = await start(
      'parallel-approve',
      `mission ParallelApprove {
  store got: memory("got")
  action Timed {
    pause { duration: "1h" }
    store { id: "timed" } -> got { key: .id }
  }
  action Approved {
    pause { resumeOn: webhook "/parallel-approve" }
    store { id: "approved", by: response.by } -> got { key: .id }
  }
  run [Timed, Approved]
}
`,
    );
    const waitingOn = (await log.getRun(runId))!.waitingOn;
    expect((await post(url, '/parallel-approve', '{"by":"ops"}')).status).toBe(202);
    await goesOnThenWaitsAgain(runId, waitingOn, async () => Object.hasOwn(await storeKeys(runId, 'got'), 'approved'));
    expect(await storeKeys(runId, 'got')).toEqual({ approved: { id: 'approved', by: 'ops' } });
  });

  it('a wait with no path: a delivery on the generated path of a branch the run does not wait on is taken at once, never a 404', async () => {
    // Before: 404 "no run waits on …" (the path is in no mission, and not what the run waited on), the delivery lost.
    const runId = await start(
      'generated-paths',
      `mission GeneratedPaths {
  store got: memory("got")
  action A {
    for i in range(0, 2) concurrency 2 {
      wait { timeout: 600000 }
      store { id: i, got: response.n } -> got { key: .id }
    }
  }
  run A
}
`,
    );
    const waitingOn = (await log.getRun(runId))!.waitingOn!;
    const paths = (await log.read(runId)).filter((e) => e.type === 'wait.registered').map((e) => (e.payload as { path: string }).path);
    expect(paths).toHaveLength(2);
    const other = paths.find((p) => `wait:${p}` !== waitingOn)!;
    // Helper 80: other text under the run's prefix (a truncated copy of the URL, an id of no wait)
    // was answered 202 and kept where no wait could take it.
    for (const made of [other.slice(0, -1), `/webhook/${runId}/ef_nosuchwait`]) {
      const refused = await post(url, made, '{"n":1}');
      expect(refused.status, made).toBe(404);
      expect(await log.webhookInbox(made)).toEqual([]);
    }
    const answer = await post(url, other, '{"n":7}');
    expect(answer.status).toBe(202);
    await goesOnThenWaitsAgain(runId, waitingOn, async () => Object.keys(await storeKeys(runId, 'got')).length === 1);
    expect(Object.values(await storeKeys(runId, 'got'))).toEqual([expect.objectContaining({ got: 7 })]);
    // That wait took its delivery: a new one there is taken by no wait (helper 82: a 202 kept for
    // ever), while the sender's retry of the one it took is still a duplicate.
    const late = await post(url, other, '{"n":8}');
    expect(late.status).toBe(404);
    expect(await log.webhookInbox(other)).toEqual([]);
  });

  it('pause { resumeOn: webhook "/approved" } is resumed by a POST whose body becomes response', async () => {
    const runId = await start(
      'approve',
      `mission Approve {
  store approvals: memory("approvals")
  action A {
    pause { resumeOn: webhook "/approved" }
    store response -> approvals { key: .id }
  }
  run A
}
`,
    );
    expect((await log.getRun(runId))!.wakeAt).toBeNull();
    expect((await post(url, '/approved', '{"id":"A1","ok":true}')).status).toBe(202);
    await completed(runId);
    const resumed = (await log.read(runId)).filter((e) => e.type === 'pause.resumed');
    expect(resumed).toHaveLength(1);
    expect(resumed[0]!.payload).toMatchObject({ by: 'webhook', payload: { id: 'A1', ok: true } });
    expect(await storeKeys(runId, 'approvals')).toEqual({ A1: { id: 'A1', ok: true } });
  });

  it('404 for a path no run waits on, 413 over 1 MiB', async () => {
    const nobody = await post(url, '/nobody-waits-here', '{}');
    expect(nobody.status).toBe(404);
    expect(await nobody.json()).toEqual({ error: 'no run waits on /nobody-waits-here' });
    const big = await post(url, '/dup', JSON.stringify({ blob: 'x'.repeat(1024 * 1024) }));
    expect(big.status).toBe(413);
  });

  it('with REQON_WEBHOOK_SECRET: 401 without or with a bad signature, 202 with a good one', async () => {
    const runId = await start(
      'signed',
      `mission Signed {
  action A {
    wait { path: "/signed", timeout: 60000 }
  }
  run A
}
`,
      signedLog,
    );
    const body = '{"paid":true}';
    expect((await post(signedUrl, '/signed', body)).status).toBe(401);
    const ts = String(Math.floor(Date.now() / 1000));
    const sign = (secret: string) => ({ 'webhook-id': 'msg_1', 'webhook-timestamp': ts, 'webhook-signature': signWebhook(webhookKey(secret), 'msg_1', ts, Buffer.from(body)) });
    expect((await post(signedUrl, '/signed', body, sign('wrong'))).status).toBe(401);
    expect((await signedLog.webhookInbox('/signed')).length).toBe(0);
    const good = await post(signedUrl, '/signed', body, sign(SECRET));
    expect(good.status).toBe(202);
    await completed(runId, signedLog);
  });
});
