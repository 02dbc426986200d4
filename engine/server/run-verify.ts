/**
 * `run.verify` for the studio: the executor's verifier (engine/executor/verify.ts), imported
 * statically, on a run's own mission or on edited files of it. Verify sends nothing and writes
 * nothing; its env only answers the clock for its bookkeeping.
 */
import { createRealEnv } from '../env/real-env.js';
import { MissionInvalidError } from '../executor/mission-cache.js';
import { verifyRun } from '../executor/verify.js';
import type { EventLog, MissionFiles } from '../log/log.js';
import type { VerifyReport } from '../protocol/protocol.js';
import { StudioError } from './studio-error.js';

/**
 * `missionText` replaces the entry file, `files` any of the run's files by its recorded path (a
 * folder mission's action files: before, only the entry could be edited); the others stay as recorded.
 */
export async function verifyInStudio(log: EventLog, runId: string, edit?: { recorded: MissionFiles; missionText?: string; files?: Record<string, string> }): Promise<VerifyReport> {
  const env = createRealEnv({});
  if (edit === undefined) return verifyRun(log, runId, { env });
  const { recorded, missionText, files = {} } = edit;
  const unknown = Object.keys(files).filter((file) => !recorded.files.some((f) => f.path === file));
  if (unknown.length > 0) {
    throw new StudioError('bad-request', `run.verify: the run's mission has no file ${unknown.join(', ')} (its files: ${recorded.files.map((f) => f.path).join(', ')})`);
  }
  const missionFiles: MissionFiles = {
    ...recorded,
    files: recorded.files.map((f) => ({ path: f.path, text: files[f.path] ?? (f.path === recorded.entry && missionText !== undefined ? missionText : f.text) })),
  };
  try {
    return await verifyRun(log, runId, { missionFiles, env });
  } catch (error) {
    // The page's text, not the server: a bad request, said as the checker says it (its line and column).
    if (error instanceof MissionInvalidError) {
      const edited = [...new Set([...(missionText !== undefined ? [recorded.entry] : []), ...Object.keys(files)])];
      throw new StudioError('bad-request', `run.verify: the edited mission does not pass its checks (checked with ${edited.join(', ')} edited):\n${error.rendered}`);
    }
    throw error;
  }
}
