/**
 * The one error type the studio service throws, and its wire form.
 *
 * Every failure crosses to the renderer as a plain `ProtocolError {code, message, retryable}`:
 * `toProtocolError` is the only place that decides how an unexpected exception looks outside, so
 * a stack trace never leaks and the renderer can branch on `code`.
 */
import { logUnavailable } from '../log/errors.js';
import type { ProtocolError } from '../protocol/protocol.js';

export type StudioErrorCode =
  /** The request is malformed: unknown channel, missing or mistyped field. */
  | 'bad-request'
  /** No run, lab or file with that id. */
  | 'not-found'
  /** The feature needs a module that is not part of this build yet, or a closed service. */
  | 'unavailable'
  /** The CLI process could not be started or exited before naming its run. */
  | 'spawn-failed'
  /** The run is not in a state that allows the request (e.g. killing a run with no process). */
  | 'conflict'
  | 'internal';

export class StudioError extends Error {
  constructor(
    readonly code: StudioErrorCode,
    message: string,
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'StudioError';
  }
}

export function toProtocolError(e: unknown): ProtocolError {
  if (e instanceof StudioError) return { code: e.code, message: e.message, retryable: e.retryable };
  const message = e instanceof Error ? e.message : String(e);
  // A log database that cannot be reached (PostgreSQL restarting, stopped): asking again works once it is back.
  if (logUnavailable(e)) return { code: 'unavailable', message: `studio: ${message}`, retryable: true };
  return { code: 'internal', message: `studio: ${message}`, retryable: false };
}

/** HTTP status for a protocol error code (the browser transport). */
export function httpStatusOf(code: string): number {
  switch (code) {
    case 'bad-request':
      return 400;
    case 'not-found':
      return 404;
    case 'conflict':
      return 409;
    case 'unavailable':
      return 503;
    case 'spawn-failed':
    case 'internal':
      return 500;
    default:
      return 500;
  }
}
