/** `reqon runs [--json]` — the runs in the log, newest first. */
import type { Command } from 'commander';
import type { CliIo, CommandModule } from '../command-module.js';
import { cliLogExists, dbPath, openCliLog } from '../engine-context.js';
import { EXIT_OK, type ExitCode } from '../exit-codes.js';
import { instantText } from '../../env/instant-text.js';
import { runFold } from '../../inspect/fold-handler.js';
import { RunSummaryHandler, statusLabel } from '../../inspect/run-summary.js';
import { isImported, shownOptions, shownStatus } from '../../executor/run-bundle.js';
import type { RunQuery, RunRecord, RunStatus } from '../../log/log.js';
import { CliError } from '../cli-error.js';

const STATUSES: readonly RunStatus[] = ['running', 'suspended', 'completed', 'failed'];

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd.option('--status <status>', 'only runs with this status (running, suspended, completed, failed)').option('--json', 'print JSON').option('--limit <n>', 'at most N runs', '100');
  },

  async run(_args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const status = options.status;
    if (status !== undefined && !(STATUSES as readonly unknown[]).includes(status)) {
      throw new CliError(`--status expects one of ${STATUSES.join(', ')}; got "${String(status)}"`);
    }
    const limit = Number(options.limit);
    if (!Number.isSafeInteger(limit) || limit <= 0) throw new CliError(`--limit expects a positive whole number, got "${String(options.limit)}"`);
    // No log there yet: said, and none made (a typo in --db would leave one behind).
    const where = dbPath(options.db);
    if (!cliLogExists(where)) {
      if (options.json === true) io.stdout('[]\n');
      else io.stdout(`no log at ${where} yet: the first \`reqon run MISSION.vague\` makes it (or check --db)\n`);
      return EXIT_OK;
    }
    const log = await openCliLog(options.db);
    try {
      // Each with the status it is shown with (an unfinished imported run's is its log's: shownStatus),
      // filtered by that: `--status suspended` takes in an imported run that suspended, whose
      // record says 'running', and `--status running` leaves it out — a page at a time, newest
      // first, until `limit` are kept (helper 106: the limit was applied before the filter).
      const runs: (RunRecord & { status: RunStatus })[] = [];
      const rows: RunQuery['status'] = status === 'suspended' ? ['suspended', 'running'] : (status as RunStatus | undefined);
      for (let after: { createdAt: number; runId: string } | undefined; runs.length < limit; ) {
        const page = await log.listRuns({ ...(rows !== undefined ? { status: rows } : {}), limit: Math.max(limit, 100), ...(after ? { after } : {}) });
        for (const r of page) {
          const shown = { ...r, status: await shownStatus(log, r) };
          if ((status === undefined || shown.status === status) && runs.length < limit) runs.push(shown);
        }
        const last = page.at(-1);
        if (last === undefined || page.length < Math.max(limit, 100)) break;
        after = { createdAt: last.createdAt, runId: last.runId };
      }
      // A completed run may have gone on after failures (a loop's `onError continue`): only its
      // `step.failed` events say so, so those are folded (all the failure count reads: not the
      // rest of a long run's log); the others' status is the record's.
      const failures = new Map<string, number>();
      for (const r of runs) {
        if (r.status === 'completed') failures.set(r.runId, runFold(new RunSummaryHandler(r.runId), await log.read(r.runId, { types: ['step.failed'] })).failures);
      }
      if (options.json === true) {
        // An imported run says so: an unfinished one's 'running' keeps workers off it, nothing runs it.
        io.stdout(`${JSON.stringify(runs.map(({ missionFiles: _files, ...rest }) => ({ ...rest, options: shownOptions(rest.options), ...(failures.has(rest.runId) ? { failures: failures.get(rest.runId) } : {}), ...(isImported(rest) ? { imported: true } : {}) })))}\n`);
        return EXIT_OK;
      }
      if (runs.length === 0) io.stdout(status !== undefined ? `no ${String(status)} runs (\`reqon runs\` lists every run)\n` : 'no runs yet: start one with `reqon run MISSION.vague`\n');
      for (const r of runs) {
        const waiting = r.status === 'suspended' && r.waitingOn ? ` (${r.waitingOn}${r.wakeAt ? ` until ${instantText(r.wakeAt)}` : ''})` : '';
        // An unfinished imported run is read-only: nothing carries it on.
        const status = isImported(r) && (r.status === 'running' || r.status === 'suspended') ? 'imported' : statusLabel({ status: r.status, failures: failures.get(r.runId) ?? 0 });
        io.stdout(`${r.runId}  ${status.padEnd(9)}  ${instantText(r.createdAt)}  ${r.mission}  ${r.lastSeq} events${waiting}\n`);
      }
      return EXIT_OK;
    } finally {
      await log.close();
    }
  },
};
