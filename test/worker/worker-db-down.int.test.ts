/**
 * `reqon worker` started while its PostgreSQL log is down (a throwaway cluster of this test's own,
 * stopped): a worker is a service, so it says the database cannot be reached and looks again with
 * a growing delay, printing each look; when the server comes up it carries on — here, the run
 * that was waiting for it completes. SIGTERM while it waits, or after, ends it with exit 0.
 * (Before, it exited 2 at once, a usage error, and a service manager's restart loop was the only
 * retry.) A `--once` pass does not wait for ever: test/log/postgres-url.int.test.ts.
 * Skipped, with the reason printed, where the PostgreSQL binaries are missing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRealEnv } from '../../engine/env/real-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import type { MissionFiles } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { requestedBackends } from '../support/backends.js';
import { findPgBin, startPgCluster, type PgCluster } from '../support/pg-cluster.js';
import { buildCli, type CliBuild } from '../time/support/build-cli.js';
import { killAll, spawnNode, waitFor } from '../time/support/processes.js';

const bin = findPgBin();
const wanted = requestedBackends().includes('postgres');
if (wanted && 'missing' in bin) console.warn(`[worker-db-down] SKIPPED: ${bin.missing}`);

const WAITS = `mission Waits {
  store done: sql("waits_done")
  action A {
    pause { duration: "100ms" }
    store { id: "after", ok: true } -> done { key: .id }
  }
  run A
}
`;

let build: CliBuild;
/** This test's cluster, and whether it is up (stop() needs it up; a down one is only deleted). */
let cluster: PgCluster | undefined;
let up = false;

function stopCluster(): void {
  cluster!.ctl(['-w', '-m', 'fast', 'stop']);
  up = false;
}
function startCluster(): void {
  cluster!.ctl(['-w', '-o', `-c listen_addresses=127.0.0.1 -p ${cluster!.port} -k ${cluster!.dir}`, 'start']);
  up = true;
}

beforeAll(() => {
  if (wanted && !('missing' in bin)) build = buildCli();
}, 180_000);
afterEach(() => {
  killAll();
  if (cluster && up) cluster.stop();
  else if (cluster) fs.rmSync(cluster.dir, { recursive: true, force: true });
  cluster = undefined;
});

describe.runIf(wanted && !('missing' in bin))('reqon worker started while its PostgreSQL log is down', () => {
  it('says it cannot reach the database, keeps looking, and carries on once the server is up', async () => {
    cluster = await startPgCluster();
    up = true;
    const { url, dir } = cluster;
    const file = path.join(dir, 'waits.vague');
    fs.writeFileSync(file, WAITS);
    const files: MissionFiles = { entry: file, files: [{ path: file, text: WAITS }] };
    const log = await openLog(url);
    let runId: string;
    try {
      const started = await startRun(files, { sources: {}, env: {} }, { log, env: createRealEnv(process.env), dataDir: path.join(dir, 'data') });
      expect(started.status).toBe('suspended');
      runId = started.runId;
    } finally {
      await log.close();
    }
    stopCluster();

    const worker = spawnNode(build.cli, ['worker', '--db', url, '--poll', '100'], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
    // Two looks, so it is seen waiting (not merely failing once); or its end, if it does not wait.
    await waitFor('the worker to look for the database twice, or to end', () => (worker.stderr().match(/looking again in/g) ?? []).length >= 2 || worker.child.exitCode !== null, 30_000, 20);
    expect(worker.child.exitCode, worker.stderr()).toBeNull();
    const lines = worker.stderr().trim().split('\n');
    expect(lines[0]).toMatch(/^cannot reach the log database postgres:\/\/reqon@127\.0\.0\.1:\d+\/postgres: .*; check that the server is running.* \(looking again in [\d.]+ s\)$/);
    expect(worker.stderr()).not.toMatch(/internal error|\n\s+at /);

    startCluster();
    const again = await openLog(url);
    try {
      await waitFor('the run to complete', async () => (await again.getRun(runId))?.status === 'completed', 60_000, 100).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}\nworker stderr:\n${worker.stderr()}`);
      });
      expect((await again.readTable('sql', 'waits_done')).map((r) => r.key)).toEqual(['after']);
    } finally {
      await again.close();
    }
    expect(worker.stderr()).toMatch(/^the log database is reachable: starting$/m);
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code, worker.stderr()).toBe(0);
  }, 180_000);

  it('SIGTERM while it waits for the database: it stops at once, exit 0', async () => {
    cluster = await startPgCluster();
    up = true;
    const { url, dir } = cluster;
    stopCluster();
    const worker = spawnNode(build.cli, ['worker', '--db', url, '--poll', '100'], { cwd: dir });
    await waitFor('the worker to wait for the database, or to end', () => /looking again in/.test(worker.stderr()) || worker.child.exitCode !== null, 30_000, 20);
    expect(worker.child.exitCode, worker.stderr()).toBeNull();
    worker.child.kill('SIGTERM');
    const ended = await worker.exited;
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stderr).toMatch(/^stopping/m);
  }, 120_000);
});
