/**
 * Reqon's engine as a library: the front door (`package.json` "main"). Everything a program
 * needs to run missions durably without the CLI or the studio:
 *
 *   const log = await openLog('.reqon/reqon.db');
 *   const env = createRealEnv();
 *   const files = readMissionFiles('orders.vague');
 *   const run = await startRun(files, { sources: {}, env: {} }, { log, env, dataDir: '.reqon-data' });
 *   // run.status: 'completed' | 'failed' | 'suspended' — resumeRun(run.runId, {}, deps) carries on.
 *   const report = await verifyRun(log, run.runId, { env });
 *
 * Nothing here is a second implementation: these are the modules the CLI itself uses.
 */
export type { EventLog, MissionFiles, RunOptions, RunRecord, RunStatus } from './log/log.js';
export { openLog } from './log/open-log.js';
export { LOG_FORMAT, type EventType, type EventPayloads, type NewEvent, type StoredEvent } from './log/events.js';
export { createRealEnv, type RealEnv } from './env/real-env.js';
export { createFakeEnv, type FakeEnv } from './env/fake-env.js';
export type { Env } from './env/env.js';
export {
  continueRun,
  MissionInvalidError,
  missionHash,
  readMissionFiles,
  resumeRun,
  RunUnavailableError,
  startRun,
  type EngineDeps,
  type ResumeOptions,
  type RunResult,
} from './executor/run-mission.js';
export { verifyRun } from './executor/verify.js';
export { NondeterminismError, type DivergenceDetail } from './journal/nondeterminism-error.js';
export { CRASH_POINTS, EFFECT_KINDS, type CrashPoint, type EffectKind } from './journal/effects.js';
export { parseCrashSpec, type CrashPlan } from './journal/crash-points.js';
export { MissionLoadError } from './lang/loader.js';
export { Worker, type WorkerOptions } from './worker/worker.js';
export type { VerifyReport } from './protocol/protocol.js';
