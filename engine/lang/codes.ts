/**
 * The one registry of diagnostic codes. A code is never reused or renumbered once it has shipped;
 * retire it by leaving it here with `retired: true`. Messages have fixed shapes:
 * `Expected X but found Y`; for values `expected an object but got: number (128)`.
 *
 *   E1xxx  lexer          E2xxx  parser          E3xxx  static checks (names, options, values)
 */
import type { Severity } from './diagnostics.js';

interface CodeInfo {
  severity: Severity;
  /** One line saying what the mistake is, for docs and the studio's hover. */
  title: string;
  retired?: boolean;
}

export const CODES = {
  // --- E1xxx: lexer -----------------------------------------------------------------------
  // (lexer codes go here)

  // --- E2xxx: parser ----------------------------------------------------------------------
  // (parser codes go here)

  // --- E3xxx: static checks ---------------------------------------------------------------
  // (checker codes go here)
} satisfies Record<string, CodeInfo>;

export type DiagnosticCode = keyof typeof CODES;
