/**
 * `reqon fork RUN_ID --at SEQ [--mission FILE] [--crash-at POINT] [--json]` — start a new run whose
 * log is RUN_ID's up to SEQ, replayed, then carried on live (engine/executor/fork-run.ts). Its first
 * line is `run <NEW_ID>`, as for `reqon run`; RUN_ID itself is only read. With `--mission` the fork
 * carries on with the edited mission: a compatible edit replays the prefix and goes on, a divergent
 * one is refused with the non-determinism error before the fork exists (its advice: fork without
 * --mission, or at a seq before the one where they part).
 */
import type { Command } from 'commander';
import { forkRun, ForkPointError } from '../../executor/fork-run.js';
import { CliError } from '../cli-error.js';
import type { CliIo, CommandModule } from '../command-module.js';
import { cliEnv, CRASH_AT_HELP, crashPlanOption, dataDir, openCliLog, readMissionFiles, reportLostLog, reportRefusedLog } from '../engine-context.js';
import type { ExitCode } from '../exit-codes.js';
import { progressTo, reportRun, reportInterrupted, reportRunError } from '../run-output.js';

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd
      .argument('<runId>', 'the run to fork (only read)')
      .requiredOption('--at <seq>', "the last of the run's events the fork copies (see `reqon events RUN_ID`)")
      .option('--mission <file>', "carry on with this (edited) mission instead of the run's")
      .option('--crash-at <point>', CRASH_AT_HELP)
      .option('--json', 'print the result as one JSON object, on the line after `run RUN_ID`')
      .option('--quiet', 'no progress on stderr');
  },

  async run(args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const atSeq = Number(options.at);
    if (typeof options.at !== 'string' || !/^\d+$/.test(options.at) || !Number.isSafeInteger(atSeq) || atSeq < 1) {
      throw new CliError(`--at must be a seq (an integer >= 1), got "${String(options.at)}"`);
    }
    const env = cliEnv();
    const crash = crashPlanOption(options.crashAt, env, io);
    const missionFiles = typeof options.mission === 'string' ? readMissionFiles(options.mission) : undefined;
    const log = await openCliLog(options.db, { existing: true });
    let runId: string | undefined;
    try {
      const result = await forkRun(
        args[0] as string,
        { atSeq, ...(missionFiles ? { missionFiles } : {}) },
        { log, env, dataDir: dataDir(), crash, progress: progressTo(io, options.quiet === true), onRunId: (id) => io.stdout(`run ${(runId = id)}\n`) },
      );
      if (options.json !== true) io.stderr(`forked from ${result.parentRunId} at seq ${result.forkedAtSeq}\n`);
      return reportLostLog(log, io) ?? reportRun(result, options.json === true, io);
    } catch (e) {
      if (e instanceof ForkPointError) throw new CliError(e.message);
      const code = reportRunError(e, io) ?? reportInterrupted(e, runId, options.json === true, io) ?? (runId === undefined ? reportRefusedLog(options.db, e, io) : undefined);
      if (code === undefined) throw e;
      return code;
    } finally {
      await log.close();
    }
  },
};
