/**
 * The PostgreSQL log goes away mid-run, on a throwaway cluster of this test's own (the shared one
 * serves other files): a `reqon worker` is executing 16 runs of slow POSTs when the cluster is
 * stopped (`pg_ctl stop -m fast`) and started again 2 s later.
 *
 * The worker does not die: it says it cannot reach the log database and keeps looking; when the
 * server is back it carries every run on — each run completes, every POST applied once per
 * Idempotency-Key at the counting server, every store row written once. While the server is down,
 * a CLI command fails in one clear line (exit 2, no stack, no password), and works again after.
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
});
