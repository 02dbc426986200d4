/**
 * `run.verify` for the studio: the executor's verifier (engine/executor/verify.ts), imported
 * statically, on a run's own mission or on an edited entry file. Verify sends nothing and writes
 * nothing; its env only answers the clock for its bookkeeping.
 */
import { createRealEnv } from '../env/real-env.js';
import { verifyRun } from '../executor/verify.js';
import type { EventLog, MissionFiles } from '../log/log.js';
import type { VerifyReport } from '../protocol/protocol.js';

export async function verifyInStudio(log: EventLog, runId: string, edit?: { recorded: MissionFiles; missionText: string }): Promise<VerifyReport> {
  const env = createRealEnv({});
  if (edit === undefined) return verifyRun(log, runId, { env });
  // An edited mission replaces the entry file; a folder mission's other files stay as recorded.
  const { recorded, missionText } = edit;
  const missionFiles: MissionFiles = {
    entry: recorded.entry,
    files: recorded.files.map((f) => (f.path === recorded.entry ? { path: f.path, text: missionText } : f)),
  };
  return verifyRun(log, runId, { missionFiles, env });
}
