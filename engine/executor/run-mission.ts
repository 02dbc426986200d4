/**
 * Starting and resuming runs, one module per job: `run-start.ts` (new runs), `run-resume.ts`
 * (resume is replay), `execute.ts` (a run that holds its lease, walked to its end),
 * `mission-cache.ts` (checked missions), `owner.ts` (who owns a run). This is their front.
 */
export { DEFAULT_LEASE_TTL_MS, RunUnavailableError, type EngineDeps, type RunResult } from './execute.js';
export { MissionInvalidError, missionHash, modelFor, readMissionFiles } from './mission-cache.js';
export { defaultOwner, ownerIsDead } from './owner.js';
export { prepareNewRun, startRun, startRunFromSchedule, type PreparedRun } from './run-start.js';
export { continueRun, pendingHooks, resumeRun, resumeSuspendedRun, type ResumeOptions } from './run-resume.js';
