/**
 * The log fails inside a loop — a full disk, on the backend under test — and that is no step's
 * failure (GUARANTEES, "the database restarting or unreachable"): the walk stops at once, no
 * iteration is tolerated as failed or skipped, nothing is marked failed, and a resume against
 * the healthy log finishes the run with every iteration once.
 */
import path from 'node:path';
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createRealEnv } from '../../engine/env/real-env.js';
import { resumeRun, startRun } from '../../engine/executor/run-mission.js';
import type { EventLog, MissionFiles } from '../../engine/log/log.js';
import { FakeApi } from '../support/fake-api.js';
import { backends, openTempLog, type TempLog } from '../support/temp-log.js';
import { overriding } from '../support/log-overrides.js';

const LOOP = `mission Loop {
  source Api { auth: none, base: "http://placeholder.test" }
  store rows: sql("loop_rows")
  action Send {
    for i in range(0, 12) {
      post "/items" { body: { i: i } }
      store { id: i } -> rows { key: .id }
    }
  }
  run Send
}
`;

/** An error as each backend reports a full disk. */
function diskFull(backend: string): Error {
  const e = new Error(backend === 'sqlite' ? 'database or disk is full' : 'could not extend file: No space left on device') as Error & { code: string };
  e.name = backend === 'sqlite' ? 'SqliteError' : 'error';
  e.code = backend === 'sqlite' ? 'SQLITE_FULL' : '53100';
  return e;
}

/** The log, except that its `failAt`-th commit fails as a full disk would. */
function failingOnce(log: EventLog, failAt: number, error: Error): EventLog {
  let commits = 0;
  return overriding(log, { commit: (...args) => (++commits === failAt ? Promise.reject(error) : log.commit(...args)) });
}

let temp: TempLog | undefined;
let api: FakeApi | undefined;
afterEach(async () => {
  await api?.stop();
  await temp?.close();
  api = temp = undefined;
});

describe.each(backends)('a log that fails mid-loop (%s)', (backend) => {
  it('stops the walk instead of skipping iterations, and a resume finishes every iteration once', async () => {
    temp = await openTempLog(backend, {}, 'reqon-log-failure-');
    api = new FakeApi().on('POST /items', { status: 201, body: { ok: true } });
    await api.start();
    const file = path.join(temp.dir, 'loop.vague');
    fs.writeFileSync(file, LOOP);
    const files: MissionFiles = { entry: file, files: [{ path: file, text: LOOP }] };
    const env = createRealEnv({});
    const error = diskFull(backend);

    await expect(
      startRun(files, { sources: { Api: api.url }, env: {} }, { log: failingOnce(temp.log, 8, error), env, dataDir: path.join(temp.dir, 'data') }),
    ).rejects.toBe(error);
    const [run] = await temp.log.listRuns();
    expect(run!.status).toBe('running');
    const before = await temp.log.read(run!.runId);
    expect(before.filter((e) => e.type === 'step.failed' || e.type === 'run.failed')).toEqual([]);

    const resumed = await resumeRun(run!.runId, {}, { log: temp.log, env, dataDir: path.join(temp.dir, 'data') });
    expect(resumed.status).toBe('completed');
    const after = await temp.log.read(run!.runId);
    expect(after.filter((e) => e.type === 'step.failed')).toEqual([]);
    expect((await temp.log.readTable('sql', 'loop_rows')).map((r) => r.key)).toEqual(Array.from({ length: 12 }, (_, i) => String(i)));
    const keys = new Set(api.requests.map((r) => String(r.headers['idempotency-key'])));
    expect(keys.size).toBe(12);
    for (const key of keys) expect(api.applied.get(key), key).toBe(1);
  });
});
