/**
 * Child process of the engine bench's paginated-sync figure (5): with the real engine and the real
 * SQLite log, against the bench server, prints one JSON line — how the run ended, how long it
 * took, and this process's peak RSS, measured here, alone, so the server and the parent's other
 * benches do not count. Three modes:
 *   sync-child.js DB URL DATA_DIR PAGE_SIZE                  one sync run (engine-fixtures.ts `syncMission`)
 *   sync-child.js DB URL DATA_DIR PAGE_SIZE --kill-at PAGE   the same run, killed (SIGKILL, the
 *       `mid-store` crash point) while it stores page PAGE; prints `run <ID>` first
 *   sync-child.js DB URL DATA_DIR PAGE_SIZE --resume RUN_ID  resumes that killed run to its end
 */
import { performance } from 'node:perf_hooks';
import { createRealEnv } from '../../engine/env/real-env.js';
import { resumeRun, startRun, type RunResult } from '../../engine/executor/run-mission.js';
import { openLog } from '../../engine/log/open-log.js';
import { missionFiles, syncMission } from './engine-fixtures.js';

export interface SyncChildReport {
  status: string;
  ms: number;
  /** Peak resident set size of this process, in bytes. */
  maxRssBytes: number;
  fsyncs: number;
  transactions: number;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string): string | undefined => {
    const at = args.indexOf(name);
    return at < 0 ? undefined : args.splice(at, 2)[1];
  };
  const killAt = option('--kill-at');
  const resumeId = option('--resume');
  const [dbPath, url, dataDir, pageSizeText] = args;
  if (!dbPath || !url || !dataDir || !pageSizeText) {
    throw new Error('usage: sync-child.js DB_PATH SERVER_URL DATA_DIR PAGE_SIZE [--kill-at PAGE | --resume RUN_ID]');
  }
  const env = createRealEnv({});
  const log = await openLog(dbPath);
  try {
    const deps = {
      log,
      env,
      dataDir,
      ...(killAt ? { crash: { point: 'mid-store' as const, occurrence: Number(killAt) } } : {}),
      onRunId: (runId: string) => process.stdout.write(`run ${runId}\n`),
    };
    const started = performance.now();
    const result: RunResult = resumeId
      ? await resumeRun(resumeId, { by: 'api' }, deps)
      : await startRun(missionFiles(dataDir, 'bench-sync', syncMission(Number(pageSizeText))), { sources: { Api: url }, env: {} }, deps);
    const ms = performance.now() - started;
    const stats = log.stats();
    const report: SyncChildReport = {
      status: result.status === 'failed' ? `failed: ${result.error.message}` : result.status,
      ms,
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
      fsyncs: stats.fsyncs,
      transactions: stats.transactions,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await log.close();
    await env.http.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`sync-child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
