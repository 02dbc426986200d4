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
 * - the transport never throws anything but `TransportError` for failures below HTTP, reads the
 *   whole body as text, its content codings (gzip, deflate, br) undone, or fails (`too-large` past
 *   `maxResponseBytes`, checked as bytes arrive and again once decoded, or
 *   when the body cannot be decoded into one string), and reports response header names in lower
 *   case. Every request ends in exactly one outcome: a decode failure is a rejection, never lost. A request's timeout
 *   counts from `send`, time queued for a connection included; a request that timed out (or was
 *   aborted) while queued is never written to the wire.
 * - `CryptoRandom` hands out each byte of OS randomness once (drawn in bulk into a pool).
 */

import { randomFillSync } from 'node:crypto';
import { isAscii, isUtf8 } from 'node:buffer';
import { TextDecoder } from 'node:util';
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import type { Agent, Dispatcher } from 'undici';
import type { Clock, Env, HttpRequest, HttpResponse, HttpTransport, Random } from './env.js';
import { responseTooLarge, TransportError } from './env.js';
import { importEsm } from './import-esm.js';

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

/** Bytes fetched from the OS at a time: one `getrandom` call serves hundreds of draws. */
const RANDOM_POOL_BYTES = 4096;

export class CryptoRandom implements Random {
  private lastTime = -1;
  private lastRandom = 0;
  // A 7-byte `randomBytes` call is a system call and a buffer (≈10 µs in a VM), paid on every
  // HTTP attempt for its jitter; drawing from a pool refilled in bulk costs a few array reads.
  private readonly pool = Buffer.allocUnsafe(RANDOM_POOL_BYTES);
  private used = RANDOM_POOL_BYTES;

