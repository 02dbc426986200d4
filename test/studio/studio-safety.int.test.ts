/**
 * The studio's own safety, one case per threat, against a real server on 127.0.0.1 and a real
 * SQLite log: `run.start` never reads or echoes a file that is not a mission inside the folders
 * the studio was opened on; the printed URL's token becomes an HttpOnly, SameSite=Strict cookie
 * and leaves the address; each kind of malformed WebSocket frame closes that socket alone; an
 * out-of-range request field is a 400 that names it.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createStudioService, type StudioService } from '../../engine/server/studio-service.js';
import { startStudioServer, type StudioServer } from '../../engine/server/studio-server.js';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function request(port: number, opts: { method?: string; path: string; headers?: Record<string, string>; body?: string }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

const SECRET = 'root:$6$TOPSECRETHASH:19000:0:99999:7:::';

let dir: string;
let outside: string;
let service: StudioService;
let server: StudioServer;
let host: Record<string, string>;

function api(channel: string, body: unknown, headers: Record<string, string> = { 'x-reqon-token': server.token }): Promise<Reply> {
  return request(server.port, {
    method: 'POST',
    path: `/api/${channel}`,
    headers: { ...host, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-studio-safety-'));
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-studio-outside-'));
  const staticDir = path.join(dir, 'dist');
  fs.mkdirSync(staticDir, { recursive: true });
  fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>studio</title>');
  const work = path.join(dir, 'work');
  fs.mkdirSync(work);
  // Files a page might ask for: a secret outside, a secret inside that is no mission, a symlink
  // inside pointing out, a mission outside, and a broken mission inside.
  fs.writeFileSync(path.join(outside, 'shadow'), SECRET);
  fs.writeFileSync(path.join(outside, 'other.vague'), `mission Other { ${SECRET} }`);
  fs.writeFileSync(path.join(work, 'notes.txt'), SECRET);
  fs.symlinkSync(path.join(outside, 'other.vague'), path.join(work, 'link.vague'));
  fs.writeFileSync(path.join(work, 'good.vague'), 'mission Good { source Api { auth: none, base: "http://127.0.0.1:1" } action A { get "/x" } run A }\n');
  fs.writeFileSync(path.join(work, 'broken.vague'), 'mission Broken {\n  action A {\n    get "/x" (\n  }\n}\n');
  service = await createStudioService({ dbPath: path.join(dir, 'reqon.db'), cliPath: path.join(import.meta.dirname, 'fixtures', 'fake-cli.mjs'), cwd: work });
  server = await startStudioServer({ service, staticDir });
  host = { host: `127.0.0.1:${server.port}` };
});

afterAll(async () => {
  await server?.close();
  await service?.close();
  for (const d of [dir, outside]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

async function stillServing(): Promise<void> {
  const r = await api('runs.list', {});
  expect(r.status, r.body).toBe(200);
}

describe('run.start reads only missions inside the studio\'s folders', () => {
  it.each([
    ['an absolute path outside', () => '/etc/shadow'],
    ['a secret outside the roots', () => path.join(outside, 'shadow')],
    ['a mission outside the roots', () => path.join(outside, 'other.vague')],
    ['a relative path climbing out', () => path.relative(path.join(dir, 'work'), path.join(outside, 'shadow'))],
    ['a symlink inside pointing out', () => 'link.vague'],
    ['a file inside that is not a mission', () => 'notes.txt'],
    ['a path that does not exist', () => 'nope.vague'],
  ])('refuses %s with a 400 that quotes nothing of the file', async (_name, missionPath) => {
    for (const channel of ['run.start', 'crashlab.start']) {
      const reply = await api(channel, { missionPath: missionPath(), crashAt: 'before-effect' });
      expect(reply.status, reply.body).toBe(400);
      const error = JSON.parse(reply.body) as { code: string; message: string };
      expect(error.code).toBe('bad-request');
      expect(error.message).toMatch(/is not a mission/);
      expect(reply.body).not.toContain('TOPSECRET');
    }
    expect(JSON.parse((await api('runs.list', {})).body)).toEqual({ runs: [], total: 0 });
  });

  it('passes a mission inside the roots on to the CLI; a broken one is a 400 with its own diagnostics', async () => {
    const reply = await api('run.start', { missionPath: 'good.vague' });
    // The fake CLI names a run for any mission file it is given; what matters is that the studio let it through.
    expect(reply.status, reply.body).toBe(200);
    expect(JSON.parse(reply.body)).toMatchObject({ runId: expect.any(String) });
    // A mission the user opened may be quoted: its diagnostics say where it is wrong, as `reqon run` does.
    const broken = await api('run.start', { missionPath: 'broken.vague' });
    expect(broken.status, broken.body).toBe(400);
    expect(JSON.parse(broken.body)).toMatchObject({ code: 'bad-request', message: expect.stringMatching(/broken\.vague:4:3: error\[E2005\]/) });
  });
});

describe('the session token leaves the URL for a cookie', () => {
  it('answers the printed URL with a 303 to the same address without the token, setting an HttpOnly SameSite=Strict cookie', async () => {
    const first = await request(server.port, { path: `/?token=${encodeURIComponent(server.token)}&run=r1&tab=state#x`, headers: host });
    expect(first.status).toBe(303);
    expect(first.headers.location).toBe('/?run=r1&tab=state');
    const cookie = first.headers['set-cookie']?.[0] ?? '';
    expect(cookie).toMatch(new RegExp(`^reqon-studio-${server.port}=`));
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(first.headers['referrer-policy']).toBe('no-referrer');
  });

  it('refuses a wrong token in the URL with a page that says why, and sets no cookie', async () => {
    const wrong = await request(server.port, { path: `/?token=${'x'.repeat(server.token.length)}`, headers: host });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    expect(wrong.body).toMatch(/session token is not this studio's/);
  });

  it('authenticates the API and the WebSocket by the cookie from this page, and not without its Origin', async () => {
    const first = await request(server.port, { path: `/?token=${encodeURIComponent(server.token)}`, headers: host });
    const cookie = first.headers['set-cookie']![0]!.split(';')[0]!;
    const origin = `http://127.0.0.1:${server.port}`;
    expect((await api('runs.list', {}, { cookie, origin })).status).toBe(200);
    // A cookie alone (no Origin: not a page's fetch) or from another page's origin is not enough.
    expect((await api('runs.list', {}, { cookie })).status).toBe(401);
    expect((await api('runs.list', {}, { cookie, origin: 'http://127.0.0.1:1' })).status).toBe(403);
    expect((await api('runs.list', {}, { cookie: `${cookie}x`, origin })).status).toBe(401);

    const status = (headers: Record<string, string>) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws`, { headers });
        ws.on('open', () => {
          ws.close();
          resolve(101);
        });
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('error', () => undefined);
      });
    expect(await status({ cookie, origin })).toBe(101);
    expect(await status({ origin })).toBe(401);
    expect(await status({ cookie })).toBe(401);
  });
});

/** A raw handshake, then `bytes`; resolves with how the server answered: its close frame's code, or 'closed' for a bare TCP close. */
function sendRawFrame(bytes: Buffer): Promise<number | 'closed' | 'still open'> {
  return new Promise((resolve) => {
    const socket = net.connect(server.port, '127.0.0.1');
    let upgraded = false;
    let settled = false;
    const finish = (how: number | 'closed' | 'still open') => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(how);
    };
    socket.on('error', () => finish('closed'));
    socket.on('close', () => finish('closed'));
    socket.on('data', (chunk) => {
      if (!upgraded) {
        upgraded = true;
        const end = chunk.indexOf('\r\n\r\n');
        expect(chunk.subarray(0, end).toString('latin1')).toMatch(/^HTTP\/1\.1 101/);
        socket.write(bytes);
        setTimeout(() => finish('still open'), 2000);
        const rest = chunk.subarray(end + 4);
        if (rest.length === 0) return;
        chunk = rest;
      }
      // A server close frame: opcode 0x8, then a 2-byte status code.
      if ((chunk[0]! & 0x0f) === 0x8 && chunk.length >= 4) finish(chunk.readUInt16BE(2));
    });
    socket.write(
      `GET /ws?token=${encodeURIComponent(server.token)} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
  });
}

function frame(opcode: number, payload: Buffer, opts: { masked: boolean; declared?: number }): Buffer {
  const length = opts.declared ?? payload.length;
  let head: Buffer;
  if (length < 126) head = Buffer.from([0x80 | opcode, (opts.masked ? 0x80 : 0) | length]);
  else {
    head = Buffer.alloc(10);
    head[0] = 0x80 | opcode;
    head[1] = (opts.masked ? 0x80 : 0) | 127;
    head.writeBigUInt64BE(BigInt(length), 2);
  }
  if (!opts.masked) return Buffer.concat([head, payload]);
  const key = Buffer.from([9, 8, 7, 6]);
  return Buffer.concat([head, key, Buffer.from(payload.map((b, i) => b ^ key[i % 4]!))]);
}

describe('one malformed WebSocket frame closes that socket alone', () => {
  it.each([
    ['invalid UTF-8 in a text frame', frame(0x1, Buffer.from([0xce, 0xba, 0xe1, 0xbd, 0xf4, 0x90]), { masked: true }), 1007],
    ['an unmasked client frame', frame(0x1, Buffer.from('{"x":1}'), { masked: false }), 1002],
    ['an unknown opcode', frame(0x3, Buffer.from('x'), { masked: true }), 1002],
    ['a frame over the size limit', frame(0x2, Buffer.alloc(16), { masked: true, declared: 10 * 1024 * 1024 }), 1009],
  ])('%s: the server closes it (close code %i, or drops it) and keeps serving', async (_name, bytes, code) => {
    const answered = await sendRawFrame(bytes);
    // ws answers a protocol error with a close frame naming it, or drops the socket; never leaves it open.
    expect(answered === code || answered === 'closed', `answered ${String(answered)}`).toBe(true);
    await stillServing();
    // And a well-behaved client still connects and is pushed to.
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws?token=${encodeURIComponent(server.token)}`);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.close();
  });
});

