import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransportError } from '../../engine/env/env.js';
import { createRealEnv, CryptoRandom, RealClock, UndiciTransport } from '../../engine/env/real-env.js';
import { json, startServer, type LocalServer } from './local-server.js';

let server: LocalServer;
const transport = new UndiciTransport();

beforeAll(async () => {
  server = await startServer((req, res) => {
    if (req.url === '/slow') {
      setTimeout(() => json(res, 200, { late: true }), 2000).unref();
      return;
    }
    if (req.url === '/empty') {
      res.writeHead(204);
      res.end();
      return;
    }
    if (req.url === '/echo') {
      json(res, 201, { method: req.method, body: req.body, h: req.headers['x-test'] }, { 'X-Mixed-Case': 'yes' });
      return;
    }
    const coded = CODED[req.url];
    if (coded) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coded[0] });
      res.end(coded[1]);
      return;
    }
    json(res, 200, { ok: true });
  });
});

const ITEMS = JSON.stringify([{ id: 1 }, { id: 2 }]);
/** Bodies a server may compress when the request names no Accept-Encoding (RFC 9110 §12.5.3). */
const CODED: Record<string, [string, Buffer]> = {
  '/gzip': ['gzip', gzipSync(ITEMS)],
  '/deflate': ['deflate', deflateSync(ITEMS)],
  '/raw-deflate': ['deflate', deflateRawSync(ITEMS)],
  '/br': ['br', brotliCompressSync(ITEMS)],
  '/twice': ['deflate, gzip', gzipSync(deflateSync(ITEMS))],
  // 64 kB of spaces inside a JSON string: 100 bytes compressed, over the 10 kB limit decoded.
  '/bomb': ['gzip', gzipSync(`["${' '.repeat(64 * 1024)}"]`)],
  '/corrupt': ['gzip', Buffer.from('not gzip at all')],
  '/unknown': ['x-custom', Buffer.from(ITEMS)],
};

afterAll(async () => {
  await transport.close();
  await server.close();
});

describe('UndiciTransport against a real server', () => {
  it('sends method, headers and body; reads the whole body; lower-cases header names', async () => {
    const res = await transport.send({
      method: 'POST',
      url: `${server.base}/echo`,
      headers: { 'X-Test': 'hello', 'Content-Type': 'application/json' },
      body: '{"a":1}',
      timeoutMs: 5000,
    });
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body)).toEqual({ method: 'POST', body: '{"a":1}', h: 'hello' });
    expect(res.headers['x-mixed-case']).toBe('yes');
    expect(Object.keys(res.headers).every((k) => k === k.toLowerCase())).toBe(true);
  });

  it('returns an empty string body for a 204', async () => {
    const res = await transport.send({ method: 'GET', url: `${server.base}/empty`, headers: {}, timeoutMs: 5000 });
    expect(res).toMatchObject({ status: 204, body: '' });
  });

  it('decodes a body the server compressed (gzip, deflate with or without its zlib wrapper, br, several codings)', async () => {
    // Reqon sends no Accept-Encoding, so a server may compress: the body reached JSON.parse as
    // gzip bytes and the fetch failed "expected a JSON body" (upstream's fetch() decodes it).
    for (const path of ['/gzip', '/deflate', '/raw-deflate', '/br', '/twice']) {
      const res = await transport.send({ method: 'GET', url: `${server.base}${path}`, headers: {}, timeoutMs: 5000, maxResponseBytes: 10_000 });
      expect([path, res.body]).toEqual([path, ITEMS]);
    }
  });

  it('holds the decoded body to maxResponseBytes; a body that does not decode is a network failure; an unknown coding is left', async () => {
    const bomb = await transport.send({ method: 'GET', url: `${server.base}/bomb`, headers: {}, timeoutMs: 5000, maxResponseBytes: 10_000 }).catch((e: unknown) => e);
    expect(bomb).toMatchObject({ name: 'TransportError', code: 'too-large' });
    const corrupt = await transport.send({ method: 'GET', url: `${server.base}/corrupt`, headers: {}, timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(corrupt).toMatchObject({ name: 'TransportError', code: 'network', message: expect.stringMatching(/gzip/) });
    const unknown = await transport.send({ method: 'GET', url: `${server.base}/unknown`, headers: {}, timeoutMs: 5000 });
    expect(unknown.body).toBe(ITEMS);
  });

  it('keeps connections alive across requests', async () => {
    const before = server.connections;
    for (let i = 0; i < 5; i++) await transport.send({ method: 'GET', url: `${server.base}/x${i}`, headers: {}, timeoutMs: 5000 });
    expect(server.connections - before).toBeLessThanOrEqual(1);
  });

  it('maps a per-request timeout to TransportError("timeout")', async () => {
    const err = await transport.send({ method: 'GET', url: `${server.base}/slow`, headers: {}, timeoutMs: 100 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('timeout');
  });

  it('maps the caller aborting to TransportError("aborted")', async () => {
    const ac = new AbortController();
    const p = transport.send({ method: 'GET', url: `${server.base}/slow`, headers: {}, timeoutMs: 5000, signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await expect(p).rejects.toMatchObject({ name: 'TransportError', code: 'aborted' });
  });

  it('maps a refused connection to TransportError("network")', async () => {
    const probe = await startServer();
    const base = probe.base;
    await probe.close();
    const err = await transport.send({ method: 'GET', url: `${base}/`, headers: {}, timeoutMs: 2000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('network');
  });
});

describe('RealClock and CryptoRandom', () => {
  it('a sleep longer than 2^31-1 ms does not fire early and can be aborted', async () => {
    const clock = new RealClock();
    const ac = new AbortController();
    let settled = false;
    const p = clock.sleep(2 ** 31 + 10_000, ac.signal).then(
      () => (settled = true),
      (e: unknown) => {
        settled = true;
        throw e;
      },
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    ac.abort(new Error('cancelled'));
    await expect(p).rejects.toThrow('cancelled');
  });

  it('a short sleep resolves after about its duration', async () => {
    const clock = new RealClock();
    const t0 = clock.now();
    await clock.sleep(30);
    expect(clock.now() - t0).toBeGreaterThanOrEqual(29);
  });

  it('ids are prefix_ + 20 base32 chars, unique and time-sortable', async () => {
    const r = new CryptoRandom();
    const ids: string[] = [];
    for (let i = 0; i < 500; i++) ids.push(r.id('run'));
    await new Promise((res) => setTimeout(res, 3));
    ids.push(r.id('run'));
    for (const id of ids) expect(id).toMatch(/^run_[0-9a-hjkmnp-tv-z]{20}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    const x = r.next();
    expect(x).toBeGreaterThanOrEqual(0);
    expect(x).toBeLessThan(1);
  });

  it('createRealEnv exposes the given vars', async () => {
    const env = createRealEnv({ A: '1' });
    expect(env.vars['A']).toBe('1');
    await env.http.close();
  });
});
