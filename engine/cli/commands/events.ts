/** `reqon events RUN_ID [--json]` — a run's log; NDJSON (one event per line) with `--json`. */
import type { Command } from 'commander';
import type { CliIo, CommandModule } from '../command-module.js';
import { openCliLog } from '../engine-context.js';
import { EXIT_OK, EXIT_USAGE, type ExitCode } from '../exit-codes.js';
import { CliError } from '../cli-error.js';
import { instantText } from '../../env/instant-text.js';
import { eventPages } from '../../log/event-pages.js';

/** Pages grow from FIRST_PAGE to PAGE: `| head` wants the first lines soon, a full dump wants few reads. */
const FIRST_PAGE = 100;
const PAGE = 5000;

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd.argument('<runId>').option('--json', 'print NDJSON, one event per line').option('--from <seq>', 'start at this seq', '1');
  },

  async run(args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const runId = args[0] as string;
    const fromSeq = Number(options.from);
    if (!/^\s*\d+\s*$/.test(String(options.from)) || !Number.isSafeInteger(fromSeq) || fromSeq < 1) {
      throw new CliError(`--from expects a seq (a whole number ≥ 1), got "${String(options.from)}"`);
    }
    const log = await openCliLog(options.db, { existing: true });
    try {
      const run = await log.getRun(runId);
      if (!run) {
        io.stderr(`reqon: no run ${runId} in this log; list runs with \`reqon runs\`\n`);
        return EXIT_USAGE;
      }
      // Paged (by count and by bytes) so that a long run streams instead of sitting in memory.
      for await (const events of eventPages(log, runId, { fromSeq, first: FIRST_PAGE, size: PAGE, lastSeq: run.lastSeq })) {
        for (const e of events) {
          if (options.json === true) io.stdout(`${JSON.stringify(e)}\n`);
          else io.stdout(`${String(e.seq).padStart(6)}  ${instantText(e.recordedAt)}  ${e.type.padEnd(18)} ${e.stepPath || '-'}  ${summarize(e.payload)}\n`);
        }
        // A turn of the event loop between pages: a reader that went away (`| head`) is an EPIPE
        // the program ends on, before the rest of the log is read into a closed pipe (SQLite's
        // reads resolve at once, so without it no error event is handled until the last page).
        await new Promise((resolve) => setImmediate(resolve));
      }
      return EXIT_OK;
    } finally {
      await log.close();
    }
  },
};

function summarize(payload: unknown): string {
  const text = JSON.stringify(payload) ?? '';
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
