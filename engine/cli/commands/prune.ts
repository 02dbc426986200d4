/**
 * `reqon prune --completed-before DURATION [--dry-run] [--vacuum] [--json]` — deletes whole
 * finished runs (engine/log/prune.ts says what goes and what stays), in short transactions, and
 * says what it did: runs, events, claimed webhook deliveries, bytes, and the database's space.
 * `--dry-run` lists the runs that would go and deletes nothing. Progress goes to stderr.
 */
import type { Command } from 'commander';
import { instantText } from '../../env/instant-text.js';
import { byteText, describeTotals, pruneLog, type PruneSummary, type PruneTotals } from '../../log/prune.js';
import type { PrunableRun } from '../../log/log.js';
import { CliError } from '../cli-error.js';
import type { CliIo, CommandModule } from '../command-module.js';
import { cliEnv, dbLabel, dbPath, openCliLog } from '../engine-context.js';
import { EXIT_INTERRUPTED, EXIT_OK, type ExitCode } from '../exit-codes.js';
import { describeHorizon, horizonInstant, parseHorizon } from '../prune-horizon.js';

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd
      .requiredOption('--completed-before <duration>', 'prune runs that completed or failed longer ago than this (30d, 12h, P30D) or before an instant (2026-01-31T00:00:00Z)')
      .option('--dry-run', 'list the runs that would be pruned; delete nothing')
      .option('--vacuum', 'then give the freed space back to the file system (SQLite: rewrites the file holding the write lock; PostgreSQL: VACUUM)')
      .option('--batch <runs>', 'runs per transaction', '200')
      .option('--json', 'print the summary as JSON (a dry run: the runs as NDJSON, then the summary)')
      .option('--quiet', 'no progress on stderr');
  },

  async run(_args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const horizon = parseHorizon(options.completedBefore, '--completed-before');
    const batchRuns = Number(options.batch);
    if (!Number.isInteger(batchRuns) || batchRuns <= 0) throw new CliError(`--batch expects a positive whole number, got "${String(options.batch)}"`);
    const env = cliEnv();
    const finishedBefore = horizonInstant(horizon, env.clock.now());
    const dryRun = options.dryRun === true;
    const json = options.json === true;
    const quiet = options.quiet === true;
    const log = await openCliLog(options.db, { existing: true });
    const stop = { requested: false };
    const onSignal = () => {
      stop.requested = true;
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      if (!quiet) io.stderr(`${dryRun ? 'dry run: ' : ''}pruning runs of ${dbLabel(dbPath(options.db))} that finished ${describeHorizon(horizon)}${horizon.kind === 'age' ? ` (before ${instantText(finishedBefore)})` : ''}\n`);
      // The first line a second in: a prune done sooner has only its summary (a line at once
      // showed a batch's runs gone before their events, "0 events deleted").
      let lastProgress = env.clock.now();
      const summary = await pruneLog(log, {
        finishedBefore,
        now: () => env.clock.now(),
        dryRun,
        batchRuns,
        ...(options.vacuum === true ? { vacuum: true } : {}),
        ...(dryRun ? { onRun: (run: PrunableRun) => io.stdout(json ? `${JSON.stringify(run)}\n` : `${runLine(run)}\n`) } : {}),
        ...(quiet || dryRun
          ? {}
          : {
              progress: (totals: PruneTotals) => {
                // One line a second at most: a prune of a large log takes many transactions.
                const at = env.clock.now();
                if (at - lastProgress < 1000) return;
                lastProgress = at;
                io.stderr(`… ${describeTotals(totals)}\n`);
              },
            }),
        shouldStop: () => stop.requested,
      });
      io.stdout(json ? `${JSON.stringify(summary)}\n` : `${summaryText(summary)}\n`);
      // Stopped by a signal, it did not do what it was asked: not 0 (probe 112 K11), but the code of
      // a command interrupted that can be carried on.
      return summary.stopped ? EXIT_INTERRUPTED : EXIT_OK;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await log.close();
    }
  },
};

function runLine(run: PrunableRun): string {
  return `${run.runId}  ${run.status.padEnd(9)}  finished ${instantText(run.updatedAt)}  ${run.lastSeq} events  ${run.mission}`;
}

/** The summary line(s): what went, what was kept and why, and the space. */
export function summaryText(s: PruneSummary): string {
  const kept: string[] = [];
  if (s.keptForCheckpoint > 0) kept.push(`${s.keptForCheckpoint} kept: they hold their mission's latest sync checkpoint`);
  if (s.changedMeanwhile > 0) kept.push(`${s.changedMeanwhile} kept: taken, written or resumed since they were listed`);
  const keptText = kept.length > 0 ? `; ${kept.join('; ')}` : '';
  const left = s.queued !== undefined && s.queued.events > 0 ? `; an earlier prune, stopped before its end, left ${s.queued.events} events of ${s.queued.runs} pruned runs to delete, which the next prune deletes first` : '';
  if (s.dryRun) return `${s.stopped ? 'stopped: ' : ''}dry run: would prune ${s.runs} runs (${s.events} events)${s.stopped ? ' so far' : ''}${keptText}${left}; nothing was deleted`;
  const head = `${s.stopped ? 'stopped: ' : ''}pruned ${s.runs} runs: ${s.events} events, ${s.deliveries} webhook deliveries, ${byteText(s.bytes)} of log data${keptText}`;
  if (s.stopped) return `${head}\nthe rest stays as it was; run reqon prune again to carry on`;
  const space = s.space!;
  const free = space.freeBytes === null ? '' : `, ${byteText(space.freeBytes)} of it free`;
  const shrunk = space.shrunkBytes > 0 ? `; gave ${byteText(space.shrunkBytes)} back to the file system` : '';
  return `${head}\nspace: the log takes ${byteText(space.storedBytes)}${free}${shrunk}; ${space.note}`;
}