  next(): number {
    // 53 random bits → a uniformly distributed double in [0, 1).
    const b = this.pool;
    const i = this.reserve(7);
    const hi = (b[i]! << 13) | (b[i + 1]! << 5) | (b[i + 2]! >> 3);
    const lo = (b[i + 3]! << 24) | (b[i + 4]! << 16) | (b[i + 5]! << 8) | b[i + 6]!;
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
      const b = this.pool;
      const i = this.reserve(7);
      rand = ((b[i]! & 0x03) * 2 ** 48) + b[i + 1]! * 2 ** 40 + b[i + 2]! * 2 ** 32 + ((b[i + 3]! << 24) >>> 0) + (b[i + 4]! << 16) + (b[i + 5]! << 8) + b[i + 6]!;
      this.lastTime = now;
    }
    this.lastRandom = rand;
    return `${prefix}_${encodeBase32(this.lastTime, 10)}${encodeBase32(rand, 10)}`;
  }

  /** Index in `pool` of `n` fresh random bytes; each pool byte is handed out once. */
  private reserve(n: number): number {
    if (this.used + n > RANDOM_POOL_BYTES) {
      randomFillSync(this.pool);
      this.used = 0;
    }
    const start = this.used;
    this.used += n;
    return start;
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

/**
 * Sends through undici's dispatcher with a handler of our own rather than `request()`: that API
 * wraps every response in a stream (and an async resource) and, for a timeout, needs an
 * `AbortSignal.timeout` combined with `AbortSignal.any` — together more than the request itself
 * costs on a local server. Here one timer per request is the timeout, the body is collected as
 * buffers and decoded once, and the promise settles exactly once (the first of: the response
 * ends, the dispatcher errors, the timer fires, the caller aborts).
 */
export class UndiciTransport implements HttpTransport {
  /** Loaded on the first request: undici takes longer to import than a small run takes to finish. */
  private agent: Agent | undefined;
  private agentLoading: Promise<Agent> | undefined;
  private closed = false;

  constructor(private readonly options: UndiciTransportOptions = {}) {}

  send(req: HttpRequest): Promise<HttpResponse> {
    if (req.signal?.aborted) return Promise.reject(new TransportError(`${req.method} ${req.url} was aborted`, 'aborted'));
    let target: URL;
    try {
      target = new URL(req.url);
    } catch {
      return Promise.reject(new TransportError(`${req.method} ${req.url} failed: invalid URL`, 'network'));
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      return Promise.reject(new TransportError(`${req.method} ${req.url} failed: the URL must start with http: or https:`, 'network'));
    }
    if (this.closed) return Promise.reject(new TransportError(`${req.method} ${req.url} failed: the transport is closed`, 'network'));
    const agent = this.agent;
    if (agent) return this.exchange(agent, target, req);
    return this.loadAgent().then((loaded) => this.exchange(loaded, target, req));
  }

  private loadAgent(): Promise<Agent> {
    this.agentLoading ??= importEsm<typeof import('undici')>('undici').then(({ Agent }) => {
      this.agent = new Agent({
        keepAliveTimeout: this.options.keepAliveTimeout ?? 10_000,
        connections: this.options.connections ?? 16,
      });
      return this.agent;
    });
    return this.agentLoading;
  }

  private exchange(agent: Agent, target: URL, req: HttpRequest): Promise<HttpResponse> {
    // Aborted while undici was loading: never sent.
    if (req.signal?.aborted) return Promise.reject(new TransportError(`${req.method} ${req.url} was aborted`, 'aborted'));
    return new Promise<HttpResponse>((resolve, reject) => {
      const exchange = new Exchange(req, resolve, reject);
      try {
        agent.dispatch(
          {
            origin: target.origin,
            // The fragment never goes on the wire.
            path: target.pathname + target.search,
            method: req.method as Dispatcher.HttpMethod,
            headers: req.headers,
            body: req.body ?? null,
            // The exchange's timer is the one timeout; undici's own timers would race it with another error.
            headersTimeout: 0,
            bodyTimeout: 0,
          },
          exchange,
        );
      } catch (err) {
        // undici reports its failures through the handler; this is for anything it throws instead.
        exchange.onResponseError(undefined, err as Error);
      }
    });
  }

  /** Closes idle keep-alive connections; pending requests are allowed to finish. */
  async close(): Promise<void> {
    this.closed = true;
    const agent = this.agent ?? (this.agentLoading ? await this.agentLoading : undefined);
    await agent?.close();
  }
}

/** UTF-8 byte order mark: dropped from the start of a body, as undici's `body.text()` does. */
const BOM = [0xef, 0xbb, 0xbf] as const;

/**
 * One request in flight: undici's dispatch handler plus the request's timeout and the caller's
 * abort. Invariant: `resolve`/`reject` run at most once, and every way of finishing clears the
 * timer and the abort listener.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private headers: Record<string, string> = {};
  private readonly chunks: Buffer[] = [];
  private received = 0;
  private settled = false;
  /** Set once the request must stop; given to undici's abort as soon as it can take it. */
  private stopReason: Error | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort: (() => void) | undefined;

  constructor(
    private readonly req: HttpRequest,
    private readonly resolve: (res: HttpResponse) => void,
    private readonly reject: (err: TransportError) => void,
  ) {
    this.timer = setTimeout(() => {
      this.stop(new TransportError(`${req.method} ${req.url} timed out after ${req.timeoutMs} ms`, 'timeout'));
    }, Math.max(1, req.timeoutMs));
    const signal = req.signal;
    if (signal) {
      this.onAbort = () => this.stop(new TransportError(`${req.method} ${req.url} was aborted`, 'aborted'));
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Stopped while still queued for a connection: never let it reach the wire.
    if (this.stopReason) controller.abort(this.stopReason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    // 1xx (103 Early Hints, 102) are interim: the final response follows. An unsolicited
    // 100 Continue never gets here: undici's parser fails the exchange on it ("bad response",
    // UND_ERR_SOCKET), which the request then reports as a transport failure — RFC 9110 §15.2
    // asks a client to take it as interim; a limit of the transport we use, not a choice.
    if (statusCode < 200) return;
    this.status = statusCode;
    const out: Record<string, string> = {};
    for (const name in headers) {
      const value = headers[name];
      if (value === undefined) continue;
      const text = Array.isArray(value) ? value.join(', ') : value;
      // undici lower-cases names already; a `__proto__` header must stay a plain own property.
      if (name === '__proto__') Object.defineProperty(out, name, { value: text, enumerable: true, writable: true, configurable: true });
      else out[name] = text;
    }
    this.headers = out;
    // A declared length over the limit fails before a byte of the body is taken.
    const limit = this.req.maxResponseBytes;
    const declared = Number(out['content-length']);
    if (limit !== undefined && declared > limit) {
      this.stop(responseTooLarge(this.req, limit));
    }
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.received += chunk.length;
    const limit = this.req.maxResponseBytes;
    if (limit !== undefined && this.received > limit) {
      this.chunks.length = 0;
      this.stop(responseTooLarge(this.req, limit));
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.finish();
    let bytes: Buffer | undefined;
    try {
      bytes = withoutContentCodings(this.chunks, this.headers['content-encoding'], this.req.maxResponseBytes);
    } catch (err) {
      this.chunks.length = 0;
      const e = err as { code?: string; message?: string };
      if (e.code === 'ERR_BUFFER_TOO_LARGE') this.reject(responseTooLarge(this.req, this.req.maxResponseBytes!));
      else this.reject(new TransportError(`${this.req.method} ${this.req.url} failed: its ${this.headers['content-encoding']} body cannot be decoded (${e.message})`, 'network'));
      return;
    }
    let body: DecodedBody;
    try {
      body = decodeBody(bytes === undefined ? this.chunks : [bytes], this.headers['content-type']);
    } catch (err) {
      // Past V8's longest string (~512 MiB): the one outcome is this failure, not silence.
      const detail = (err as Error).message;
      this.reject(new TransportError(`${this.req.method} ${this.req.url} failed: the response body of ${this.received} bytes cannot be decoded (${detail})`, 'too-large'));
      return;
    } finally {
      this.chunks.length = 0;
    }
    this.resolve({ status: this.status, headers: this.headers, body: body.text, ...(body.warning !== undefined ? { decodeWarning: body.warning } : {}) });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    if (this.settled) return;
    this.finish();
    const e = err as { code?: string; message?: string };
    const detail = e.code ? `${e.code}: ${e.message ?? ''}` : String(e.message ?? err);
    this.reject(new TransportError(`${this.req.method} ${this.req.url} failed: ${detail}`, 'network'));
  }

  /** Timeout or caller abort: settle now, even while the request still waits for a connection. */
  private stop(reason: TransportError): void {
    if (this.settled) return;
    this.stopReason = reason;
    this.finish();
    this.reject(reason);
    this.controller?.abort(reason);
  }

  private finish(): void {
    this.settled = true;
    clearTimeout(this.timer);
    if (this.onAbort) this.req.signal?.removeEventListener('abort', this.onAbort);
  }
}

/**
 * The body with its content codings undone (`Content-Encoding: gzip`, `deflate` with or without its
 * zlib wrapper, `br`; several in the order applied), or undefined when it has none. A request that
 * names no Accept-Encoding accepts any coding (RFC 9110 §12.5.3), and upstream Reqon's fetch()
 * decodes them; undone, the compressed bytes failed as "not JSON". The decoded size is held to
 * `maxResponseBytes` too (zlib's ERR_BUFFER_TOO_LARGE), so a small body cannot expand past it.
 * A coding it does not know is left as it is.
 */
function withoutContentCodings(chunks: Buffer[], encoding: string | undefined, limit: number | undefined): Buffer | undefined {
  const codings = (encoding ?? '').split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0 || chunks.length === 0 || !codings.every((c) => Object.hasOwn(DECODERS, c))) return undefined;
  const options = limit !== undefined ? { maxOutputLength: Math.max(1, limit) } : {};
  let bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  for (const coding of codings.reverse()) bytes = DECODERS[coding]!(bytes, options);
  return bytes;
}

const DECODERS: Record<string, (bytes: Buffer, options: { maxOutputLength?: number }) => Buffer> = {
  gzip: (b, o) => gunzipSync(b, o),
  'x-gzip': (b, o) => gunzipSync(b, o),
  br: (b, o) => brotliDecompressSync(b, o),
  // HTTP's deflate is zlib-wrapped; some servers send the raw stream.
  deflate: (b, o) => (b.length > 0 && (b[0]! & 0x0f) === 8 && ((b[0]! << 8) | b[1]!) % 31 === 0 ? inflateSync(b, o) : inflateRawSync(b, o)),
};

/**
 * The whole body as text ('' for no body), without a leading byte order mark: UTF-8 unless a
 * UTF-16 byte order mark or the Content-Type's charset names another encoding. JSON on the wire
 * should be UTF-8 (RFC 8259), but older APIs answer `charset=iso-8859-1` or `Shift_JIS`: read as
 * UTF-8, each of their accented letters became U+FFFD in the stored records. A charset no decoder
 * knows is read as UTF-8.
 */
function decodeBody(chunks: Buffer[], contentType: string | undefined): DecodedBody {
  if (chunks.length === 0) return { text: '' };
  const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  const bom = all.length >= 3 && all[0] === BOM[0] && all[1] === BOM[1] && all[2] === BOM[2] ? 3 : 0;
  const utf16 = all.length >= 2 && all[0] === 0xff && all[1] === 0xfe ? 'utf-16le' : all.length >= 2 && all[0] === 0xfe && all[1] === 0xff ? 'utf-16be' : undefined;
  const label = bom > 0 ? undefined : (utf16 ?? charsetOf(contentType));
  const decoder = textDecoderFor(label);
  // A body that is valid UTF-8 with characters beyond ASCII is UTF-8, whatever charset its
  // Content-Type names: read as ISO-8859-1 it became "cafÃ©", stored without a word (helper 42).
  // JSON is UTF-8 (RFC 8259), and a legacy-charset text that is also valid UTF-8 is all but unknown.
  // A Content-Type naming UTF-16 over a body with no zero byte: JSON's ASCII punctuation in UTF-16
  // is half zero bytes, so this is UTF-8 (or ASCII) mislabelled, and read as UTF-16 it was CJK noise.
  if (decoder && utf16 === undefined && decoder.encoding.startsWith('utf-16') && !all.includes(0) && isUtf8(all)) {
    return {
      text: all.toString('utf8', bom),
      warning: `its Content-Type says charset=${label}, but the body has none of the zero bytes UTF-16 text of JSON is full of, and is valid UTF-8: it was read as UTF-8, as JSON is`,
    };
  }
  if (decoder && utf16 === undefined && isUtf8(all) && !isAscii(all)) {
    return {
      text: all.toString('utf8', bom),
      warning: `its Content-Type says charset=${label}, but the body is valid UTF-8 with characters beyond ASCII, which ${decoder.encoding} would misread (é as Ã©): it was read as UTF-8, as JSON is`,
    };
  }
  if (decoder) {
    try {
      return { text: new TextDecoder(decoder.encoding, { fatal: true }).decode(all) };
    } catch {
      // Not valid in its own charset: read leniently, and said, as an invalid UTF-8 body is.
      const text = decoder.decode(all);
      return {
        text,
        warning:
          `${replacementsOf(text)} character(s) of the body are not valid ${decoder.encoding} (${utf16 !== undefined ? 'as its byte order mark says' : 'as its Content-Type names'}): ` +
          'each became U+FFFD (�) in place of the character the API sent',
      };
    }
  }
  const text = all.toString('utf8', bom);
  const lost = text.includes(REPLACEMENT) ? replacementsOf(text) - sequencesOf(all, UTF8_REPLACEMENT) : 0;
  const unknown = label !== undefined && !decodable(label) ? `its Content-Type names charset=${label}, which this engine cannot decode, so it was read as UTF-8` : undefined;
  if (lost > 0) {
    return {
      text,
      warning:
        `${lost} byte sequence(s) of the body are not valid UTF-8 (${unknown ?? (label === undefined ? 'its Content-Type names no charset' : `its Content-Type says charset=${label}`)}): ` +
        'each became U+FFFD (�) in place of the character the API sent; an API that answers in another encoding should name it in its Content-Type',
    };
  }
  // Pure ASCII reads the same in any charset a server would name: nothing was misread then.
  return unknown !== undefined && text.length !== all.length - bom ? { text, warning: `${unknown}; characters outside ASCII may be misread` } : { text };
}

interface DecodedBody {
  text: string;
  warning?: string;
}

const REPLACEMENT = '\uFFFD';
const UTF8_REPLACEMENT = Buffer.from(REPLACEMENT, 'utf8');

function replacementsOf(text: string): number {
  let n = 0;
  for (let at = text.indexOf(REPLACEMENT); at >= 0; at = text.indexOf(REPLACEMENT, at + 1)) n++;
  return n;
}

/** How often `needle` occurs in `bytes`: U+FFFD the server itself sent is no loss. */
function sequencesOf(bytes: Buffer, needle: Buffer): number {
  let n = 0;
  for (let at = bytes.indexOf(needle); at >= 0; at = bytes.indexOf(needle, at + needle.length)) n++;
  return n;
}

function decodable(label: string): boolean {
  try {
    new TextDecoder(label);
    return true;
  } catch {
    return false;
  }
}

/** The `charset` parameter of a Content-Type, unquoted (in double or single quotes, as some servers send it), or undefined. */
function charsetOf(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^;,\s]*))/i.exec(contentType ?? '');
  const label = match ? (match[1] ?? match[2] ?? match[3])!.trim() : '';
  return label === '' ? undefined : label;
}

/** A decoder for an encoding other than UTF-8 (which Buffer decodes faster), or undefined. */
function textDecoderFor(label: string | undefined): TextDecoder | undefined {
  if (label === undefined) return undefined;
  try {
    const decoder = new TextDecoder(label);
    return decoder.encoding === 'utf-8' ? undefined : decoder;
  } catch {
    return undefined;
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
