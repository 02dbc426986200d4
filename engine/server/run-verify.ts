/**
 * `run.verify` for the studio: the executor's verifier (engine/executor/verify.ts), imported
 * statically, on a run's own mission or on an edited entry file. Verify sends nothing and writes
 * nothing; its env only answers the clock for its bookkeeping.
 */
import { createRealEnv } from '../env/real-env.js';
import { MissionInvalidError } from '../executor/mission-cache.js';
import { verifyRun } from '../executor/verify.js';
import type { EventLog, MissionFiles } from '../log/log.js';
import type { VerifyReport } from '../protocol/protocol.js';
import { StudioError } from './studio-error.js';

export async function verifyInStudio(log: EventLog, runId: string, edit?: { recorded: MissionFiles; missionText: string }): Promise<VerifyReport> {
  const env = createRealEnv({});
  if (edit === undefined) return verifyRun(log, runId, { env });
  // An edited mission replaces the entry file; a folder mission's other files stay as recorded.
  const { recorded, missionText } = edit;
  const missionFiles: MissionFiles = {
    ...recorded,
    files: recorded.files.map((f) => (f.path === recorded.entry ? { path: f.path, text: missionText } : f)),
  };
  try {
    return await verifyRun(log, runId, { missionFiles, env });
  } catch (error) {
    // The page's text, not the server: a bad request, said as the checker says it (its line and column).
    if (error instanceof MissionInvalidError) {
      throw new StudioError('bad-request', `run.verify: the edited mission does not pass its checks (it was checked in place of ${recorded.entry}):\n${error.rendered}`);
    }
    throw error;
  }
}
