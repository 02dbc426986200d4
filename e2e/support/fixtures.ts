/**
 * The seeded runs most specs share: a completed run that survived a crash, a run suspended on a
 * timer two hours out, a failed run, and a run still executing (its writer is returned so a spec
 * can append to it live).
 */
import type { EventLog } from '../../engine/log/log.js';
import { seedDemoRun, type RunWriter } from './seed-runs.js';

export const BASE_AT = Date.UTC(2026, 10, 29, 9, 0, 0);

export const RUN_COMPLETED = 'run-completed-0001';
export const RUN_SUSPENDED = 'run-suspended-0002';
export const RUN_FAILED = 'run-failed-0003';
export const RUN_LIVE = 'run-live-0004';

export interface StandardRuns {
  live: RunWriter;
}

export async function seedStandardRuns(log: EventLog): Promise<StandardRuns> {
  await seedDemoRun(log, { runId: RUN_COMPLETED, startAt: BASE_AT, outcome: 'completed', crashAfterOrder: 3, orders: 7 });
  // Waiting on a timer due two hours from now (real time), for the live countdown.
  await seedDemoRun(log, { runId: RUN_SUSPENDED, startAt: BASE_AT + 60_000, outcome: 'suspended', orders: 4, wakeAt: Date.now() + 2 * 3600_000 });
  await seedDemoRun(log, { runId: RUN_FAILED, startAt: BASE_AT + 120_000, outcome: 'failed', orders: 5 });
  const live = await seedDemoRun(log, { runId: RUN_LIVE, startAt: BASE_AT + 180_000, outcome: 'running', orders: 3 });
  return { live };
}
