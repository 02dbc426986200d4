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
});
