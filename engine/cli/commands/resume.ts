/**
 * `reqon resume RUN_ID [--mission FILE] [--payload JSON] [--crash-at POINT] [--json]` — continue a
 * run after a crash, or resume its pause (with the payload that becomes `response`). Of several
 * racing resumers of one pause exactly one wins; the others exit 11 with "already resumed" (also
 * once the winner's run has ended). A run that already finished answers with its end (exit 0
 * completed, 1 failed): resume is idempotent; a payload or an edit for it is refused (exit 2).
 */
import type { Command } from 'commander';
import { JsonDepthError, parseJsonInput } from '../../env/json-input.js';
import { UnloggableValueError } from '../../log/loggable.js';
import { resumeRun } from '../../executor/run-mission.js';
import { CliError } from '../cli-error.js';
import type { CliIo, CommandModule } from '../command-module.js';
import { cliEnv, CRASH_AT_HELP, crashPlanOption, dataDir, openCliLog, readMissionFiles, reportLostLog } from '../engine-context.js';
import type { ExitCode } from '../exit-codes.js';
import { progressTo, reportInterrupted, reportRun, reportRunError, reportUntouched } from '../run-output.js';

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd
      .argument('<runId>', 'the run to continue')
      .option('--mission <file>', 'replay against this (edited) mission instead of the one the run started with')
      .option('--payload <json>', 'for a paused run: the JSON value that becomes `response` after the pause (for a `wait`: a delivery on its path)')
      .option('--event-id <id>', "for a `wait`: this payload's event id — an event equal to one the wait took is a new one under an id of its own (two equal votes); the same id again is the same event, refused")
      .option('--pause <id>', "resume this pause (its pauseId: a resume with a payload that names none lists the run's pending pauses; `reqon events RUN --json` has them): only while the run still waits on it, so a late racer never resumes a later pause")
      .option('--crash-at <point>', CRASH_AT_HELP)
      .option('--json', 'print the result as JSON')
      .option('--quiet', 'no progress on stderr');
  },

  async run(args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const env = cliEnv();
    let payload: unknown;
    if (typeof options.payload === 'string') {
      try {
        payload = parseJsonInput(options.payload);
      } catch (e) {
        const refused = e instanceof JsonDepthError || e instanceof UnloggableValueError;
        throw new CliError(refused ? `--payload: ${e.message}` : `--payload is not valid JSON: ${(e as Error).message}`);
      }
    }
    if (typeof options.eventId === 'string' && payload === undefined) throw new CliError('--event-id names the event a --payload is: give --payload too');
    const crash = crashPlanOption(options.crashAt, env, io);
    const missionFiles = typeof options.mission === 'string' ? readMissionFiles(options.mission) : undefined;
    const log = await openCliLog(options.db, { existing: true });
    // Set once this command changed the run (spent its pause, took its lease): a log failing after
    // that interrupts the run; before it, nothing was changed (reportUntouched).
    let carried: string | undefined;
    try {
      const result = await resumeRun(
        args[0] as string,
        {
          ...(missionFiles ? { missionFiles } : {}),
          ...(payload !== undefined ? { payload } : {}),
          ...(typeof options.pause === 'string' ? { expectWaitingOn: `pause:${options.pause.replace(/^pause:/, '')}` } : {}),
          ...(typeof options.eventId === 'string' ? { eventId: options.eventId } : {}),
          by: 'cli',
        },
        { log, env, dataDir: dataDir(), crash, progress: progressTo(io, options.quiet === true), onRunId: (id) => (carried = id) },
      );
      return reportLostLog(log, io) ?? reportRun(result, options.json === true, io);
    } catch (e) {
      const code = reportRunError(e, io) ?? reportInterrupted(e, carried, options.json === true, io) ?? reportUntouched(e, args[0] as string, payload !== undefined, io);
      if (code === undefined) throw e;
      return code;
    } finally {
      await log.close();
    }
  },
};
