/**
 * UndiciTransport's own dispatch handler against a real server on 127.0.0.1: what `request()` +
 * `body.text()` used to do for us (header folding, BOM, multi-chunk UTF-8, 1xx, errors) still
 * holds, a timeout also covers the time spent queued for a connection (and such a request never
 * reaches the wire), and every finished request leaves no timer and no abort listener behind.
 */
import { getEventListeners } from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { TransportError, type HttpRequest } from '../../engine/env/env.js';
import { UndiciTransport } from '../../engine/env/real-env.js';
import { json, startServer, type LocalServer } from './local-server.js';

let server: LocalServer;
const transport = new UndiciTransport();
/** Responses held back by `/hold/...` until the test releases them. */
const held: (() => void)[] = [];

const EURO_BODY = '€'.repeat(70_000) + 'é';

beforeAll(async () => {
  server = await startServer((req, res) => {
    const path = req.url;
    if (path.startsWith('/hold/')) {
      held.push(() => json(res, 200, { released: path }));
      return;
    }
    switch (path) {
      case '/folded':
        res.setHeader('X-Multi', ['a', 'b']);
        res.setHeader('__proto__', 'own');
        json(res, 200, { ok: true });
        return;
      case '/bom':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]));
        return;
      case '/latin1':
        res.writeHead(200, { 'content-type': 'application/json; charset="ISO-8859-1"' });
        res.end(Buffer.from([...Buffer.from('{"name":"Caf'), 0xe9, 0x20, 0xfc, ...Buffer.from('"}')]));
        return;
      case '/sjis':
        res.writeHead(200, { 'content-type': 'application/json;charset=Shift_JIS' });
        res.end(Buffer.from([...Buffer.from('{"city":"'), 0x93, 0x8c, 0x8b, 0x9e, ...Buffer.from('"}')]));
        return;
      case '/utf16':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"a":"é"}', 'utf16le')]));
        return;
      case '/latin1-unnamed':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(Buffer.from([...Buffer.from('{"name":"Caf'), 0xe9, 0x20, 0xfc, ...Buffer.from('","sent":"\uFFFD"}', 'utf8')]));
        return;
      case '/sjis-broken':
        res.writeHead(200, { 'content-type': 'application/json; charset=shift_jis' });
        res.end(Buffer.from([...Buffer.from('{"s":"'), 0x81, 0x20, 0xa0, 0xfd, ...Buffer.from('"}')]));
        return;
      case '/single-quoted':
        res.writeHead(200, { 'content-type': "application/json; charset='utf-8'" });
        res.end(Buffer.from('{"a":"é"}', 'utf8'));
        return;
      case '/comma':
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8, text/plain' });
        res.end(Buffer.from('{"a":"é"}', 'utf8'));
        return;
      case '/empty-charset':
        res.writeHead(200, { 'content-type': 'application/json; charset=' });
        res.end(Buffer.from('{"a":"é"}', 'utf8'));
        return;
      case '/unknown-charset':
        res.writeHead(200, { 'content-type': 'application/json; charset=x-made-up' });
        res.end(Buffer.from('{"a":"é"}', 'utf8'));
        return;
      case '/euro': {
        // Written in slices that cut three-byte characters apart: decoding must happen once, at the end.
        const bytes = Buffer.from(EURO_BODY, 'utf8');
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        for (let at = 0; at < bytes.length; at += 16_001) res.write(bytes.subarray(at, at + 16_001));
        res.end();
        return;
      }
      case '/early-hints':
        res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
        json(res, 200, { final: true }, { 'x-final': 'yes' });
        return;
      case '/stall-body':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"partial":');
        return; // never ends
      default:
        json(res, 200, { ok: true, method: req.method });
    }
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  for (const release of held.splice(0)) release();
  await transport.close();
  await server.close();
});

const get = (path: string, extra: Partial<HttpRequest> = {}): HttpRequest => ({ method: 'GET', url: `${server.base}${path}`, headers: {}, timeoutMs: 5000, ...extra });

