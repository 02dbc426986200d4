/**
 * The studio's HTTP and WebSocket endpoints under hostile input (fast-check): whatever a client
 * sends — random channels, bodies that are not JSON or not objects, huge or odd numbers, wrong
 * types; malformed WebSocket frames (invalid UTF-8, unmasked, unknown opcodes, oversized, cut
 * short) — the server answers a clear 4xx (never a 500) and keeps serving: a health request after
 * every case still answers, and the log is unchanged.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_CHANNELS } from '../../engine/protocol/channels.js';
import { createStudioService, type StudioService } from '../../engine/server/studio-service.js';
import { startStudioServer, type StudioServer } from '../../engine/server/studio-server.js';

let dir: string;
let service: StudioService;
let server: StudioServer;

function post(channel: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: 'POST',
        path: `/api/${encodeURIComponent(channel)}`,
        headers: { host: `127.0.0.1:${server.port}`, 'content-type': 'application/json', 'x-reqon-token': server.token },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function stillServing(): Promise<void> {
  const r = await post('runs.list', '{}');
  expect(r.status, r.body).toBe(200);
}

/** A raw WebSocket handshake, then `frames` written as they are; resolves when the server closes or after a moment. */
function rawWebSocket(frames: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect(server.port, '127.0.0.1');
    let upgraded = false;
    const done = () => {
      socket.destroy();
      resolve();
    };
    socket.on('error', done);
    socket.on('close', done);
    socket.on('data', (chunk) => {
      if (upgraded) return;
      upgraded = true;
      expect(chunk.toString('latin1')).toMatch(/^HTTP\/1\.1 101/);
      socket.write(frames);
      setTimeout(done, 100);
    });
    socket.write(
      `GET /ws?token=${encodeURIComponent(server.token)} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
  });
}

/** One frame: FIN + opcode, mask flag, a length field (possibly lying), masking key, payload. */
function frame(opcode: number, payload: Buffer, opts: { masked: boolean; declared?: number }): Buffer {
  const length = opts.declared ?? payload.length;
  const head = length < 126 ? Buffer.from([0x80 | opcode, (opts.masked ? 0x80 : 0) | length]) : Buffer.alloc(10);
  if (length >= 126) {
    head[0] = 0x80 | opcode;
    head[1] = (opts.masked ? 0x80 : 0) | 127;
    head.writeBigUInt64BE(BigInt(length), 2);
  }
  if (!opts.masked) return Buffer.concat([head, payload]);
  const key = Buffer.from([1, 2, 3, 4]);
  return Buffer.concat([head, key, Buffer.from(payload.map((b, i) => b ^ key[i % 4]!))]);
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-studio-fuzz-'));
  const staticDir = path.join(dir, 'dist');
  fs.mkdirSync(staticDir, { recursive: true });
  fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>studio</title>');
  service = await createStudioService({ dbPath: path.join(dir, 'reqon.db'), cliPath: path.join(dir, 'no-cli.mjs'), cwd: dir });
  server = await startStudioServer({ service, staticDir });
});

afterAll(async () => {
  await server?.close();
  await service?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const oddValue = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom('1e308', '-1e999', '1e400', 'NaN', '"\\ud800"', '9007199254740993', '-0', '{"__proto__": {"x": 1}}', '[]', 'null'),
);

describe('studio endpoints under hostile input', () => {
  it('HTTP: every request gets a 2xx or a clear 4xx, never a 500, and the server keeps serving', async () => {
    const channels = fc.oneof(fc.constantFrom(...REQUEST_CHANNELS.filter((c) => c !== 'run.start' && c !== 'run.resume' && c !== 'run.crash' && !c.startsWith('crashlab'))), fc.string());
    const body = fc.oneof(
      fc.string(),
      oddValue.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
      fc.dictionary(fc.constantFrom('runId', 'seq', 'limit', 'fromSeq', 'toSeq', 'pinnedSeq', 'from', 'to', 'width', 'x'), oddValue).map((o) =>
        `{${Object.entries(o).map(([k, v]) => `${JSON.stringify(k)}: ${typeof v === 'string' && /^[-\d\[{"n]/.test(v) ? v : JSON.stringify(v)}`).join(', ')}}`,
      ),
    );
    await fc.assert(
      fc.asyncProperty(channels, body, async (channel, text) => {
        const r = await post(channel, text);
        expect(r.status, `${channel} ${text} → ${r.body}`).toBeLessThan(500);
        if (r.status >= 400) expect((JSON.parse(r.body) as { message?: string }).message, r.body).toMatch(/\S/);
      }),
      { numRuns: 300 },
    );
    await stillServing();
  });

  it('WebSocket: a malformed frame closes that socket alone; the server keeps serving', async () => {
    const frames = fc.oneof(
      fc.constant(frame(0x1, Buffer.from([0xff, 0xfe, 0xfd]), { masked: true })), // invalid UTF-8 text
      fc.constant(frame(0x1, Buffer.from('{"x":1}'), { masked: false })), // unmasked from a client
      fc.integer({ min: 3, max: 7 }).map((op) => frame(op, Buffer.from('x'), { masked: true })), // reserved opcodes
      fc.constant(frame(0x2, Buffer.alloc(16), { masked: true, declared: 10 * 1024 * 1024 })), // over maxPayload
      fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.from(bytes)), // noise
      fc.constant(frame(0x9, Buffer.alloc(200), { masked: true })), // a ping longer than a control frame may be
    );
    await fc.assert(
      fc.asyncProperty(frames, async (bytes) => {
        await rawWebSocket(bytes);
        await stillServing();
      }),
      { numRuns: 60 },
    );
  });
});
