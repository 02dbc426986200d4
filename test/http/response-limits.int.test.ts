/**
 * A response body has a ceiling (`maxResponseBytes`, 64 MiB by default), enforced while the body
 * streams in, and every exchange ends in exactly one outcome — also a body that cannot be decoded
 * into a string (past V8's ~512 MiB), which used to be swallowed and leave the request pending for
 * ever (the CLI then exited 0 with its run still `running`).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { TransportError } from '../../engine/env/env.js';
import { createFakeEnv, FakeClock, SeededRandom } from '../../engine/env/fake-env.js';
import { UndiciTransport } from '../../engine/env/real-env.js';
import { DEFAULT_MAX_RESPONSE_BYTES, executeRequest, type AfterAttempt } from '../../engine/http/client.js';
import { FetchError } from '../../engine/http/retry-policy.js';
import { loadMissionFromText } from '../../engine/lang/loader.js';
import { startServer, type LocalServer } from './local-server.js';

let server: LocalServer;
const transport = new UndiciTransport();
/** Bytes the `/endless` route managed to write before the client went away. */
let endlessWritten = 0;

beforeAll(async () => {
  server = await startServer((req, res) => {
    switch (req.url) {
      case '/endless': {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('[');
        const chunk = `${'"xxxxxxxxxxxxxxx",'.repeat(4096)}`;
        const pump = (): void => {
          while (!res.destroyed && res.write(chunk)) endlessWritten += chunk.length;
          if (!res.destroyed) res.once('drain', pump);
        };
        res.on('close', () => res.removeAllListeners('drain'));
        pump();
        return;
      }
      case '/declared':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(10_000) });
        res.write('[');
        return; // promises 10 000 bytes, sends one
      case '/small':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ fits: 'x'.repeat(500) }));
        return;
      default:
        res.writeHead(404);
        res.end();
    }
  });
});
afterAll(async () => {
  await transport.close();
  await server.close();
});
afterEach(() => vi.restoreAllMocks());

describe('UndiciTransport maxResponseBytes', () => {
  it('fails an endless body with too-large once it passes the limit, and stops reading it', async () => {
    const limit = 1024 * 1024;
    const error = await transport.send({ method: 'GET', url: `${server.base}/endless`, headers: {}, timeoutMs: 20_000, maxResponseBytes: limit }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).code).toBe('too-large');
    expect((error as TransportError).message).toContain(`larger than ${limit} bytes`);
  });

  it('fails at once when Content-Length already says the body is too large', async () => {
    const error = await transport.send({ method: 'GET', url: `${server.base}/declared`, headers: {}, timeoutMs: 20_000, maxResponseBytes: 100 }).catch((e: unknown) => e);
    expect((error as TransportError).code).toBe('too-large');
  });

  it('takes a body within the limit', async () => {
    const res = await transport.send({ method: 'GET', url: `${server.base}/small`, headers: {}, timeoutMs: 20_000, maxResponseBytes: 600 });
    expect(JSON.parse(res.body)).toEqual({ fits: 'x'.repeat(500) });
  });

  it('rejects a body that cannot be decoded into a string instead of never settling', async () => {
    // Stands in for a 512 MiB body: decoding it throws ERR_STRING_TOO_LONG inside undici's callback.
    const toString = Buffer.prototype.toString;
    vi.spyOn(Buffer.prototype, 'toString').mockImplementation(function (this: Buffer, ...args: unknown[]) {
      if (this.length > 400) throw Object.assign(new Error('Cannot create a string longer than 0x1fffffe8 characters'), { code: 'ERR_STRING_TOO_LONG' });
      return toString.apply(this, args as []);
    });
    const error = await transport.send({ method: 'GET', url: `${server.base}/small`, headers: {}, timeoutMs: 20_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).code).toBe('too-large');
    expect((error as TransportError).message).toContain('cannot be decoded');
  });
});

describe('executeRequest and maxResponseBytes', () => {
  it('fails the request once, not retried, with a message naming the limit and how to raise it', async () => {
    const env = createFakeEnv({ autoAdvance: true, handler: () => ({ status: 200, headers: {}, body: JSON.stringify('y'.repeat(200)) }) });
    const after: AfterAttempt[] = [];
    const error = await executeRequest(
      { source: 'Api', method: 'GET', base: 'http://api.test', path: '/big', maxResponseBytes: 100 },
      { env },
      { afterAttempt: (a) => void after.push(a) },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchError);
    expect((error as FetchError).code).toBe('too-large');
    expect((error as FetchError).message).toMatch(/larger than 100 bytes.*\(maxResponseBytes of source "Api" is 100\) after 1 attempt; raise it with `maxResponseBytes: N`/);
    expect(env.http.requests).toHaveLength(1);
    expect(after.map((a) => [a.verdict, a.error?.code])).toEqual([['fail', 'too-large']]);
  });

  it('sends the 64 MiB default to the transport when the source sets none', async () => {
    const env = createFakeEnv({ autoAdvance: true, handler: () => ({ status: 200, headers: {}, body: '{}' }) });
    await executeRequest({ source: 'Api', method: 'GET', base: 'http://api.test', path: '/x' }, { env });
    expect(DEFAULT_MAX_RESPONSE_BYTES).toBe(64 * 1024 * 1024);
    expect(env.http.requests[0]!.maxResponseBytes).toBe(DEFAULT_MAX_RESPONSE_BYTES);
  });

  it('over a real connection: an endless body fails with the default limit instead of growing until the timeout', async () => {
    const error = await executeRequest(
      { source: 'Api', method: 'GET', base: server.base, path: '/endless', maxResponseBytes: 2 * 1024 * 1024 },
      { env: { clock: new FakeClock(0, { autoAdvance: true }), random: new SeededRandom(1), http: transport } },
    ).catch((e: unknown) => e);
    expect((error as FetchError).code).toBe('too-large');
    expect(endlessWritten).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('the language', () => {
  it('reads `maxResponseBytes` in a source', () => {
    const text = (n: number) => `mission M {\n  source Api { auth: none, base: "http://x.test", maxResponseBytes: ${n} }\n  action A { get "/a" }\n  run A\n}\n`;
    const loaded = loadMissionFromText(text(1048576), '/tmp/m.vague');
    expect(loaded.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(loaded.unit!.mission!.sources[0]!.maxResponseBytes).toBe(1048576);
    const zero = loadMissionFromText(text(0), '/tmp/m.vague');
    expect(zero.diagnostics.map((d) => d.message).join('\n')).toContain('`maxResponseBytes` expected');
  });
});
