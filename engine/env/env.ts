/**
 * The engine's only doors to the outside world: the clock, randomness, identifiers and HTTP.
 *
 * No engine module calls `Date.now()`, `Math.random()`, `crypto.randomUUID()`, `setTimeout` for
 * durable waits, or `fetch` directly (a test greps for it). Everything comes through an `Env`,
 * which has a real implementation (`real-env.ts`) and a fake one for tests (`fake-env.ts`).
 * The journal records what these return during a live run and answers from the log on replay,
 * so a mission sees the same time, the same random picks and the same responses every time.
 */

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms` of this clock's time (fake clocks resolve when advanced). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** A new unique identifier (used for run ids and pause ids, never for effect identity). */
  id(prefix: string): string;
}

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** Already serialised body, if any. */
  body?: string;
  timeoutMs: number;
  /** The most body bytes to accept; a larger response fails with code `too-large` while it streams. */
  maxResponseBytes?: number;
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  /** The raw body text ('' for an empty body). */
  body: string;
  /** How decoding the body's bytes lost characters (bytes that are not valid UTF-8, an unknown charset), if it did. */
  decodeWarning?: string;
}

/**
 * Thrown by a transport for failures below HTTP (refused, reset, timed out), and for a body it
 * refused to take whole (`too-large`: over `maxResponseBytes`, or more than a string can hold).
 */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly code: TransportErrorCode,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

/** The one way transports say a body went over `maxResponseBytes`. */
export function responseTooLarge(req: HttpRequest, limit: number): TransportError {
  return new TransportError(`${req.method} ${req.url} failed: the response body is larger than ${limit} bytes`, 'too-large');
}

export type TransportErrorCode = 'timeout' | 'network' | 'aborted' | 'too-large';

export interface HttpTransport {
  send(request: HttpRequest): Promise<HttpResponse>;
}

export interface Env {
  clock: Clock;
  random: Random;
  http: HttpTransport;
  /** Process environment as the mission's `env("NAME")` sees it. */
  vars: Readonly<Record<string, string | undefined>>;
}
