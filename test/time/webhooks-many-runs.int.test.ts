/**
 * Webhooks reach a waiting run however many other runs are suspended (GUARANTEES 19). The
 * endpoint and the worker looked only at the newest 1,000 (500) suspended runs: with more
 * (approvals waiting on people pile up), a delivery to an older run's path-less `wait` was 404
 * "no run waits on …", and one to an older run's `pause { resumeOn: webhook }` was accepted (its
 * mission was known from a newer run) but never resumed it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRealEnv } from '../../engine/env/real-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import type { EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { backends, tempLogTarget, type TempLogTarget } from '../support/temp-log.js';
import { buildCli, type CliBuild } from './support/build-cli.js';
import { killAll, runNode, spawnNode, waitFor, type Running } from './support/processes.js';

const FILLERS = 1001;
const env = createRealEnv(process.env);

const WAIT = `mission OldWait {\n  store got: memory("got")\n  action A {\n    wait { timeout: 3600000 }\n    store { id: "w", body: response } -> got\n  }\n  run A\n}\n`;
const PAUSE = `mission OldPause {\n  store got: memory("got")\n  action A {\n    pause { resumeOn: webhook "/approve-old" }\n    store { id: "p", body: response } -> got\n  }\n  run A\n}\n`;
const FILLER = `mission Filler {\n  action A {\n    pause { duration: "30d" }\n  }\n  run A\n}\n`;

describe.each(backends)('%s: webhooks with more than a page of suspended runs', (backend) => {
  let build: CliBuild;
  let target: TempLogTarget;
  let log: EventLog;
  let worker: Running | undefined;

  const start = async (name: string, text: string): Promise<{ runId: string; waitingOn: string }> => {
    const file = path.join(target.dir, `${name}.vague`);
    fs.writeFileSync(file, text);
    const result = await startRun({ entry: file, files: [{ path: file, text }] }, { sources: {}, env: {} }, { log, env, dataDir: path.join(target.dir, 'data') });
    expect(result.status).toBe('suspended');
    return { runId: result.runId, waitingOn: (await log.getRun(result.runId))!.waitingOn! };
  };

  beforeAll(async () => {
    build = buildCli();
    target = await tempLogTarget(backend, 'reqon-webhooks-many-');
    log = await openLog(target.target);
  }, 180_000);

  afterAll(async () => {
    if (worker) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    killAll();
    await log?.close();
    await target?.drop();
  });

  it('a delivery to the oldest of 1,004 suspended runs resumes it, through the endpoint and through the inbox', async () => {
    const inboxed = await start('old-wait-inboxed', WAIT);
    const oldWait = await start('old-wait', WAIT);
    const oldPause = await start('old-pause', PAUSE);
    await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < FILLERS; i++) await start(`filler`, FILLER);
    // A newer run of the same mission keeps /approve-old a path the endpoint knows.
    await start('old-pause-newer', PAUSE);
    expect(oldWait.waitingOn).toMatch(/^wait:\/webhook\//);

    // A delivery another worker's endpoint took (straight into the inbox): a `--once` worker
    // looks at every suspended run, a window at a time, so it wakes the oldest wait — and stops.
    const inboxPath = inboxed.waitingOn.slice('wait:'.length);
    expect(await log.deliverWebhook(inboxPath, 'inboxed-1', { n: 0 }, Date.now())).toBe('accepted');
    const once = await runNode(build.cli, ['worker', '--once', '--quiet', '--db', target.target], { cwd: target.dir, env: { REQON_DATA_DIR: path.join(target.dir, 'data') }, timeoutMs: 120_000 });
    expect(once.code, once.stderr).toBe(0);
    expect((await log.getRun(inboxed.runId))!.status).toBe('completed');

    worker = spawnNode(build.cli, ['worker', '--listen', '0', '--poll', '100', '--db', target.target], { cwd: target.dir, env: { REQON_DATA_DIR: path.join(target.dir, 'data') } });
    const url = await waitFor('the worker to print its webhook URL', () => /webhooks on (http:\/\/127\.0\.0\.1:\d+)/.exec(worker!.stdout())?.[1], 60_000);
    const post = (hookPath: string, body: unknown, key: string) =>
      fetch(`${url}${hookPath}`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(body) });

    const waitPath = oldWait.waitingOn.slice('wait:'.length);
    const toWait = await post(waitPath, { n: 1 }, 'old-wait-1');
    expect(toWait.status, await toWait.clone().text()).toBe(202);
    await waitFor('the oldest wait to complete', async () => (await log.getRun(oldWait.runId))!.status === 'completed', 60_000);

    // Two runs pause on /approve-old: two deliveries resume both, the older one included.
    for (const key of ['approve-1', 'approve-2']) {
      const r = await post('/approve-old', { ok: key }, key);
      expect(r.status, await r.clone().text()).toBe(202);
    }
    await waitFor('the oldest pause to complete', async () => (await log.getRun(oldPause.runId))!.status === 'completed', 60_000);
  }, 600_000);
});
