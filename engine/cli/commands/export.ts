/**
 * `reqon export RUN_ID [--out FILE]` — one run as a bundle (engine/executor/run-bundle.ts): its
 * mission text, its options without secrets, its events. To stdout (`> run.reqonrun`) or a file.
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import { BundleError, exportRun } from '../../executor/run-bundle.js';
import type { CliIo, CommandModule } from '../command-module.js';
import { openCliLog } from '../engine-context.js';
import { EXIT_OK, EXIT_USAGE, type ExitCode } from '../exit-codes.js';
import { CliError } from '../cli-error.js';

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd.argument('<runId>', 'the run to export').option('--out <file>', 'write the bundle to this file instead of stdout');
  },

  async run(args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const log = await openCliLog(options.db, { existing: true });
    try {
      const text = `${JSON.stringify(await exportRun(log, args[0] as string))}\n`;
      if (typeof options.out === 'string') writeBundle(options.out, text);
      else io.stdout(text);
      return EXIT_OK;
    } catch (e) {
      if (!(e instanceof BundleError)) throw e;
      io.stderr(`reqon: ${e.message}; list runs with \`reqon runs\`\n`);
      return EXIT_USAGE; // the one BundleError of an export: the id names no run
    } finally {
      await log.close();
    }
  },
};

/** `--out FILE`: a path it cannot write is one line (exit 2), not a stack trace. */
function writeBundle(file: string, text: string): void {
  try {
    fs.writeFileSync(file, text);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'no such folder' : code === 'EISDIR' ? 'it is a folder' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'ENOSPC' ? 'the disk is full' : (error as Error).message;
    throw new CliError(`cannot write the bundle to ${file}: ${why}`);
  }
}
