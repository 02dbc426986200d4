/**
 * Child process of the engine bench's replay figure (4): resumes suspended runs of the mission of
 * engine-fixtures.ts `replayMission` (built by the parent in the SQLite log at argv[2]) the way a
 * fresh process does after a crash, or a worker does when a pause is resumed, and prints one JSON
 * line: how each timed resume ended and how long `resumeRun` took (wall and CPU).
 *
 * Only `resumeRun` is timed: loading modules and opening the log happen before the clock starts
 * (a worker has done both long before it resumes anything). With `--warm-up RUN_ID`, that run is
 * resumed first, untimed, so the timed resume finds the engine's hot paths compiled — as in a
 * worker that has resumed runs before; without it the timed resume is the process's first.
 * With `--walk-all`, both resumes walk every loop iteration again (see `resume`).
 */
import { performance } from 'node:perf_hooks';
import { createRealEnv, type RealEnv } from '../../engine/env/real-env.js';
import { resumeRun, type RunResult } from '../../engine/executor/run-mission.js';
import type { EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';

export interface ReplayChildReport {
  /** How the timed resume ended ('failed: …' with the reason). */
  status: string;
  /** Events in the timed run's log before the resume (its lastSeq). */
  events: number;
  /** Wall time of the timed `resumeRun`, ms. */
  ms: number;
  /** CPU time (user + system) of this process during the timed `resumeRun`, ms: less moved by other work on the machine. */
  cpuMs: number;
}

/**
 * With `walkAll`, a crash point is armed at an occurrence never reached: a run under --crash-at
 * walks every loop iteration again instead of taking the finished ones as recorded (GUARANTEES
 * 13), so this times the full walk — what a resume with an edited mission also does.
 */
async function resume(log: EventLog, env: RealEnv, dataDir: string, runId: string, walkAll: boolean): Promise<RunResult> {
  const crash = walkAll ? { point: 'before-wait' as const, occurrence: Number.MAX_SAFE_INTEGER } : null;
  return resumeRun(runId, { payload: { go: true }, by: 'api' }, { log, env, dataDir, crash });
}

function describe(result: RunResult): string {
  return result.status === 'failed' ? `failed: ${result.error.message}` : result.status;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const walkAt = args.indexOf('--walk-all');
  const walkAll = walkAt >= 0;
  if (walkAll) args.splice(walkAt, 1);
  const warmAt = args.indexOf('--warm-up');
  const warmUp = warmAt >= 0 ? args.splice(warmAt, 2)[1] : undefined;
  const [dbPath, dataDir, runId] = args;
  if (!dbPath || !dataDir || !runId || (warmAt >= 0 && !warmUp)) {
    throw new Error('usage: replay-child.js DB_PATH DATA_DIR RUN_ID [--warm-up RUN_ID] [--walk-all]');
  }
  const env = createRealEnv({});
  const log = await openLog(dbPath, { debugChecks: false });
  try {
    if (warmUp) {
      const warmed = await resume(log, env, dataDir, warmUp, walkAll);
      if (warmed.status !== 'completed') throw new Error(`the warm-up run ${warmUp} ended ${describe(warmed)}, expected completed`);
    }
    const run = await log.getRun(runId);
    if (!run) throw new Error(`no run ${runId} in ${dbPath}`);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const result = await resume(log, env, dataDir, runId, walkAll);
    const ms = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const report: ReplayChildReport = { status: describe(result), events: run.lastSeq, ms, cpuMs: (cpu.user + cpu.system) / 1000 };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await log.close();
    await env.http.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`replay-child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
