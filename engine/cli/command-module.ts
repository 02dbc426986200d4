/**
 * The shape of one CLI command. Each command lives in its own file under `commands/` and is
 * listed once in `program.ts`'s COMMANDS; `program.ts` imports only the invoked command's module, so
 * `reqon check` never loads what `reqon run` needs (SQLite, HTTP).
 */
import type { Command } from 'commander';
import type { ExitCode } from './exit-codes.js';

/** Where a command writes; tests and the studio can capture it. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export interface CommandModule {
  /** Adds the command's arguments and options (not `--db`, which main adds to every command). */
  configure(cmd: Command): void;
  /** Runs with commander's parsed arguments (in declaration order) and options. */
  run(args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode>;
}
