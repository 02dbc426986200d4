/**
 * The PostgreSQL log goes away mid-run, on a throwaway cluster of this test's own (the shared one
 * serves other files): a `reqon worker` is executing 16 runs of slow POSTs when the cluster is
 * stopped (`pg_ctl stop -m fast`) and started again 2 s later.
 *
 * The worker does not die: it says it cannot reach the log database and keeps looking; when the
 * server is back it carries every run on — each run completes, every POST applied once per
 * Idempotency-Key at the counting server, every store row written once. While the server is down,
 * a CLI command fails in one clear line (exit 2, no stack, no password), and works again after.
 *
 * And a `reqon run` whose log goes away inside a loop: the failed commit is no step's failure —
 * no iteration is skipped or tolerated, the command stops in one clear line (exit 1), and once the
 * server is back `reqon resume` carries the run on: every iteration once, verify clean.
 * Skipped, with the reason printed, where the PostgreSQL binaries are missing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRealEnv } from '../../engine/env/real-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import type { EventLog, MissionFiles } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { FakeApi } from '../support/fake-api.js';
import { findPgBin, startPgCluster, type PgCluster } from '../support/pg-cluster.js';
import { requestedBackends } from '../support/backends.js';
import { buildCli, type CliBuild } from '../time/support/build-cli.js';
import { killAll, runNode, spawnNode, waitFor } from '../time/support/processes.js';

const bin = findPgBin();
const wanted = requestedBackends().includes('postgres');
if (wanted && 'missing' in bin) console.warn(`[postgres-restart] SKIPPED: ${bin.missing}`);
const RUNS = 16;
const SLOW = `mission Slow {
  source Api { auth: none, base: "http://placeholder.test" }
  store done: sql("slow_done")
  action A {
    pause { duration: "200ms" }
    post "/effects" { body: { run: env("N"), step: 1 } }
    post "/effects" { body: { run: env("N"), step: 2 } }
    post "/effects" { body: { run: env("N"), step: 3 } }
    post "/effects" { body: { run: env("N"), step: 4 } }
    post "/effects" { body: { run: env("N"), step: 5 } }
    store { id: env("N"), ok: true } -> done { key: .id }
  }
  run A
}
`;

const LOOP = `mission Loop {
  source Api { auth: none, base: "http://placeholder.test" }
  store rows: sql("loop_rows")
  action Send {
    for i in range(0, 30) {
      post "/items" { body: { i: i } }
      store { id: i, answer: response.ok } -> rows { key: .id }
    }
  }
  run Send
}
`;

let build: CliBuild;
let cluster: PgCluster | undefined;
let api: FakeApi | undefined;
let log: EventLog | undefined;

beforeAll(() => {
  if (wanted && !('missing' in bin)) build = buildCli();
}, 180_000);
afterEach(() => killAll());
afterAll(async () => {
  await log?.close().catch(() => undefined);
  await api?.stop();
  cluster?.stop();
});

describe.runIf(wanted && !('missing' in bin))('the PostgreSQL server restarts mid-run', () => {
  it('the worker waits with a clear message and carries every run on: nothing lost, nothing doubled', async () => {
    cluster = await startPgCluster();
    const url = cluster.url;
    const dir = cluster.dir;
    api = new FakeApi().on('POST /effects', async () => {
      await new Promise((r) => setTimeout(r, 60));
      return { status: 201, body: { ok: true } };
    });
    await api.start();
    const file = path.join(dir, 'slow.vague');
    fs.writeFileSync(file, SLOW);
    fs.chmodSync(file, 0o644);
    const files: MissionFiles = { entry: file, files: [{ path: file, text: SLOW }] };

    log = await openLog(url);
    const env = createRealEnv(process.env);
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await startRun(files, { sources: { Api: api.url }, env: { N: `r${i}` } }, { log, env, dataDir: path.join(dir, 'data-test') });
      expect(r.status).toBe('suspended');
      runIds.push(r.runId);
    }
    await log.close();
    log = undefined;

    const worker = spawnNode(build.cli, ['worker', '--db', url, '--poll', '100', '--lease-ttl', '3000', '--concurrency', `${RUNS}`], {
      cwd: dir,
      env: { REQON_DATA_DIR: path.join(dir, 'data-worker') },
    });
    await waitFor('the worker to be mid-way through the runs', () => api!.requests.length >= RUNS, 60_000, 5);
    cluster.ctl(['-w', '-m', 'fast', 'stop']);
    const whileDown = await runNode(build.cli, ['runs', '--db', url], { cwd: dir });
    await new Promise((r) => setTimeout(r, 2000));
    cluster.ctl(['-w', '-o', `-c listen_addresses=127.0.0.1 -p ${cluster.port} -k ${dir}`, 'start']);

    expect(whileDown.code, whileDown.stderr).toBe(2);
    expect(whileDown.stderr).toMatch(/^reqon: cannot reach the log database postgres:\/\/reqon@127\.0\.0\.1:\d+\/postgres: .*check that the server is running/);
    expect(whileDown.stderr).not.toMatch(/\n\s+at /);

    log = await openLog(url);
    await waitFor(
      `all ${RUNS} runs to complete after the restart`,
      async () => (await log!.listRuns({ status: 'completed' })).length === RUNS,
      120_000,
      200,
    ).catch(async (error: unknown) => {
      const runs = await log!.listRuns();
      throw new Error(`${(error as Error).message}\nruns: ${runs.map((r) => `${r.runId} ${r.status} ${r.owner} ${r.leaseExpiresAt}`).join('; ')}\nworker stderr:\n${worker.stderr().slice(0, 2500)}`);
    });
    expect(worker.stderr()).toMatch(/cannot reach the log database|Connection terminated|terminating connection/);
    expect(worker.child.exitCode).toBeNull();
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code, worker.stderr()).toBe(0);

    const keys = new Set(api.requests.map((r) => String(r.headers['idempotency-key'])));
    expect(keys.size).toBe(RUNS * 5);
    for (const key of keys) expect(api.applied.get(key), key).toBe(1);
    expect((await log.readTable('sql', 'slow_done')).map((r) => r.key).sort()).toEqual(Array.from({ length: RUNS }, (_, i) => `r${i}`).sort());
    for (const runId of runIds) {
      const events = await log.read(runId);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.filter((e) => e.type === 'run.completed')).toHaveLength(1);
    }
    const after = await runNode(build.cli, ['runs', '--db', url], { cwd: dir });
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout.split('\n').filter((l) => / completed /.test(l))).toHaveLength(RUNS);
  }, 240_000);

  it('a reqon run loses its log inside a loop: no iteration is tolerated as failed, the command stops in one line, resume finishes it once', async () => {
    const own = await startPgCluster();
    try {
      const dir = own.dir;
      const loopApi = new FakeApi().on('POST /items', async () => {
        await new Promise((r) => setTimeout(r, 40));
        return { status: 201, body: { ok: true } };
      });
      await loopApi.start();
      try {
        const file = path.join(dir, 'loop.vague');
        fs.writeFileSync(file, LOOP);
        fs.chmodSync(file, 0o644);
        const run = spawnNode(build.cli, ['run', file, '--db', own.url, '--source', `Api=${loopApi.url}`], { cwd: dir });
        await waitFor('a few iterations', () => loopApi.requests.length >= 5, 60_000, 5);
        own.ctl(['-w', '-m', 'fast', 'stop']);
        const ended = await run.exited;
        own.ctl(['-w', '-o', `-c listen_addresses=127.0.0.1 -p ${own.port} -k ${dir}`, 'start']);

        // Interrupted, not failed (exit 12): the run is running in the log, and resumable.
        expect(ended.code, ended.stderr).toBe(12);
        expect(ended.stderr).toMatch(/^reqon: lost the log database mid-run: /m);
        expect(ended.stderr).toMatch(/is interrupted, not failed: .* it stays resumable/);
        expect(ended.stderr).not.toMatch(/failed and was skipped|internal error|\n\s+at /);
        const runId = /^run (\S+)/m.exec(ended.stdout)?.[1];
        expect(runId, ended.stdout).toBeDefined();

        const resumed = await runNode(build.cli, ['resume', runId!, '--db', own.url], { cwd: dir, timeoutMs: 60_000 });
        expect(resumed.code, resumed.stderr).toBe(0);
        const verified = await runNode(build.cli, ['verify', runId!, '--db', own.url], { cwd: dir });
        expect(verified.code, verified.stdout + verified.stderr).toBe(0);

        const loopLog = await openLog(own.url);
        try {
          const events = await loopLog.read(runId!);
          expect(events.filter((e) => e.type === 'step.failed')).toEqual([]);
          expect((await loopLog.getRun(runId!))!.status).toBe('completed');
          expect((await loopLog.readTable('sql', 'loop_rows')).map((r) => r.key)).toEqual(Array.from({ length: 30 }, (_, i) => String(i)));
        } finally {
          await loopLog.close();
        }
        const keys = new Set(loopApi.requests.map((r) => String(r.headers['idempotency-key'])));
        expect(keys.size).toBe(30);
        for (const key of keys) expect(loopApi.applied.get(key), key).toBe(1);
      } finally {
        await loopApi.stop();
      }
    } finally {
      own.stop();
    }
  }, 240_000);
});
