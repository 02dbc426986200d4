/**
 * `reqon verify RUN_ID [--mission FILE] [--json]` — replay the run against its log without any
 * effect and report the first divergence of step paths or effect ids. Exit 0 when none and
 * everything was compared, 1 on a divergence, 3 when none was found but something could not be
 * compared (the report says what) or the run has not finished (what it has yet to do was not):
 * only a full check of a finished run is a ✓, for a script as for a reader.
 */
import type { Command } from 'commander';
import { isImported } from '../../executor/run-bundle.js';
import { verifyRun } from '../../executor/verify.js';
import { everyEntryRederived, fullyVerified, unfinished } from '../../executor/verify-report.js';
import type { CliIo, CommandModule } from '../command-module.js';
import { cliEnv, openCliLog, readMissionFiles } from '../engine-context.js';
import { EXIT_FAILED, EXIT_NOT_FULLY_VERIFIED, EXIT_OK, type ExitCode } from '../exit-codes.js';
import { reportRunError } from '../run-output.js';

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd.argument('<runId>').option('--mission <file>', 'replay against this (edited) mission').option('--json', 'print the report as JSON');
  },

  async run(args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const runId = args[0] as string;
    const missionFiles = typeof options.mission === 'string' ? readMissionFiles(options.mission) : undefined;
    const log = await openCliLog(options.db, { existing: true });
    try {
      const report = await verifyRun(log, runId, { env: cliEnv(), ...(missionFiles ? { missionFiles } : {}) });
      const finished = !unfinished(report);
      const record = finished ? undefined : await log.getRun(runId);
      const rest = finished
        ? undefined
        : record && isImported(record)
          ? `what the run had yet to do — it was imported from a bundle before its end (read-only: nothing carries it on)`
          : `what the run has yet to do — it is ${report.runStatus} and has not finished${report.runStatus === 'running' ? ' (a resume, or a worker once its lease expires, carries it on)' : ''}; verify it again once it has`;
      if (options.json === true) {
        // `ok` and `verified` are what exit 0 says — no divergence, checked whole, of a finished
        // run — so a script reading `ok` never takes a partial check for a ✓; `diverged` is the
        // divergence alone, and `unchecked` lists everything not compared, the run's rest included.
        const verified = fullyVerified(report);
        const unchecked = rest === undefined ? report.unchecked : [...report.unchecked, rest];
        io.stdout(`${JSON.stringify({ ...report, ok: verified, diverged: !report.ok, verified, unchecked })}\n`);
      } else if (report.ok) {
        // "verified" only for a report checked whole (fullyVerified, as the studio's ✓ and the
        // crash lab's): events the replay never reached, or that the log's format does not let it
        // compare, were compared with nothing, and an unfinished run's rest was never compared.
        io.stdout(
          fullyVerified(report)
            ? `verified: replaying run ${runId} matches its log (${report.replayed.length} of ${report.original.length} events re-derived, no divergence)\n`
            : everyEntryRederived(report) && report.original.length > 0
              ? `no divergence so far: replaying run ${runId} matches its log so far (${report.replayed.length} of ${report.original.length} events re-derived, no divergence)\n`
              : `not fully verified: replaying run ${runId} re-derived ${report.replayed.length} of its ${report.original.length} events, with no divergence among them\n`,
        );
        // A run that has not finished is verified only as far as its log goes: say so with the verdict.
        if (rest !== undefined) io.stdout(`  not checked: ${rest}\n`);
        // What the log did not let the replay compare is said with the verdict, never left to --json.
        for (const gap of report.unchecked) io.stdout(`  not checked: ${gap}\n`);
      } else {
        const d = report.divergence!;
        if (d.cause === 'damaged-log') io.stdout(`DAMAGED LOG at seq ${d.seq}: ${d.recorded}\n  ${d.explanation}\n`);
        else io.stdout(`DIVERGED at step ${d.stepPath || '(run)'} (seq ${d.seq}, entry ${d.index}):\n  recorded: ${d.recorded}\n  replay asked for: ${d.asked}\n  ${d.explanation}\n`);
      }
      // A run that has not finished was checked as far as its log goes: no divergence, but not
      // everything the run will do was compared — 3, as for any check that is not whole.
      return !report.ok ? EXIT_FAILED : fullyVerified(report) ? EXIT_OK : EXIT_NOT_FULLY_VERIFIED;
    } catch (e) {
      const code = reportRunError(e, io);
      if (code === undefined) throw e;
      return code;
    } finally {
      await log.close();
    }
  },
};
