/**
 * `pause { resumeOn: webhook "/path" }` claims its delivery from the inbox, as a `wait` does
 * (GUARANTEES 19): a delivery acknowledged before the run reached the pause resumes it when it
 * gets there, once; one left unclaimed in the inbox (its acceptor died before resuming the run)
 * is claimed by the next worker. Never acknowledged and lost.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRealEnv } from '../../engine/env/real-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import type { EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { backends, tempLogTarget, type TempLogTarget } from '../support/temp-log.js';
import { FakeApi } from '../support/fake-api.js';
import { buildCli, type CliBuild } from './support/build-cli.js';
import { killAll, spawnNode, waitFor, type Running } from './support/processes.js';

let build: CliBuild;
let dir: string;
let db: string;
let target: TempLogTarget | undefined;
let log: EventLog;
let api: FakeApi;
let worker: Running | undefined;
const env = createRealEnv(process.env);

const mission = (hook: string): string =>
  `mission Approve {\n  source Api { auth: none, base: "http://127.0.0.1:1" }\n  action Flow {\n    get "/slow"\n` +
  `    pause { resumeOn: webhook "${hook}" }\n    post "/after" { body: { got: response } }\n  }\n  run Flow\n}\n`;

function files(name: string, text: string) {
  const file = path.join(dir, `${name}.vague`);
  fs.writeFileSync(file, text);
  return { entry: file, files: [{ path: file, text }] };
}

function afterBodies(): unknown[] {
  return api.requests.filter((r) => r.method === 'POST' && r.url === '/after').map((r) => r.body);
}

describe.each(backends)('%s: pause resumed by a webhook', (backend) => {
  beforeAll(async () => {
    build = buildCli();
    target = await tempLogTarget(backend, 'reqon-pause-hooks-');
    dir = target.dir;
    db = target.target;
    log = await openLog(db);
    api = new FakeApi();
    api.on('GET /slow', async () => {
      await new Promise((r) => setTimeout(r, 1500));
      return { body: { slow: true } };
    });
    api.on('POST /after', (req) => ({ status: 201, body: { got: req.body } }));
    await api.start();
  }, 180_000);

  afterAll(async () => {
    if (worker) {
      worker.child.kill('SIGTERM');
      await worker.exited;
      worker = undefined;
    }
    killAll();
    await api?.stop();
    await log?.close();
    await target?.drop();
  });

  it('a delivery that arrives before the run reaches the pause resumes it there, once', async () => {
    worker = spawnNode(build.cli, ['worker', '--listen', '0', '--poll', '50', '--db', db], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
    const url = await waitFor('the worker to print its webhook URL', () => /webhooks on (http:\/\/127\.0\.0\.1:\d+)/.exec(worker!.stdout())?.[1]);
    const run = startRun(files('early', mission('/approve-early')), { sources: { Api: api.url }, env: {} }, { log, env, dataDir: path.join(dir, 'data') });
    // While the run waits on its slow GET, the approval arrives.
    await waitFor('the run to exist', async () => (await log.listRuns({ limit: 5 })).length > 0);
    const send = () =>
      fetch(`${url}/approve-early`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'approval-1' }, body: '{"approved":true}' });
    const first = await send();
    expect(first.status).toBe(202);
    const result = await run;
    expect(result.status).toBe('completed');
    expect(afterBodies()).toEqual([{ got: { approved: true } }]);
    // The sender's retry is a duplicate, and nothing resumes twice.
    const retry = await send();
    expect(retry.status).toBe(202);
    expect(((await retry.json()) as { duplicate: boolean }).duplicate).toBe(true);
    const events = await log.read(result.runId);
    expect(events.filter((e) => e.type === 'pause.resumed')).toHaveLength(1);
    expect(events.some((e) => e.type === 'run.suspended')).toBe(false);
    expect(await log.webhookInbox('/approve-early')).toEqual([]);
    worker.child.kill('SIGTERM');
    await worker.exited;
    worker = undefined;
  });

  it('a delivery left unclaimed in the inbox (its acceptor died) is claimed by the next worker', async () => {
    const result = await startRun(files('stranded', mission('/approve-later')), { sources: { Api: api.url }, env: {} }, { log, env, dataDir: path.join(dir, 'data') });
    expect(result.status).toBe('suspended');
    // Committed to the inbox and acknowledged, then the process died before resuming the run.
    expect(await log.deliverWebhook('/approve-later', 'approval-2', { approved: 'later' }, env.clock.now())).toBe('accepted');
    const once = spawnNode(build.cli, ['worker', '--once', '--poll', '50', '--db', db], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
    expect((await once.exited).code, once.stderr()).toBe(0);
    expect((await log.getRun(result.runId))!.status).toBe('completed');
    expect(afterBodies()).toContainEqual({ got: { approved: 'later' } });
    expect(await log.webhookInbox('/approve-later')).toEqual([]);
  });

  it('one delivery resumes one pause, once: of two runs paused on the same path, one goes on', async () => {
    const text = mission('/approve-shared');
    const first = await startRun(files('shared-1', text), { sources: { Api: api.url }, env: {} }, { log, env, dataDir: path.join(dir, 'data') });
    const second = await startRun(files('shared-2', text), { sources: { Api: api.url }, env: {} }, { log, env, dataDir: path.join(dir, 'data') });
    expect([first.status, second.status]).toEqual(['suspended', 'suspended']);
    expect(await log.deliverWebhook('/approve-shared', 'approval-3', { approved: 'once' }, env.clock.now())).toBe('accepted');
    const once = spawnNode(build.cli, ['worker', '--once', '--poll', '50', '--db', db], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
    expect((await once.exited).code, once.stderr()).toBe(0);
    const statuses = [(await log.getRun(first.runId))!.status, (await log.getRun(second.runId))!.status].sort();
    expect(statuses).toEqual(['completed', 'suspended']);
    expect(afterBodies().filter((b) => JSON.stringify(b) === JSON.stringify({ got: { approved: 'once' } }))).toHaveLength(1);
  });

  // Helper 80: in a parallel stage whose other branch waits on a long timer, a delivery for this
  // branch's webhook pause or `wait` that was in the inbox unclaimed (accepted while the run was
  // still running, or its acceptor died) waited for that timer: a worker looked only at what the
  // run had suspended on.
  const siblings = (hook: string, waiting: string): string =>
    `mission Siblings {\n  source Api { auth: none, base: "http://127.0.0.1:1" }\n` +
    `  action Timed {\n    pause { duration: "1h" }\n  }\n` +
    `  action Hooked {\n    ${waiting}\n    post "/after" { body: { hook: "${hook}", got: response } }\n  }\n` +
    `  run [Timed, Hooked]\n}\n`;

  it.each([
    ['a webhook pause', '/sibling-pause', 'pause { resumeOn: webhook "/sibling-pause" }'],
    ['a wait', '/sibling-wait', 'wait { path: "/sibling-wait", timeout: 86400000 }'],
  ])("a delivery for %s of one branch, in the inbox while the run waits on another branch's timer, is taken by the next worker", async (_what, hook, waiting) => {
    const result = await startRun(files(`sibling${hook.replaceAll('/', '-')}`, siblings(hook, waiting)), { sources: { Api: api.url }, env: {} }, { log, env, dataDir: path.join(dir, 'data') });
    expect(result.status).toBe('suspended');
    expect(await log.deliverWebhook(hook, `sibling${hook}`, { approved: hook }, env.clock.now())).toBe('accepted');
    const once = spawnNode(build.cli, ['worker', '--once', '--poll', '50', '--db', db], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
    expect((await once.exited).code, once.stderr()).toBe(0);
    const bodies = afterBodies().filter((b) => (b as { hook?: string }).hook === hook);
    expect(bodies).toHaveLength(1);
    expect(JSON.stringify(bodies[0])).toContain(`"approved":"${hook}"`);
    expect(await log.webhookInbox(hook)).toEqual([]);
    // The timer's branch still waits on its hour: woken for the sibling, its pause was not spent.
    const run = (await log.getRun(result.runId))!;
    expect(run.status).toBe('suspended');
    expect(run.wakeAt).toBeGreaterThan(env.clock.now() + 50 * 60_000);
    const events = await log.read(result.runId);
    expect(events.filter((e) => e.type === 'pause.resumed' && e.stepPath.startsWith('Timed'))).toEqual([]);
  });
});
