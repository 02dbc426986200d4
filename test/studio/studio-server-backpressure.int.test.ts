/**
 * A page that stops reading its WebSocket (a frozen tab, a paused script) had every later push
 * kept for it in the studio's memory, without limit: helper 43 watched ten such sockets take the
 * studio from 257 MB to 777 MB over five runs. Past a limit of unread bytes the socket is now cut
 * off (the page reconnects and reloads, as after any lost connection), and a page that reads is
 * never cut off however much is pushed. Against a real server on 127.0.0.1; the pushes come from a
 * stand-in service, so the test controls their size and number.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { PushListener, StudioService } from '../../engine/server/studio-service.js';
import { startStudioServer, type StudioServer } from '../../engine/server/studio-server.js';
import type { RunSummary } from '../../engine/protocol/protocol.js';

const LIMIT = 4 * 1024 * 1024;
const listeners = new Set<PushListener>();
const service = {
  subscribe(listener: PushListener) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
  handle: () => Promise.resolve({}),
} as unknown as StudioService;

/** A summary push of about 1 MB that no compression shrinks. */
const big = { runId: 'r', mission: crypto.randomBytes(768 * 1024).toString('base64') } as unknown as RunSummary;
const pushBig = () => {
  for (const listener of listeners) listener('runs.changed', big);
};

let dir: string;
let server: StudioServer;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-studio-backpressure-'));
  server = await startStudioServer({ service, staticDir: dir, maxBufferedBytes: LIMIT });
});

afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function connect(): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws?token=${encodeURIComponent(server.token)}`);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return ws;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('studio server: a WebSocket that does not read', () => {
  it('is cut off once its unread pushes pass the limit, and stops being pushed to', async () => {
    const ws = await connect();
    expect(listeners.size).toBe(1);
    ws.pause(); // reads nothing from here on (and so hears of no close either, until it reads again)
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    let pushes = 0;
    // 200 MB would be far more than the limit and the kernel's socket buffers together.
    while (listeners.size > 0 && pushes < 200) {
      pushBig();
      pushes += 1;
      await tick();
    }
    // The server dropped the socket (its close unsubscribed it) long before.
    expect(listeners.size).toBe(0);
    expect(pushes).toBeLessThan(40);
    ws.resume();
    await closed;
  });

  it('is never cut off while it reads, whatever is pushed', async () => {
    const ws = await connect();
    let received = 0;
    ws.on('message', () => (received += 1));
    let closed = false;
    ws.once('close', () => (closed = true));
    for (let i = 0; i < 60; i++) {
      pushBig();
      await tick();
    }
    while (received < 60 && !closed) await tick();
    expect(closed).toBe(false);
    expect(received).toBe(60);
    ws.close();
  });
});

describe('studio server: request bodies held at once', () => {
  it('refuses a body past the bytes already held (409, retryable) and takes it once they are answered', async () => {
    // Helper 78: three 250 MB run.import bodies at once ran the studio out of heap (every client ECONNRESET).
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = {
      subscribe: () => () => undefined,
      handle: async (channel: string) => {
        if (channel === 'run.import') await held;
        return { ok: channel };
      },
    } as unknown as StudioService;
    const small = await startStudioServer({ service: slow, staticDir: dir, maxInFlightBodyBytes: 1024 * 1024 });
    const post = (channel: string, bytes: number) =>
      fetch(`http://127.0.0.1:${small.port}/api/${channel}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-reqon-token': small.token },
        body: JSON.stringify({ text: 'x'.repeat(bytes) }),
      });
    try {
      const first = post('run.import', 700 * 1024);
      // The import's body is read and held (its handling waits) before the next request comes.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const refused = await post('run.get', 500 * 1024);
      expect(refused.status).toBe(409);
      expect(await refused.json()).toMatchObject({ code: 'conflict', retryable: true, message: expect.stringMatching(/send this one again when they are done/) as string });
      // A small request fits beside it.
      expect((await post('run.get', 10)).status).toBe(200);
      release();
      expect((await first).status).toBe(200);
      expect((await post('run.get', 500 * 1024)).status).toBe(200);
    } finally {
      release();
      await small.close();
    }
  });

  it("takes a body's declared length at its first byte, so of two that fit one at a time one is read whole; a refused one holds nothing", async () => {
    // Helper 81: reserved chunk by chunk, two streaming bodies split the budget and were both refused.
    const service = { subscribe: () => () => undefined, handle: async () => ({ ok: true }) } as unknown as StudioService;
    const small = await startStudioServer({ service, staticDir: dir, maxInFlightBodyBytes: 1024 * 1024 });
    const { request } = await import('node:http');
    const text = (bytes: number) => JSON.stringify({ text: 'x'.repeat(bytes - 12) });
    const send = (body: string, chunks = 1): { sent: Promise<number>; rest: () => void } => {
      let rest!: () => void;
      const sent = new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: small.port, path: '/api/run.get', method: 'POST', headers: { 'content-type': 'application/json', 'x-reqon-token': small.token, 'content-length': Buffer.byteLength(body) } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        const cut = Math.floor(body.length / chunks);
        req.write(body.slice(0, cut));
        rest = () => req.end(body.slice(cut));
        if (chunks === 1) rest();
      });
      return { sent, rest };
    };
    try {
      const first = send(text(700 * 1024), 2); // half sent, the rest held back
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(await send(text(500 * 1024)).sent).toBe(409);
      // The refused body gave back what it held: one that fits beside the first is taken.
      expect(await send(text(300 * 1024)).sent).toBe(200);
      first.rest();
      expect(await first.sent).toBe(200);
    } finally {
      await small.close();
    }
  });

  it('answers an answer too large for one JSON text with a 400 saying to ask for less, not a 500', async () => {
    // Ten answers of 60 MB in one page of the Events tab passed what a V8 string holds (helper 78).
    const tooLarge = { toJSON: () => { throw new RangeError('Invalid string length'); } };
    const service = { subscribe: () => () => undefined, handle: async () => tooLarge } as unknown as StudioService;
    const small = await startStudioServer({ service, staticDir: dir });
    try {
      const res = await fetch(`http://127.0.0.1:${small.port}/api/run.eventSearch`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-reqon-token': small.token }, body: '{}' });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'bad-request', message: expect.stringMatching(/^run\.eventSearch: the answer is too large to send as one JSON text; ask for a smaller page/) as string });
    } finally {
      await small.close();
    }
  });
});
