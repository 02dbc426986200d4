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
