/**
 * How a failed request surfaces in the renderer: an Error that is also a ProtocolError
 * (`code`, `message`, `retryable`), whatever went wrong — a refusal from the engine, an HTTP
 * failure, a dropped connection. Views show `code: message`; `retryable` says whether a retry
 * button makes sense.
 */
import type { ProtocolError } from './protocol.js';

export class ProtocolFailure extends Error implements ProtocolError {
  readonly code: string;
  readonly retryable: boolean;

  constructor(error: ProtocolError) {
    super(error.message);
    this.name = 'ProtocolFailure';
    this.code = error.code;
    this.retryable = error.retryable;
  }
}

function isProtocolError(value: unknown): value is ProtocolError {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.code === 'string' && typeof v.message === 'string';
}

/** Normalises anything thrown or returned as an error into a ProtocolFailure. */
export function toProtocolFailure(value: unknown, fallbackCode = 'E_BRIDGE'): ProtocolFailure {
  if (value instanceof ProtocolFailure) return value;
  if (isProtocolError(value)) {
    return new ProtocolFailure({ code: value.code, message: value.message, retryable: value.retryable === true });
  }
  if (typeof value === 'object' && value !== null && isProtocolError((value as { error?: unknown }).error)) {
    return toProtocolFailure((value as { error: unknown }).error, fallbackCode);
  }
  if (value instanceof Error) return new ProtocolFailure({ code: fallbackCode, message: value.message, retryable: true });
  return new ProtocolFailure({ code: fallbackCode, message: String(value), retryable: false });
}

export function describeFailure(error: unknown): string {
  const f = toProtocolFailure(error);
  return `${f.code}: ${f.message}`;
}

/** `FILE:LINE:COL: error[E1005]: …`, as the engine's one diagnostics formatter prints it. */
const DIAGNOSTIC = /(?<=^|\s)[^\s:][^\s]*?:\d+:\d+: (?:error|warning)\[[A-Z]\d+\]: /m;

/**
 * What to show for a failed request: a mission's diagnostics alone (file, line, column, message,
 * the source line and its caret) when the failure carries them — whatever wraps them
 * ("spawn-failed: reqon run … exited with code 2 before naming its run: …", "internal: studio:
 * …") — else the failure's code and message.
 */
export function failureText(error: unknown): string {
  const f = toProtocolFailure(error);
  const found = DIAGNOSTIC.exec(f.message);
  return found ? f.message.slice(found.index).trimEnd() : `${f.code}: ${f.message}`;
}
