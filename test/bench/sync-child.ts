/**
 * Child process of the engine bench's paginated-sync figure: runs ONE sync run (the mission of
 * engine-fixtures.ts `syncMission`) against the bench server at argv[3], with the real engine and
 * the real SQLite log at argv[2], and prints one JSON line: how the run ended, how long it took,
 * and this process's peak RSS — measured here, alone, so the server and the parent's other
 * benches do not count.
 */
import { performance } from 'node:perf_hooks';
import { createRealEnv } from '../../engine/env/real-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import { openLog } from '../../engine/log/log.js';
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
  const [dbPath, url, dataDir, pageSizeText] = process.argv.slice(2);
  if (!dbPath || !url || !dataDir || !pageSizeText) {
    throw new Error('usage: sync-child.js DB_PATH SERVER_URL DATA_DIR PAGE_SIZE');
  }
  const env = createRealEnv({});
  const log = await openLog(dbPath);
  try {
    const files = missionFiles(dataDir, 'bench-sync', syncMission(Number(pageSizeText)));
    const started = performance.now();
    const result = await startRun(files, { sources: { Api: url }, env: {} }, { log, env, dataDir });
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
