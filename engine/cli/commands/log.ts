/**
 * `reqon log copy --from LOG --to LOG [--append]` — copies a whole log (runs with their events
 * and seqs, the webhook inbox, schedules and their firings, sql/nosql store tables) from one
 * database to another, e.g. an embedded SQLite file to the PostgreSQL log many workers share,
 * and verifies the copy (log-copy.ts). Leases are dropped: stop the source's workers first.
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import { copyLog, LogCopyError } from '../log-copy.js';
import { CliError } from '../cli-error.js';
import { isPostgresUrl } from '../../log/open-log.js';
import { isLogFailure, logUnreachable } from '../../log/errors.js';
import { RunPrunedWhileReadError } from '../../log/event-pages.js';
import type { CliIo, CommandModule } from '../command-module.js';
import { cliEnv, openCliLog } from '../engine-context.js';
import { EXIT_FAILED, EXIT_OK, type ExitCode } from '../exit-codes.js';

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd
      .argument('<action>', 'what to do with the log: copy')
      .option('--from <log>', 'the log to copy: a SQLite file or postgres://USER@HOST:PORT/DB')
      .option('--to <log>', 'the log to copy into: a SQLite file or postgres://USER@HOST:PORT/DB')
      .option('--append', 'copy into a target that already holds runs (a run id already there, or a table key it holds with another record, is an error)');
  },

  async run(args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    if (args[0] !== 'copy') throw new CliError(`reqon log: unknown action "${String(args[0])}"; expected: copy`);
    const fromName = options.from;
    const toName = options.to;
    if (typeof fromName !== 'string' || fromName === '') throw new CliError('reqon log copy needs --from LOG (a SQLite file or a postgres:// URL)');
    if (typeof toName !== 'string' || toName === '') throw new CliError('reqon log copy needs --to LOG (a SQLite file or a postgres:// URL)');
    if (fromName === toName) throw new CliError('reqon log copy: --from and --to name the same log');
    // Opening a SQLite file that is not there creates an empty log: a typo would be "copied".
    if (!isPostgresUrl(fromName) && !fs.existsSync(fromName)) throw new CliError(`log copy --from ${fromName}: no such log file`);
    const from = await openCliLog(fromName);
    try {
      const to = await openCliLog(toName);
      try {
        const report = await copyLog(from, to, {
          append: options.append === true,
          now: cliEnv().clock.now(),
          progress: (line) => io.stderr(`${line}\n`),
        });
        const rows = report.tables.reduce((n, t) => n + t.rows, 0);
        io.stdout(
          `✓ copied and verified: ${report.runs} runs, ${report.events} events (every seq compared), ${report.deliveries} webhook deliveries, ` +
            `${report.schedules} schedules, ${report.firings} firings, ${report.tables.length} store tables (${rows} rows)\n`,
        );
        return EXIT_OK;
      } catch (error) {
        if (isLogFailure(error) || error instanceof RunPrunedWhileReadError) {
          // Not a run this command carried (the generic advice, `reqon resume`, fits no copy): the
          // target may hold a part of the copy that nothing carries on (probe 113 K2) — or, with
          // --append, that beside its own runs, which no advice may tell to delete (helper 110).
          const what =
            error instanceof RunPrunedWhileReadError
              ? `a run of the source was pruned as it was copied (${error.message})`
              : `${logUnreachable(error) ? 'lost a log database' : 'a log database failed'} mid-copy (${error instanceof Error ? error.message : String(error)})`;
          const target =
            options.append === true
              ? 'the target may hold a part of the copy beside its own runs (a run copied in part stays owned by reqon-log-copy): look at it with `reqon runs` before copying again'
              : 'the target may hold a part of the copy, which no worker or resume carries on — once the database is back, copy again into an empty target (delete that database, or its file)';
          io.stderr(`reqon log copy: ${what}: the source is as it was; ${target}\n`);
          return EXIT_FAILED;
        }
        if (!(error instanceof LogCopyError)) throw error;
        io.stderr(`reqon log copy: ${error.message}\n`);
        return EXIT_FAILED;
      } finally {
        await to.close();
      }
    } finally {
      await from.close();
    }
  },
};
