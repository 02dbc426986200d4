/**
 * The public entry points of the Reqon front end: text → typed AST (ast.ts) plus diagnostics.
 *
 * Invariant: these functions never throw and always terminate, whatever the input; mistakes are
 * E1xxx (lexer) and E2xxx (parser) diagnostics with spans, at most one error per offset. The
 * grammar itself lives in parser-decls.ts, parser-resources.ts, parser-steps.ts,
 * parser-options.ts and parser-expr.ts; recovery in parser-core.ts.
 */
import type { Expr, Program } from './ast.js';
import { DiagnosticBag, type Diagnostic } from './diagnostics.js';
import { lexTokens } from './lexer.js';
import { ABORT, Parser } from './parser-core.js';
import { parseTopLevel } from './parser-decls.js';
import { parseExpr } from './parser-expr.js';

export interface ParseResult {
  program: Program;
  diagnostics: Diagnostic[];
}

/** Parses a mission file (or a folder mission's action file); `ActionDecl.file` is set to `file`. */
export function parseProgram(text: string, file: string): ParseResult {
  const bag = new DiagnosticBag(file);
  const parser = new Parser(lexTokens(text, bag), bag, file);
  const items = parseTopLevel(parser);
  return {
    program: { kind: 'Program', file, items, start: 0, end: text.length },
    diagnostics: sortByOffset(bag.items),
  };
}

/** Parses one expression that must fill the whole text (REPLs, the studio's watch expressions, tests). */
export function parseExpression(text: string, file = '<expression>'): { expr: Expr; diagnostics: Diagnostic[] } {
  const bag = new DiagnosticBag(file);
  const parser = new Parser(lexTokens(text, bag), bag, file);
  let expr: Expr;
  try {
    expr = parseExpr(parser);
    const t = parser.pos;
    if (parser.kindAt(t) !== 'EOF') {
      bag.error('E2001', parser.spanAt(t), `Expected end of expression but found ${parser.describe(t)}`);
    }
  } catch (e) {
    if (e !== ABORT) throw e;
    // The diagnostic is already recorded; stand in a null literal so callers always get a node.
    expr = { kind: 'Null', start: 0, end: text.length };
  }
  return { expr, diagnostics: sortByOffset(bag.items) };
}

/** Lexer and parser diagnostics interleave by position, as a reader scans the file. */
function sortByOffset(items: Diagnostic[]): Diagnostic[] {
  return items.slice().sort((a, b) => a.span.start - b.span.start);
}
