/**
 * Property: whatever a sender (or a page in a browser) throws at the webhook endpoint — any
 * method, path, content type, Origin / Sec-Fetch-Site / Host, signature headers, JSON or not,
 * deep or huge bodies — the answer is a 2xx or a clear 4xx with a reason (never a 5xx, which
 * senders retry for ever), the server keeps serving, and a delivery is in the inbox only if it
 * was acknowledged with a 202.
 */
import fc from 'fast-check';
import fs from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRealEnv } from '../../engine/env/real-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import type { EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { startWebhookServer, type WebhookServer } from '../../engine/worker/webhook-server.js';
import { signWebhook, webhookKey } from '../../engine/worker/webhook-security.js';
import { Worker } from '../../engine/worker/worker.js';

const SECRET = 'fuzz-webhook-secret-0123456789';
const MISSION = `mission Parked {
  action A {
    pause { duration: "1h" }
    wait { path: "/in" }
  }
  run A
}
`;

let dir: string;
let log: EventLog;
let plain: WebhookServer;
let signed: WebhookServer;
const env = createRealEnv({});

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-webhook-fuzz-'));
  log = await openLog(path.join(dir, 'log.db'));
  const file = path.join(dir, 'parked.vague');
  fs.writeFileSync(file, MISSION);
  await startRun({ entry: file, files: [{ path: file, text: MISSION }] }, { sources: {}, env: {} }, { log, env, dataDir: path.join(dir, 'data') });
  const worker = new Worker({ log, env, dataDir: path.join(dir, 'data'), owner: 'fuzz', schedules: false });
  const common = { log, env, worker, dataDir: path.join(dir, 'data'), port: 0, maxBodyBytes: 64 * 1024, inbox: { maxPerPath: 50 } };
  plain = await startWebhookServer(common);
  signed = await startWebhookServer({ ...common, secret: SECRET });
});

afterAll(async () => {
  await plain?.close();
  await signed?.close();
  await log?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: string;
}

function send(base: string, method: string, hookPath: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // An explicit length: Node frames no body of a GET by default, and stray bytes are a new request.
    const req = request(new URL(hookPath, base), { method, headers: { 'content-length': String(body.length), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const bodyArb = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
  fc.string({ maxLength: 100 }).map((s) => Buffer.from(s)),
  fc.uint8Array({ maxLength: 100 }).map((b) => Buffer.from(b)),
  fc.integer({ min: 200, max: 6000 }).map((n) => Buffer.from(`${'['.repeat(n)}${']'.repeat(n)}`)),
  fc.constant(Buffer.alloc(70 * 1024, 0x20)),
);

const caseArb = fc.record({
  signedServer: fc.boolean(),
  method: fc.constantFrom('POST', 'PUT', 'GET', 'DELETE', 'PATCH'),
  path: fc.constantFrom('/in', '/in', '/nobody', '/health', '/in?x=1', '/%2e%2e/in'),
  contentType: fc.option(fc.constantFrom('application/json', 'application/cloudevents+json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'), { nil: undefined }),
  origin: fc.option(fc.constantFrom('https://evil.example', 'null', 'http://127.0.0.1'), { nil: undefined }),
  fetchSite: fc.option(fc.constantFrom('none', 'same-origin', 'cross-site', 'same-site'), { nil: undefined }),
  foreignHost: fc.boolean(),
  signature: fc.constantFrom('none', 'good', 'bad', 'stale'),
  id: fc.stringMatching(/^[a-z0-9_]{1,12}$/),
  body: bodyArb,
});

describe('the webhook endpoint under fuzz', () => {
  it('answers 2xx or a clear 4xx, keeps serving, and stores only what it acknowledged', async () => {
    const acknowledged = new Set<string>();
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const server = c.signedServer ? signed : plain;
        const headers: Record<string, string> = {};
        if (c.contentType) headers['content-type'] = c.contentType;
        if (c.origin) headers['origin'] = c.origin;
        if (c.fetchSite) headers['sec-fetch-site'] = c.fetchSite;
        if (c.foreignHost) headers['host'] = 'evil.example';
        headers['idempotency-key'] = c.id;
        if (c.signature !== 'none') {
          const ts = String(Math.floor(Date.now() / 1000) - (c.signature === 'stale' ? 3600 : 0));
          headers['webhook-id'] = c.id;
          headers['webhook-timestamp'] = ts;
          headers['webhook-signature'] = c.signature === 'bad' ? 'v1,AAAA' : signWebhook(webhookKey(SECRET), c.id, ts, c.body);
        }
        const answer = await send(server.url, c.method, c.path, headers, c.body);
        expect(answer.status, answer.body).toBeGreaterThanOrEqual(200);
        expect(answer.status, answer.body).toBeLessThan(500);
        if (answer.status >= 400) expect(JSON.parse(answer.body)).toHaveProperty('error');
        if (answer.status === 202) acknowledged.add(c.id);
        const health = await send(server.url, 'GET', '/health', {}, Buffer.alloc(0));
        expect(health.status).toBe(200);
      }),
      { numRuns: 250, seed: 1314 },
    );
    for (const delivery of await log.webhookInbox('/in')) expect(acknowledged).toContain(delivery.eventId);
  });
});
