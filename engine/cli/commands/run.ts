/**
 * `reqon run FILE [--source NAME=URL]… [--auth FILE.json] [--env K=V]… [--crash-at POINT] [--json]`
 * — start a new run. The first line of stdout is `run <ID>`, printed before the first step.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { startRun } from '../../executor/run-mission.js';
import type { CliIo, CommandModule } from '../command-module.js';
import { checkAuthFile, checkSourceOverrides, cliEnv, collectEnv, collectSources, CRASH_AT_HELP, crashPlanOption, dataDir, openCliLog, readMissionFiles, reportLostLog, reportRefusedLog } from '../engine-context.js';
import type { ExitCode } from '../exit-codes.js';
import { progressTo, reportInterrupted, reportRun, reportRunError } from '../run-output.js';

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd
      .argument('<mission>', 'mission file (.vague, .reqon) or mission folder')
      .option('--source <NAME=URL>', "override a source's base URL (repeatable)", collectSources, {})
      .option('--auth <file>', 'credentials file (JSON, with $VAR interpolation)')
      .option('--env <K=V>', 'an environment value for env("K") (repeatable)', collectEnv, {})
      .option('--crash-at <point>', CRASH_AT_HELP)
      .option('--json', 'print the result as one JSON object, on the line after `run RUN_ID`')
      .option('--quiet', 'no progress on stderr');
  },

  async run(args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const env = cliEnv();
    const files = readMissionFiles(args[0] as string);
    const crash = crashPlanOption(options.crashAt, env, io);
    if (typeof options.auth === 'string') checkAuthFile(resolve(options.auth), env, io, [files]);
    const log = await openCliLog(options.db);
    let runId: string | undefined;
    try {
      checkSourceOverrides([files], options.source as Record<string, string>);
      const result = await startRun(
        files,
        {
          sources: options.source as Record<string, string>,
          env: options.env as Record<string, string>,
          ...(typeof options.auth === 'string' ? { authFile: resolve(options.auth) } : {}),
          ...(typeof options.crashAt === 'string' ? { crashAt: options.crashAt } : {}),
        },
        {
          log,
          env,
          dataDir: dataDir(),
          crash,
          progress: progressTo(io, options.quiet === true),
          onRunId: (id) => {
            runId = id;
            io.stdout(`run ${id}\n`);
          },
        },
      );
      return reportLostLog(log, io) ?? reportRun(result, options.json === true, io);
    } catch (e) {
      const code = reportRunError(e, io) ?? reportInterrupted(e, runId, options.json === true, io) ?? (runId === undefined ? reportRefusedLog(options.db, e, io) : undefined);
      if (code === undefined) throw e;
      return code;
    } finally {
      await log.close();
    }
  },
};
