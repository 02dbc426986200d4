/**
 * The real `Env`: wall clock, crypto randomness, and HTTP over undici.
 *
 * This is the ONLY engine file allowed to call `Date.now()`, crypto randomness, `setTimeout` for
 * waiting, or undici directly; everything else receives these through `Env` so that tests can
 * substitute `fake-env.ts` and the journal can record what they return.
 *
 * Invariants kept here:
 * - `sleep` handles any duration (it chains timers below setTimeout's 2^31-1 ms limit, which would
 *   otherwise fire immediately) and is abortable.
 * - `id()` is time-sortable: ids made later sort after ids made earlier, also within one millisecond.
 * - the transport never throws anything but `TransportError` for failures below HTTP, always reads
 *   the whole body as text, and reports response header names in lower case.
 */

import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';
import type { Clock, Env, HttpRequest, HttpResponse, HttpTransport, Random } from './env.js';
import { TransportError } from './env.js';

/** setTimeout's largest delay; larger values overflow to 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Crockford base32 in lower case: ASCII order equals numeric order, so ids sort by time. */
const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';

export class RealClock implements Clock {
  now(): number {
    return Date.now();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const due = Date.now() + Math.max(0, ms);
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => {
        if (timer) clearTimeout(timer);
        reject(signal?.reason);
      };
      // Re-arm in chunks: a single timer cannot wait longer than MAX_TIMER_MS.
      const arm = () => {
        const left = due - Date.now();
        if (left <= 0) {
          signal?.removeEventListener('abort', onAbort);
          resolve();
          return;
        }
        timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      arm();
    });
  }
}

export class CryptoRandom implements Random {
  private lastTime = -1;
  private lastRandom = 0;

  next(): number {
    // 53 random bits → a uniformly distributed double in [0, 1).
    const b = randomBytes(7);
    const hi = (b[0]! << 13) | (b[1]! << 5) | (b[2]! >> 3);
    const lo = (b[3]! << 24) | (b[4]! << 16) | (b[5]! << 8) | b[6]!;
    return (hi * 2 ** 32 + (lo >>> 0)) / 2 ** 53;
  }

  /** `${prefix}_` + 10 base32 chars of milliseconds + 10 base32 chars of randomness (50 bits each). */
  id(prefix: string): string {
    const now = Date.now();
    let rand: number;
    if (now <= this.lastTime) {
      // Same millisecond (or the clock stepped back): keep order by incrementing the random part.
      rand = (this.lastRandom + 1) % 2 ** 50;
    } else {
      const b = randomBytes(7);
      rand = ((b[0]! & 0x03) * 2 ** 48) + b[1]! * 2 ** 40 + b[2]! * 2 ** 32 + ((b[3]! << 24) >>> 0) + (b[4]! << 16) + (b[5]! << 8) + b[6]!;
      this.lastTime = now;
    }
    this.lastRandom = rand;
    return `${prefix}_${encodeBase32(this.lastTime, 10)}${encodeBase32(rand, 10)}`;
  }
}

/** Encodes a non-negative integer (< 2^53) as exactly `length` base32 digits, most significant first. */
export function encodeBase32(value: number, length: number): string {
  let out = '';
  let v = Math.floor(value);
  for (let i = 0; i < length; i++) {
    out = BASE32[v % 32] + out;
    v = Math.floor(v / 32);
  }
  return out;
}

export interface UndiciTransportOptions {
  /** How long an idle keep-alive connection is kept open (ms). */
  keepAliveTimeout?: number;
  /** Connections per origin. */
  connections?: number;
}

export class UndiciTransport implements HttpTransport {
  private readonly agent: Agent;

  constructor(options: UndiciTransportOptions = {}) {
    this.agent = new Agent({
      keepAliveTimeout: options.keepAliveTimeout ?? 10_000,
      connections: options.connections ?? 16,
    });
  }

  async send(req: HttpRequest): Promise<HttpResponse> {
    const timeout = AbortSignal.timeout(Math.max(1, req.timeoutMs));
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    try {
      const res = await request(req.url, {
        method: req.method as 'GET',
        headers: req.headers,
        body: req.body,
        signal,
        dispatcher: this.agent,
        // The AbortSignal is the one timeout; undici's own timers would race it with another error.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      const body = await res.body.text();
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers)) {
        if (value === undefined) continue;
        headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
      }
      return { status: res.statusCode, headers, body };
    } catch (err) {
      if (req.signal?.aborted) {
        throw new TransportError(`${req.method} ${req.url} was aborted`, 'aborted');
      }
      if (timeout.aborted) {
        throw new TransportError(`${req.method} ${req.url} timed out after ${req.timeoutMs} ms`, 'timeout');
      }
      const e = err as { code?: string; message?: string };
      const detail = e.code ? `${e.code}: ${e.message ?? ''}` : String(e.message ?? err);
      throw new TransportError(`${req.method} ${req.url} failed: ${detail}`, 'network');
    }
  }

  /** Closes idle keep-alive connections; pending requests are allowed to finish. */
  close(): Promise<void> {
    return this.agent.close();
  }
}

export interface RealEnv extends Env {
  http: UndiciTransport;
}

export function createRealEnv(vars: Readonly<Record<string, string | undefined>> = process.env): RealEnv {
  return {
    clock: new RealClock(),
    random: new CryptoRandom(),
    http: new UndiciTransport(),
    vars,
  };
}