describe('UndiciTransport reads responses as request() + body.text() did', () => {
  it('folds repeated headers with ", " and keeps a `__proto__` header as a plain own property', async () => {
    const res = await transport.send(get('/folded'));
    expect(res.headers['x-multi']).toBe('a, b');
    expect(Object.getPrototypeOf(res.headers)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(res.headers, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(res.headers, '__proto__')?.value).toBe('own');
  });

  it('drops a UTF-8 byte order mark at the start of the body', async () => {
    const res = await transport.send(get('/bom'));
    expect(res.body).toBe('{"a":1}');
  });

  it("decodes a body in the charset its Content-Type names, or a UTF-16 byte order mark's; UTF-8 otherwise", async () => {
    // Read as UTF-8, each of these letters was U+FFFD in the stored records.
    expect((await transport.send(get('/latin1'))).body).toBe('{"name":"Café ü"}');
    expect((await transport.send(get('/sjis'))).body).toBe('{"city":"東京"}');
    expect((await transport.send(get('/utf16'))).body).toBe('{"a":"é"}');
    const unknown = await transport.send(get('/unknown-charset'));
    expect(unknown.body).toBe('{"a":"é"}');
    expect(unknown.decodeWarning).toBe('its Content-Type names charset=x-made-up, which this engine cannot decode, so it was read as UTF-8; characters outside ASCII may be misread');
    for (const path of ['/latin1', '/sjis', '/utf16', '/bom', '/euro']) expect((await transport.send(get(path))).decodeWarning, path).toBeUndefined();
  });

  it('says when a body is not valid in the charset its Content-Type names, and reads odd but plain charset parameters without a word', async () => {
    const broken = await transport.send(get('/sjis-broken'));
    expect(broken.body).toContain('\uFFFD');
    expect(broken.decodeWarning).toMatch(/^\d+ character\(s\) of the body are not valid shift_jis \(as its Content-Type names\): each became U\+FFFD/);
    for (const path of ['/single-quoted', '/comma', '/empty-charset']) {
      const res = await transport.send(get(path));
      expect(res.body, path).toBe('{"a":"é"}');
      expect(res.decodeWarning, path).toBeUndefined();
    }
  });

  it('says how many byte sequences were not valid UTF-8 (a U+FFFD the server sent is no loss)', async () => {
    const res = await transport.send(get('/latin1-unnamed'));
    expect(res.body).toBe('{"name":"Caf\uFFFD \uFFFD","sent":"\uFFFD"}');
    expect(res.decodeWarning).toBe(
      "2 byte sequence(s) of the body are not valid UTF-8 (its Content-Type names no charset): each became U+FFFD (�) in place of the character the API sent; an API that answers in another encoding should name it in its Content-Type",
    );
  });

  it('decodes a multi-chunk body whose chunks split multi-byte characters', async () => {
    const res = await transport.send(get('/euro'));
    expect(res.body.length).toBe(EURO_BODY.length);
    expect(res.body === EURO_BODY).toBe(true);
  });

  it('skips a 103 Early Hints: status and headers are the final response', async () => {
    const res = await transport.send(get('/early-hints'));
    expect(res.status).toBe(200);
    expect(res.headers['x-final']).toBe('yes');
    expect(res.headers['link']).toBeUndefined();
    expect(JSON.parse(res.body)).toEqual({ final: true });
  });

  it('HEAD has an empty body', async () => {
    const res = await transport.send(get('/anything', { method: 'HEAD' }));
    expect(res).toMatchObject({ status: 200, body: '' });
  });
});

describe('UndiciTransport failures are TransportErrors with the right code', () => {
  it('times out while the body is still arriving', async () => {
    const started = Date.now();
    const err = await transport.send(get('/stall-body', { timeoutMs: 150 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: 'timeout', message: `GET ${server.base}/stall-body timed out after 150 ms` });
    expect(Date.now() - started).toBeLessThan(2000);
    // The connection it was on is gone; the next request still works.
    await expect(transport.send(get('/after-stall'))).resolves.toMatchObject({ status: 200 });
  });

  it('a timeout also counts the time queued for a connection, rejects at once, and the request is never sent', async () => {
    const single = new UndiciTransport({ connections: 1 });
    try {
      const first = single.send(get('/hold/first'));
      await vi.waitUntil(() => held.length === 1, { timeout: 2000 });
      const started = Date.now();
      const err = await single.send(get('/queued', { timeoutMs: 100 })).catch((e: unknown) => e);
      // Rejected while the only connection is still busy with /hold/first.
      expect(err).toMatchObject({ name: 'TransportError', code: 'timeout' });
      expect(Date.now() - started).toBeLessThan(1500);
      held.shift()!();
      await expect(first).resolves.toMatchObject({ status: 200 });
      // Give the freed connection the chance to (wrongly) send the queued request.
      await single.send(get('/after-queue'));
      expect(server.requests.map((r) => r.url)).not.toContain('/queued');
    } finally {
      await single.close();
    }
  });

  it('an already aborted signal sends nothing', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(transport.send(get('/never-aborted', { signal: ac.signal }))).rejects.toMatchObject({ name: 'TransportError', code: 'aborted' });
    expect(server.requests.map((r) => r.url)).not.toContain('/never-aborted');
  });

  it('a header value undici refuses is a network error naming the request', async () => {
    const err = await transport.send(get('/bad-header', { headers: { 'X-Bad': 'a\nb' } })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('network');
    expect((err as TransportError).message).toMatch(new RegExp(`^GET ${server.base}/bad-header failed: `));
  });

  it('a closed transport refuses with a network error, not a raw undici error', async () => {
    const closed = new UndiciTransport();
    await closed.close();
    const err = await closed.send(get('/after-close')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('network');
  });

  it('a URL that does not parse, or is not http(s), is a network error', async () => {
    await expect(transport.send({ method: 'GET', url: 'not a url', headers: {}, timeoutMs: 1000 })).rejects.toMatchObject({
      name: 'TransportError',
      code: 'network',
      message: 'GET not a url failed: invalid URL',
    });
    await expect(transport.send({ method: 'GET', url: 'ftp://127.0.0.1/x', headers: {}, timeoutMs: 1000 })).rejects.toMatchObject({
      name: 'TransportError',
      code: 'network',
    });
  });
});

describe('UndiciTransport cleans up after every request', () => {
  /** Calls of setTimeout with `ms`, and whether each handle was later cleared. */
  function watchTimers(ms: number) {
    const made: unknown[] = [];
    const cleared = new Set<unknown>();
    const realSet = globalThis.setTimeout;
    const realClear = globalThis.clearTimeout;
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, delay?: number) => {
      const handle = realSet(fn, delay);
      if (delay === ms) made.push(handle);
      return handle;
    }) as typeof setTimeout);
    vi.spyOn(globalThis, 'clearTimeout').mockImplementation(((handle?: NodeJS.Timeout) => {
      cleared.add(handle);
      realClear(handle);
    }) as typeof clearTimeout);
    return { made, cleared };
  }

  it('clears the timeout timer and removes the abort listener on success and on failure', async () => {
    const timers = watchTimers(43_210);
    const ac = new AbortController();
    await transport.send(get('/ok', { timeoutMs: 43_210, signal: ac.signal }));
    const probe = await startServer();
    const refused = probe.base;
    await probe.close();
    await expect(transport.send({ method: 'GET', url: `${refused}/`, headers: {}, timeoutMs: 43_210, signal: ac.signal })).rejects.toMatchObject({
      code: 'network',
    });
    expect(timers.made).toHaveLength(2);
    for (const handle of timers.made) expect(timers.cleared.has(handle)).toBe(true);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('an abort mid-flight settles once as "aborted" and leaves no listener', async () => {
    const ac = new AbortController();
    const p = transport.send(get('/hold/abort-me', { signal: ac.signal }));
    await vi.waitUntil(() => held.length === 1, { timeout: 2000 });
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    ac.abort();
    await expect(p).rejects.toMatchObject({ name: 'TransportError', code: 'aborted' });
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    held.shift()!(); // the server side of the aborted exchange: its socket is gone, the write goes nowhere
  });
});
