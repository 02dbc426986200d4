/**
 * The one registry of run-time evaluation error codes, and the error class that carries them.
 *
 * Invariant: a code is never reused or renumbered once it has shipped (retire it with
 * `retired: true`). Messages have fixed shapes: "expected an array but got: number (128)",
 * "Cannot perform '-' on null", "Division by zero". Every error the evaluator raises on purpose
 * is an `EvaluatorError`; anything else escaping `evaluate` is a bug (a property test guards it).
 *
 *   R4xxx  expression evaluation, built-ins, schema matching, transforms, path templates
 */
import type { Span } from '../lang/ast.js';

interface EvalCodeInfo {
  /** One line saying what went wrong, for docs and the studio's hover. */
  title: string;
  retired?: boolean;
}

export const EVAL_CODES = {
  R4001: { title: 'A value has the wrong type for this operation or built-in' },
  R4002: { title: 'Arithmetic on null or a missing value' },
  R4003: { title: 'Division (or remainder) by zero' },
  R4004: { title: 'A construct that is parsed but not supported yet' },
  R4005: { title: 'Call of an unknown function' },
  R4006: { title: 'A built-in called with the wrong number of arguments' },
  R4007: { title: 'Unknown type name after `is`' },
  R4008: { title: 'Ordering comparison between values of different types' },
  R4009: { title: 'No transform variant matches the value' },
  R4010: { title: 'A path placeholder did not resolve to a value' },
  R4011: { title: '`env()` needs a string-literal variable name' },
  R4012: { title: 'An aggregate (max, min, avg) of an empty list' },
  R4013: { title: '`range()` would produce too many items' },
  R4014: { title: 'An argument has the right type but an invalid value' },
  R4015: { title: 'A computed number beyond what a 64-bit float holds (overflow, or not a number)' },
} satisfies Record<string, EvalCodeInfo>;

export type EvalErrorCode = keyof typeof EVAL_CODES;

/** A run-time failure of an expression, pointing at the expression that caused it. */
export class EvaluatorError extends Error {
  override readonly name = 'EvaluatorError';
  /** A copy: callers may pass the expression node itself as its span (nodes carry start/end). */
  readonly span: Span;

  constructor(
    readonly code: EvalErrorCode,
    message: string,
    span: Span,
  ) {
    super(message);
    this.span = { start: span.start, end: span.end };
  }
}

/**
 * An evaluator error raised in a declaration a step uses (a transform's field, a source's header):
 * the step's place is what the run reports, so the message says where in the declaration it
 * failed — "Cannot perform '*' on null" at an `apply` named neither the transform nor its field.
 */
export function withinDeclaration(error: unknown, where: string): unknown {
  if (!(error instanceof EvaluatorError)) return error;
  return new EvaluatorError(error.code, `${error.message} (in ${where})`, error.span);
}

/** A span for errors raised outside any expression (e.g. a path template given as plain text). */
export const NO_SPAN: Span = { start: 0, end: 0 };
