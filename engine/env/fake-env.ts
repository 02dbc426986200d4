/**
 * A deterministic `Env` for tests across the project: a clock that moves only when told to,
 * seeded randomness, and an HTTP transport answered by a function.
 *
 * Invariants: nothing here reads the wall clock or real randomness; the same seed and the same
 * sequence of calls give the same numbers and ids; sleepers wake in due order (ties in the order
 * they went to sleep), each seeing `now()` equal to its own due instant.
 */

import type { Clock, Env, HttpRequest, HttpResponse, HttpTransport, Random } from './env.js';
import { responseTooLarge, TransportError } from './env.js';

/** 2025-01-01T00:00:00.000Z: a fixed, readable default start instant. */
export const DEFAULT_FAKE_NOW = 1_735_689_600_000;

interface Sleeper {
  due: number;
  order: number;
  resolve: () => void;
}

export interface FakeClockOptions {
  /** When true, `sleep(ms)` moves the clock forward by `ms` at once and resolves (retry tests). */
  autoAdvance?: boolean;
}

/** Lets every promise continuation that is already queued run (microtasks and one macrotask turn). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class FakeClock implements Clock {
  private current: number;
  private sleepers: Sleeper[] = [];
  private order = 0;
  autoAdvance: boolean;
  /** Every duration passed to `sleep`, in call order (lets tests assert backoff schedules). */
  readonly sleeps: number[] = [];

  constructor(start: number = DEFAULT_FAKE_NOW, options: FakeClockOptions = {}) {
    this.current = start;
    this.autoAdvance = options.autoAdvance ?? false;
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    const duration = Math.max(0, ms);
    this.sleeps.push(duration);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.autoAdvance) {
      this.current += duration;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const sleeper: Sleeper = { due: this.current + duration, order: this.order++, resolve: () => {} };
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        reject(signal?.reason);
      };
      sleeper.resolve = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.push(sleeper);
    });
  }

  /**
   * Moves time forward by `ms`, waking due sleepers one by one in due order. After each wake-up
   * the woken code runs (and may go back to sleep; a new sleep due within the window wakes too)
   * before the next sleeper is considered.
   */
  async advance(ms: number): Promise<void> {
    if (ms < 0) throw new Error(`FakeClock.advance: cannot go back in time (${ms} ms)`);
    const target = this.current + ms;
    await settle();
    for (;;) {
      const next = this.nextDue();
      if (!next || next.due > target) break;
      this.sleepers = this.sleepers.filter((s) => s !== next);
      this.current = Math.max(this.current, next.due);
      next.resolve();
      await settle();
    }
    this.current = target;
    await settle();
  }

  /** Advances to the earliest pending sleeper's due time (no-op when none sleeps). */
  async runNext(): Promise<void> {
    const next = this.nextDue();
    if (next) await this.advance(next.due - this.current);
  }

  /** Number of sleeps not yet due. */
  get pending(): number {
    return this.sleepers.length;
  }

  private nextDue(): Sleeper | undefined {
    let best: Sleeper | undefined;
    for (const s of this.sleepers) {
      if (!best || s.due < best.due || (s.due === best.due && s.order < best.order)) best = s;
    }
    return best;
  }
}

/** mulberry32: a tiny, well-distributed 32-bit PRNG; good enough for tests, never for secrets. */
export class SeededRandom implements Random {
  private state: number;
  private counter = 0;

  constructor(seed: number = 1) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** `${prefix}_` + 20 base32 chars: a creation counter (so ids sort by creation) then seeded noise. */
  id(prefix: string): string {
    const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
    let counterPart = '';
    let n = ++this.counter;
    for (let i = 0; i < 10; i++) {
      counterPart = alphabet[n % 32] + counterPart;
      n = Math.floor(n / 32);
    }
    let noise = '';
    for (let i = 0; i < 10; i++) noise += alphabet[Math.floor(this.next() * 32)];
    return `${prefix}_${counterPart}${noise}`;
  }
}

export type FakeHandler = (request: HttpRequest) => HttpResponse | Promise<HttpResponse>;

/** An `HttpTransport` answered by a function; every request it receives is kept in `requests`. */
export class FakeTransport implements HttpTransport {
  readonly requests: HttpRequest[] = [];

  constructor(public handler: FakeHandler = defaultHandler) {}

  async send(request: HttpRequest): Promise<HttpResponse> {
    this.requests.push({ ...request, headers: { ...request.headers } });
    if (request.signal?.aborted) {
      throw new TransportError(`${request.method} ${request.url} was aborted`, 'aborted');
    }
    const response = await this.handler(request);
    // The real transport's limit, so the HTTP layer's handling of it can be tested here too.
    if (request.maxResponseBytes !== undefined && Buffer.byteLength(response.body) > request.maxResponseBytes) {
      throw responseTooLarge(request, request.maxResponseBytes);
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(response.headers)) headers[k.toLowerCase()] = v;
    return { status: response.status, headers, body: response.body };
  }
}

function defaultHandler(request: HttpRequest): HttpResponse {
  return { status: 404, headers: {}, body: JSON.stringify({ error: `no fake route for ${request.method} ${request.url}` }) };
}

/** Shorthand for a JSON response in fake handlers. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): HttpResponse {
  return {
    status,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? '' : JSON.stringify(body),
  };
}

export interface FakeEnvOptions {
  now?: number;
  seed?: number;
  autoAdvance?: boolean;
  handler?: FakeHandler;
  vars?: Record<string, string | undefined>;
}

export interface FakeEnv extends Env {
  clock: FakeClock;
  random: SeededRandom;
  http: FakeTransport;
}

export function createFakeEnv(options: FakeEnvOptions = {}): FakeEnv {
  return {
    clock: new FakeClock(options.now ?? DEFAULT_FAKE_NOW, { autoAdvance: options.autoAdvance }),
    random: new SeededRandom(options.seed ?? 1),
    http: new FakeTransport(options.handler),
    vars: options.vars ?? {},
  };
}
