/**
 * `reqon import FILE [--json]` — a run bundle (`reqon export`) into this log, read-only: the run
 * keeps its id, every view and `reqon verify` work on it, and no worker or resume ever continues
 * it (engine/executor/run-bundle.ts). A corrupt or hostile bundle is refused before anything is
 * written, naming the first problem and where it is (exit 2).
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import { BundleError, importBundle, importedOpenState, MAX_BUNDLE_BYTES } from '../../executor/run-bundle.js';
import { parseReadableBundle } from '../../server/run-sharing.js';
import { CliError } from '../cli-error.js';
import type { CliIo, CommandModule } from '../command-module.js';
import { openCliLog } from '../engine-context.js';
import { EXIT_OK, type ExitCode } from '../exit-codes.js';

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd.argument('<file>', 'a .reqonrun bundle').option('--json', 'print the imported run as JSON');
  },

  async run(args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const file = args[0] as string;
    let text: string;
    try {
      if (fs.statSync(file).size > MAX_BUNDLE_BYTES) throw new CliError(`${file}: larger than ${MAX_BUNDLE_BYTES} bytes; not a run bundle`);
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      if (e instanceof CliError) throw e;
      throw new CliError(`cannot read ${file}: ${(e as Error).message}`);
    }
    let bundle;
    try {
      bundle = parseReadableBundle(text);
    } catch (e) {
      if (e instanceof BundleError) throw new CliError(`${file}: ${e.message}`);
      throw e;
    }
    const log = await openCliLog(options.db);
    try {
      const run = await importBundle(log, bundle);
      // An unfinished run's record says 'running' only to keep workers off it: say what it is.
      const state = run.status === 'running' ? importedOpenState(bundle.events.at(-1)?.type) : run.status;
      if (options.json === true) io.stdout(`${JSON.stringify({ runId: run.runId, status: run.status, state, events: run.lastSeq, imported: true })}\n`);
      else io.stdout(`run ${run.runId}\nimported ${run.lastSeq} events (${state}), read-only\n`);
      return EXIT_OK;
    } catch (e) {
      if (e instanceof BundleError) throw new CliError(`${file}: ${e.message}`);
      throw e;
    } finally {
      await log.close();
    }
  },
};
