/**
 * GUARANTEES 19: a webhook delivery is committed to the log before its sender gets the 2xx. A
 * sender that got its 202 does not retry, so a delivery acknowledged and then lost with the
 * worker is lost for good. Forty deliveries race into `reqon worker --listen` and the worker is
 * killed (SIGKILL) the moment the tenth 202 arrives: every delivery answered 202 — those read
 * after the kill from the socket included — must be in the log. On every log backend.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRealEnv } from '../../engine/env/real-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import type { EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { backends, tempLogTarget, type TempLogTarget } from '../support/temp-log.js';
import { buildCli } from './support/build-cli.js';
import { killAll, spawnNode, waitFor } from './support/processes.js';

const DELIVERIES = 40;
const KILL_AT = 10;

/** One POST on a connection of its own (no keep-alive pooling to hide a reset): its status, or null if the connection died first. */
function deliver(url: string, id: string, onStatus: (status: number) => void): Promise<number | null> {
  return new Promise((resolve) => {
    const body = JSON.stringify({ vote: id });
    const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'idempotency-key': id, 'content-length': Buffer.byteLength(body) } }, (res) => {
      onStatus(res.statusCode!);
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
      res.on('error', () => resolve(res.statusCode!));
    });
    req.on('error', () => resolve(null));
    req.end(body);
  });
}

describe.each(backends)('%s: a webhook acknowledged is a webhook kept', (backend) => {
  let target: TempLogTarget;
  let log: EventLog;

  beforeEach(async () => {
    target = await tempLogTarget(backend, 'reqon-webhook-ack-');
    log = await openLog(target.target);
  });
  afterEach(async () => {
    killAll();
    await log.close();
    await target.drop();
  });

  it('the worker killed as the tenth 202 arrives: every delivery answered 202 is in the log', { timeout: 120_000 }, async () => {
    const dir = target.dir;
    const file = path.join(dir, 'votes.vague');
    const text = 'mission Votes {\n  store got: memory("got")\n  action A {\n    wait { path: "/votes", timeout: 600000, expectedEvents: 1000 }\n  }\n  run A\n}\n';
    fs.writeFileSync(file, text);
    const started = await startRun({ entry: file, files: [{ path: file, text }] }, { sources: {}, env: {} }, { log, env: createRealEnv({}), dataDir: path.join(dir, 'data') });
    expect(started.status).toBe('suspended');

    const worker = spawnNode(buildCli().cli, ['worker', '--listen', '0', '--poll', '50', '--db', target.target], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data'), REQON_WEBHOOK_SECRET: '' } });
    const base = await waitFor('the worker to print its webhook URL', () => /webhooks on (http:\/\/127\.0\.0\.1:\d+)/.exec(worker.stdout())?.[1]);

    let acknowledged = 0;
    const ids = Array.from({ length: DELIVERIES }, (_, i) => `vote-${i}`);
    const statuses = await Promise.all(
      ids.map((id) =>
        deliver(`${base}/votes`, id, (status) => {
          if (status === 202 && ++acknowledged === KILL_AT) worker.child.kill('SIGKILL');
        }),
      ),
    );
    const exit = await worker.exited;
    expect(exit.signal, exit.stderr).toBe('SIGKILL');

    const answered = ids.filter((_, i) => statuses[i] === 202);
    expect(answered.length).toBeGreaterThanOrEqual(KILL_AT);
    const kept = await Promise.all(answered.map((id) => log.webhookDelivered('/votes', id)));
    expect(answered.filter((_, i) => !kept[i]), 'acknowledged with 202 but not in the log').toEqual([]);
    // Nothing else than 202 or a dead connection: the kill, not a refusal, is what stopped the rest.
    expect(statuses.filter((s) => s !== 202 && s !== null)).toEqual([]);
  });
});
