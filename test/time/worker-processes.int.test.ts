/**
 * Real processes, real clock:
 * - restart: a run pauses for 2 s (`reqon run` exits 10), no process is left, and a
 *   `reqon worker --once` started 3 s later completes it; the POST after the pause is applied once.
 * - SIGKILL: a worker executing a run of 12 slow POSTs (started by the worker itself from an `at`
 *   schedule) is killed with kill -9 mid-way; a second `reqon worker --once` takes the run over
 *   (its owner's process is gone) and completes it; the API applied every key once; the store
 *   holds every record.
 * - SIGTERM: the worker exits 0 after its current step, leaving the run `running` with no owner;
 *   another worker finishes it, every effect once. A step waiting out an hour's `Retry-After`
 *   stops at once, its attempt in the log.
 * On every log backend (test/support/temp-log.ts): the processes are given the PostgreSQL URL as
 * `--db`, as workers on many machines would be.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openLog } from '../../engine/log/open-log.js';
import { MemoryStoreState } from '../../engine/stores/memory-fold.js';
import { FakeApi } from '../support/fake-api.js';
import { backends, tempLogTarget, type Backend, type TempLogTarget } from '../support/temp-log.js';
import { buildCli, type CliBuild } from './support/build-cli.js';
import { killAll, runNode, spawnNode, waitFor } from './support/processes.js';

let build: CliBuild;
let dir: string;
let api: FakeApi;
const ITEMS = Array.from({ length: 12 }, (_, i) => ({ id: i + 1 }));

beforeAll(async () => {
  build = buildCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-workers-'));
  api = new FakeApi()
    .on('GET /items', { body: ITEMS })
    .on('POST /applied', { status: 201, body: { ok: true } })
    .on('POST /busy', { status: 503, headers: { 'retry-after': '3600' }, body: { error: 'busy' } });
  for (const item of ITEMS) {
    api.on(`POST /items/${item.id}`, async () => {
      await new Promise((r) => setTimeout(r, 120));
      return { status: 201, body: { id: item.id, saved: true } };
    });
  }
  await api.start();
}, 180_000);
/** The logs of the test in progress, dropped once its processes are gone. */
const targets: TempLogTarget[] = [];
afterEach(async () => {
  killAll();
  for (const target of targets.splice(0)) await target.drop();
});
afterAll(async () => {
  await api?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

/** A fresh log on `backend`: the `--db` value. */
async function freshLog(backend: Backend): Promise<string> {
  const target = await tempLogTarget(backend, 'reqon-workers-log-');
  targets.push(target);
  return target.target;
}

function cli(args: string[], db: string) {
  return runNode(build.cli, [...args, '--db', db], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
}

const SLOW = (name: string) => `mission ${name} {
  schedule: at "2020-01-01T00:00:00Z"
  source Api { auth: none, base: "http://placeholder.test" }
  store done: memory("done")
  action Load {
    get "/items"
    for item in response {
      post "/items/{item.id}" { body: { id: item.id } }
      store { id: item.id, saved: response.saved } -> done { key: .id }
    }
  }
  run Load
}
`;

async function itemPosts(): Promise<number> {
  return api.requests.filter((r) => r.method === 'POST' && r.url.startsWith('/items/')).length;
}

/** `from`: index of the first API request of this test (the API is shared by the file's tests). */
async function expectAllItemsOnce(db: string, mission: string, from: number): Promise<void> {
  const log = await openLog(db);
  try {
    const runs = (await log.listRuns()).filter((r) => r.mission === mission);
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    expect(run.status).toBe('completed');
    const state = MemoryStoreState.fromEvents(await log.read(run.runId));
    expect(state.list('done').map((r) => r.key)).toEqual(ITEMS.map((i) => String(i.id)).sort());
    expect(await log.scheduleFirings(mission)).toHaveLength(1);
  } finally {
    await log.close();
  }
  // Every key the API saw was applied exactly once, one key per item.
  const mine = api.requests.slice(from).filter((r) => r.url.startsWith('/items/'));
  const keys = new Set(mine.map((r) => String(r.headers['idempotency-key'])));
  expect(keys.size).toBe(ITEMS.length);
  for (const key of keys) expect(api.applied.get(key)).toBe(1);
  const paths = new Set(mine.map((r) => r.url));
  expect(paths.size).toBe(ITEMS.length);
}

describe.each(backends)('%s: worker processes', (backend) => {
  it('a 2 s pause survives every process going away; a worker started 3 s later completes it, once', async () => {
    const db = await freshLog(backend);
    const file = write(
      'restart.vague',
      `mission Restart {
  source Api { auth: none, base: "http://placeholder.test" }
  store done: memory("done")
  action A {
    pause { duration: "2s" }
    post "/applied" { body: { once: true } }
    store { id: "x", ok: true } -> done { key: .id }
  }
  run A
}
`,
    );
    // The API is shared by the file's tests (and backends): count this test's requests only.
    const from = api.requests.length;
    const applied = () => api.requests.slice(from).filter((r) => r.url === '/applied');
    const run = await cli(['run', file, '--source', `Api=${api.url}`], db);
    expect(run.code, run.stderr).toBe(10);
    const runId = /^run (\S+)$/m.exec(run.stdout)![1]!;
    killAll(); // nothing of ours may survive: the run lives in the database only
    await new Promise((r) => setTimeout(r, 3_000));
    const worker = await cli(['worker', '--once'], db);
    expect(worker.code, worker.stderr).toBe(0);
    expect(worker.stderr).toContain(`${runId}: completed`);
    expect(applied()).toHaveLength(1);
    expect([...api.applied.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    const show = await cli(['show', runId], db);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/completed/);
    const again = await cli(['worker', '--once'], db);
    expect(again.code).toBe(0);
    expect(applied()).toHaveLength(1);
  });

  it('kill -9 of a worker mid-run: a second worker completes the run, every effect exactly once', async () => {
    const db = await freshLog(backend);
    const file = write('sigkill.vague', SLOW('Killed'));
    const before = await itemPosts();
    const from = api.requests.length;
    const first = spawnNode(build.cli, ['worker', file, '--db', db, '--source', `Api=${api.url}`, '--poll', '50'], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
    await waitFor('4 POSTs from the first worker', async () => (await itemPosts()) - before >= 4);
    first.child.kill('SIGKILL');
    const dead = await first.exited;
    expect(dead.signal).toBe('SIGKILL');
    const postsAtKill = (await itemPosts()) - before;
    expect(postsAtKill).toBeLessThan(ITEMS.length);
    const second = await cli(['worker', '--once'], db);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/: completed/);
    await expectAllItemsOnce(db, 'Killed', from);
  });

  it('SIGTERM: the worker exits 0 after its current step, the run is running with no owner, another worker finishes it', async () => {
    const db = await freshLog(backend);
    const file = write('sigterm.vague', SLOW('Stopped'));
    const before = await itemPosts();
    const from = api.requests.length;
    const first = spawnNode(build.cli, ['worker', file, '--db', db, '--source', `Api=${api.url}`, '--poll', '50'], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
    await waitFor('3 POSTs from the first worker', async () => (await itemPosts()) - before >= 3);
    first.child.kill('SIGTERM');
    const stopped = await first.exited;
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stderr).toContain('stopping: finishing current steps and releasing runs');
    const log = await openLog(db);
    try {
      const [run] = await log.listRuns();
      expect(run).toMatchObject({ status: 'running', owner: null, mission: 'Stopped' });
      // The step in progress finished: its POST's outcome is in the log, not left hanging.
      const events = await log.read(run!.runId);
      const requests = events.filter((e) => e.type === 'http.request').length;
      const outcomes = events.filter((e) => e.type === 'http.response').length;
      expect(requests).toBeGreaterThanOrEqual(3);
      expect(requests).toBeLessThan(ITEMS.length + 1);
      expect(outcomes).toBe(requests);
    } finally {
      await log.close();
    }
    const second = await cli(['worker', '--once'], db);
    expect(second.code, second.stderr).toBe(0);
    await expectAllItemsOnce(db, 'Stopped', from);
  });

  it('SIGTERM while a step waits out an hour of Retry-After: the worker stops at once, the attempt is in the log, the run is released', async () => {
    const db = await freshLog(backend);
    const file = write(
      'busy.vague',
      `mission Busy {
  schedule: at "2020-01-01T00:00:00Z"
  source Api { auth: none, base: "http://placeholder.test" }
  action A {
    post "/busy" { body: { n: 1 }, retry: { maxAttempts: 3, maxDelay: 7200000 } }
  }
  run A
}
`,
    );
    const from = api.requests.length;
    const busy = () => api.requests.slice(from).filter((r) => r.url === '/busy');
    const worker = spawnNode(build.cli, ['worker', file, '--db', db, '--source', `Api=${api.url}`, '--poll', '50'], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
    await waitFor('the first POST /busy', async () => busy().length >= 1);
    await waitFor('its retry in the log', async () => {
      const log = await openLog(db);
      try {
        const [run] = await log.listRuns();
        return run !== undefined && (await log.read(run.runId)).some((e) => e.type === 'http.response' && e.payload.verdict === 'retry');
      } finally {
        await log.close();
      }
    });
    worker.child.kill('SIGTERM');
    // Before the fix the worker slept out the hour (the test's time limit is the bound).
    const stopped = await worker.exited;
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(busy()).toHaveLength(1);
    const log = await openLog(db);
    try {
      const [run] = await log.listRuns();
      expect(run).toMatchObject({ status: 'running', owner: null, mission: 'Busy' });
      const events = await log.read(run!.runId);
      expect(events.filter((e) => e.type === 'step.failed' || e.type === 'run.failed')).toEqual([]);
      const retry = events.find((e) => e.type === 'http.response')!;
      expect(retry.payload).toMatchObject({ verdict: 'retry', retryInMs: 3_600_000 });
    } finally {
      await log.close();
    }
  });
});
