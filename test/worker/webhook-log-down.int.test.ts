/**
 * A webhook delivered while the log's database cannot be reached (a restart, a network cut):
 * nothing is recorded, so nothing may be acknowledged — and the sender must learn that it should
 * send again. It was a 500 "internal error"; it is a 503 with Retry-After that says why, as the
 * studio answers the same condition.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRealEnv } from '../../engine/env/real-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import { LogConnectionError, type EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { startWebhookServer, type WebhookServer } from '../../engine/worker/webhook-server.js';
import { Worker } from '../../engine/worker/worker.js';

let dir: string | undefined;
let log: EventLog | undefined;
let server: WebhookServer | undefined;

afterEach(async () => {
  await server?.close();
  await log?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  server = log = dir = undefined;
});

describe('a webhook while the log database is down', () => {
  it('is a 503 with Retry-After naming the database, not a 500; once it is back the same delivery is taken', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-webhook-down-'));
    const real = await openLog(path.join(dir, 'log.db'));
    log = real;
    let down = true;
    // The log as a worker sees it while its database is unreachable: every delivery fails to connect.
    const flaky = new Proxy(real, {
      get(target, name) {
        if (name === 'deliverWebhook' && down) return async () => Promise.reject(new LogConnectionError('postgres://reqon@db.internal/reqon', 'connect ECONNREFUSED 10.0.0.5:5432'));
        const value = Reflect.get(target, name) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const env = createRealEnv({});
    // A run waits on the path, so the endpoint takes deliveries there.
    const file = path.join(dir, 'waits.vague');
    fs.writeFileSync(file, 'mission Waits {\n  action A {\n    wait { path: "/hooks/order" }\n  }\n  run A\n}\n');
    const parked = await startRun({ entry: file, files: [{ path: file, text: fs.readFileSync(file, 'utf8') }] }, { sources: {}, env: {} }, { log: real, env, dataDir: path.join(dir, 'data') });
    expect(parked.status).toBe('suspended');
    const worker = new Worker({ log: flaky, env, dataDir: path.join(dir, 'data'), owner: 'w', schedules: false });
    server = await startWebhookServer({ log: flaky, env, worker, dataDir: path.join(dir, 'data'), port: 0 });
    const send = () => fetch(`${server!.url}/hooks/order`, { method: 'POST', headers: { 'content-type': 'application/json', 'webhook-id': 'evt-1' }, body: JSON.stringify({ id: 1 }) });

    const refused = await send();
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(((await refused.json()) as { error: string }).error).toMatch(/the run log's database cannot be reached; nothing was recorded — send it again/);

    down = false;
    const taken = await send();
    expect(taken.status).toBeLessThan(300);
  });

  it('a SQLite log locked by another process past its busy timeout: the webhook is a 503 saying so, and the worker waits instead of exiting', async () => {
    // Helper 80: a `sqlite3` shell holding a write transaction for a few seconds made a worker
    // claiming a delivery exit 1, and the endpoint answered 500 "internal error".
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-webhook-busy-'));
    const dbPath = path.join(dir, 'log.db');
    const real = await openLog(dbPath, { busyTimeoutMs: 50 });
    log = real;
    const env = createRealEnv({});
    const file = path.join(dir, 'approve.vague');
    fs.writeFileSync(file, 'mission Approve {\n  store got: sql("approvals")\n  action A {\n    pause { resumeOn: webhook "/hooks/ok" }\n    store { id: "a", got: response } -> got { key: .id }\n  }\n  run A\n}\n');
    const parked = await startRun({ entry: file, files: [{ path: file, text: fs.readFileSync(file, 'utf8') }] }, { sources: {}, env: {} }, { log: real, env, dataDir: path.join(dir, 'data') });
    expect(parked.status).toBe('suspended');
    // Accepted while the run was on its way (its acceptor then died): in the inbox, unclaimed.
    expect(await real.deliverWebhook('/hooks/ok', 'evt-early', { ok: 1 }, env.clock.now())).toBe('accepted');
    const progress: string[] = [];
    const worker = new Worker({ log: real, env, dataDir: path.join(dir, 'data'), owner: 'w', schedules: false, pollMs: 20, progress: (line) => progress.push(line) });
    server = await startWebhookServer({ log: real, env, worker, dataDir: path.join(dir, 'data'), port: 0 });

    const { default: Database } = await import('better-sqlite3');
    const holder = new Database(dbPath);
    holder.exec('BEGIN IMMEDIATE');
    const running = worker.loop(false);
    try {
      const refused = await fetch(`${server.url}/hooks/ok`, { method: 'POST', headers: { 'content-type': 'application/json', 'webhook-id': 'evt-2' }, body: '{"ok":2}' });
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: string }).error).toMatch(/is busy \(another process holds its lock\); nothing was recorded — send it again/);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(progress.some((line) => /looking again/.test(line))).toBe(true);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    // The lock gone, the worker (still there) resumes the pause with the early delivery.
    for (let i = 0; i < 100 && (await real.getRun(parked.runId))!.status !== 'completed'; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await real.getRun(parked.runId))!.status).toBe('completed');
    worker.stop();
    await running;
  });
});