describe('request body limits', () => {
  it('8 MB for a request, a whole run bundle for run.import', async () => {
    const big = JSON.stringify({ text: `{"reqonRunBundle": 1, "pad": "${'x'.repeat(9 * 1024 * 1024)}"}` });
    // Refused mid-body: the 400 naming the limit, or the socket dropped before the client reads it.
    const list = await api('runs.list', big).catch((e: NodeJS.ErrnoException) => ({ status: e.code ?? 'error', body: '' }));
    if (list.status === 400) expect(list.body).toMatch(/request body larger than 8388608 bytes/);
    else expect(list.status).toMatch(/ECONNRESET|EPIPE/);
    const imported = await api('run.import', big);
    expect(imported.status).toBe(400);
    // Read whole and judged as a bundle: it is refused for what it is, not for its size.
    expect(imported.body).toMatch(/not a run bundle the studio can open: run: expected an object/);
    await stillServing();
  });
});

describe('request fields out of range', () => {
  it.each([
    ['runs.list', '{"limit":1e308}', 'limit'],
    ['runs.list', '{"limit":-1}', 'limit'],
    ['runs.list', '{"limit":1.5}', 'limit'],
    ['runs.list', '{"limit":"10"}', 'limit'],
    ['runs.list', '{"offset":-1}', 'offset'],
    ['runs.list', '{"status":"done"}', 'status'],
    ['runs.list', `{"text":"${'x'.repeat(201)}"}`, 'text'],
    ['runs.list', '{"text":7}', 'text'],
    ['runs.list', '{"oldestFirst":"yes"}', 'oldestFirst'],
    ['run.get', '{"runId":7}', 'runId'],
  ])('%s %s → 400 naming "%s"', async (channel, body, field) => {
    const reply = await api(channel, body);
    expect(reply.status, reply.body).toBe(400);
    expect(JSON.parse(reply.body)).toMatchObject({ code: 'bad-request', message: expect.stringContaining(`"${field}"`) });
  });
});
