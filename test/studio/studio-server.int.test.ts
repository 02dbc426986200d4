/**
 * The browser transport's security and plumbing, against a real server on 127.0.0.1 and a real
 * (empty) SQLite log: token, Host, Origin, traversal, content types, and a WebSocket push.
 */
import fs from 'node:fs';
import http from 'node:http';
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
    const req = http.request({ host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe('studio server', () => {
  let dir: string;
  let service: StudioService;
  let server: StudioServer;
  let api: (channel: string, body: unknown, headers?: Record<string, string>) => Promise<Reply>;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-studio-server-'));
    const staticDir = path.join(dir, 'dist');
    fs.mkdirSync(path.join(staticDir, 'assets'), { recursive: true });
    fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>studio</title>');
    fs.writeFileSync(path.join(staticDir, 'assets', 'app.js'), 'console.log(1)');
    fs.writeFileSync(path.join(staticDir, 'assets', 'app.css'), 'body{}');
    fs.writeFileSync(path.join(dir, 'secret.txt'), 'do not serve');
    service = await createStudioService({ dbPath: path.join(dir, 'reqon.db'), cliPath: path.join(__dirname, 'fixtures', 'fake-cli.mjs'), cwd: dir });
    server = await startStudioServer({ service, staticDir });
    api = (channel, body, headers = {}) =>
      request(server.port, {
        method: 'POST',
        path: `/api/${channel}`,
        headers: { host: `127.0.0.1:${server.port}`, 'content-type': 'application/json', 'x-reqon-token': server.token, ...headers },
        body: JSON.stringify(body),
      });
  });

  afterAll(async () => {
    await server.close();
    await service.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prints a loopback URL with the token', () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${encodeURIComponent(server.token)}`);
    expect(server.token.length).toBeGreaterThanOrEqual(32);
  });

  it('answers a request with the right token', async () => {
    const reply = await api('runs.list', {});
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({ runs: [], total: 0 });
    expect(reply.headers['referrer-policy']).toBe('no-referrer');
  });

  it('refuses a missing or wrong token with 401', async () => {
    expect((await api('runs.list', {}, { 'x-reqon-token': '' })).status).toBe(401);
    const wrong = await api('runs.list', {}, { 'x-reqon-token': 'x'.repeat(server.token.length) });
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body)).toMatchObject({ code: 'unauthorized', retryable: false });
  });

  it('refuses a foreign Host (DNS rebinding) and a cross-site Origin', async () => {
    expect((await api('runs.list', {}, { host: `evil.example:${server.port}` })).status).toBe(421);
    expect((await request(server.port, { path: '/', headers: { host: 'evil.example' } })).status).toBe(421);
    expect((await api('runs.list', {}, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await api('runs.list', {}, { origin: `http://localhost:${server.port}`, host: `localhost:${server.port}` })).status).toBe(200);
  });

  it('turns service errors into ProtocolErrors with a matching status', async () => {
    const missing = await api('run.get', { runId: 'nope' });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toEqual({ code: 'not-found', message: expect.stringContaining('nope'), retryable: false });
    const bad = await api('run.stateAt', { runId: 5 });
    expect(bad.status).toBe(400);
    expect((await api('run.delete', {})).status).toBe(404);
    const notJson = await request(server.port, {
      method: 'POST',
      path: '/api/runs.list',
      headers: { host: `127.0.0.1:${server.port}`, 'content-type': 'text/plain', 'x-reqon-token': server.token },
      body: '{}',
    });
    expect(notJson.status).toBe(415);
  });

  it('serves the build with content types and no traversal', async () => {
    const host = { host: `127.0.0.1:${server.port}` };
    const index = await request(server.port, { path: '/', headers: host });
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(index.headers['content-security-policy']).toContain("default-src 'self'");
    expect((await request(server.port, { path: '/assets/app.js', headers: host })).headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await request(server.port, { path: '/assets/app.css', headers: host })).headers['content-type']).toBe('text/css; charset=utf-8');
    for (const p of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt', '/..%5csecret.txt', '/assets', '/nope.js']) {
      const reply = await request(server.port, { path: p, headers: host });
      expect(reply.status, p).toBe(404);
      expect(reply.body).not.toContain('do not serve');
    }
  });

  it('pushes over the WebSocket only with the token', async () => {
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws?token=wrong`);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('error', () => undefined);
    });
    expect(refused).toBe(401);

    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws?token=${encodeURIComponent(server.token)}`);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const message = new Promise<{ channel: string; payload: { runId: string; signal: string | null } }>((resolve) => {
      ws.on('message', (data) => {
        const parsed = JSON.parse(String(data)) as { channel: string; payload: { runId: string; signal: string | null } };
        if (parsed.channel === 'process.exited') resolve(parsed);
      });
    });
    fs.writeFileSync(path.join(dir, 'm.vague'), 'mission M { source Api { auth: none, base: "http://127.0.0.1:1" } action A { get "/x" } run A }');
    const started = await api('run.start', { missionPath: 'm.vague', crashAt: 'before-effect' });
    expect(started.status).toBe(200);
    const { runId } = JSON.parse(started.body) as { runId: string };
    const pushed = await message;
    expect(pushed.payload).toMatchObject({ runId, signal: 'SIGKILL' });
    ws.close();
  });
});
