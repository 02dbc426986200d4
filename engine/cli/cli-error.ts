/**
 * Errors the CLI expects and reports as one clear line (no stack trace): bad usage that commander
 * cannot see (a malformed `--env K=V`, two flags that exclude each other). Anything else that
 * reaches the top level is a bug and is printed with its stack.
 */
import { EXIT_USAGE, type ExitCode } from './exit-codes.js';

export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT_USAGE,
  ) {
    super(message);
  }
}
