/**
 * The webhook endpoint as a locked door (webhook-security.ts), served in-process on 127.0.0.1
 * against a real SQLite log: requests from web pages (Origin, Sec-Fetch-Site, form/text content
 * types) and foreign Host headers are refused before anything is stored; off loopback the server
 * does not start without a secret; signed deliveries follow Standard Webhooks — a stale timestamp,
 * a resend under a new Idempotency-Key, and the same delivery replayed to another path are not
 * taken as new; a too-deep body is a 400; the inbox is capped per path and forgets what no run
 * claimed in time. A path is taken as sent, never resolved as a URL (`//shop/pay`, dot segments:
 * 400); a body must be UTF-8 JSON, uncompressed (415, 400); a secret that is no key does not start
 * the server; a loopback address other than 127.0.0.1 answers at its own URL (helper 96).
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../engine/env/fake-env.js';
import { createRealEnv } from '../../engine/env/real-env.js';
import { startRun } from '../../engine/executor/run-mission.js';
import { exportRunText, importBundle, parseBundle } from '../../engine/executor/run-bundle.js';
import type { EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { startWebhookServer, WebhookConfigError, type WebhookServer, type WebhookServerOptions } from '../../engine/worker/webhook-server.js';
import { signWebhook, webhookKey } from '../../engine/worker/webhook-security.js';
import { Worker } from '../../engine/worker/worker.js';

const SECRET = `whsec_${Buffer.from('a secret of thirty-two bytes long').toString('base64')}`;
/** Paths a run's mission names but that nobody claims yet: the run sleeps in a pause first. */
const PARKED = `mission Parked {
  action A {
    pause { duration: "1h" }
    wait { path: "/pay" }
    wait { path: "/refund" }
    wait { path: "/cap" }
    wait { path: "/bound" }
    wait { path: "/aged" }
  }
  run A
}
`;

let dir: string;
let log: EventLog;
const env = createRealEnv({});
const servers: WebhookServer[] = [];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-webhook-security-'));
  log = await openLog(path.join(dir, 'log.db'));
  const file = path.join(dir, 'parked.vague');
  fs.writeFileSync(file, PARKED);
  const result = await startRun({ entry: file, files: [{ path: file, text: PARKED }] }, { sources: {}, env: {} }, { log, env, dataDir: path.join(dir, 'data') });
  expect(result.status).toBe('suspended');
});

afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

afterAll(async () => {
  await log?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function serve(extra: Partial<WebhookServerOptions> = {}): Promise<string> {
  const worker = new Worker({ log, env, dataDir: path.join(dir, 'data'), owner: 'test', schedules: false });
  const server = await startWebhookServer({ log, env, worker, dataDir: path.join(dir, 'data'), port: 0, ...extra });
  servers.push(server);
  return server.url;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

/** A raw POST (node:http, so Host and Origin are ours to set). */
function post(base: string, hookPath: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const target = new URL(hookPath, base);
  return new Promise((resolve, reject) => {
    const req = request(target, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function signed(id: string, body: string, timestampSeconds = Math.floor(Date.now() / 1000)): Record<string, string> {
  const ts = String(timestampSeconds);
  return { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': signWebhook(webhookKey(SECRET), id, ts, Buffer.from(body)) };
}

const ids = async (p: string) => (await log.webhookInbox(p)).map((d) => d.eventId);

/** A POST whose request line carries `rawPath` byte for byte (no URL resolving it first). */
function postRaw(base: string, rawPath: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Answer> {
  const target = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, path: rawPath, method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('requests from web pages and foreign hosts', () => {
  it('refuses an Origin header, a cross-site Sec-Fetch-Site, a non-JSON content type and a foreign Host, storing nothing', async () => {
    const url = await serve();
    const port = new URL(url).port;
    const body = '{"paid":true}';
    expect((await post(url, '/pay', body, { origin: 'https://evil.example', 'idempotency-key': 'o1' })).status).toBe(403);
    expect((await post(url, '/pay', body, { 'sec-fetch-site': 'cross-site', 'idempotency-key': 'o2' })).status).toBe(403);
    expect((await post(url, '/pay', body, { 'content-type': 'text/plain', 'idempotency-key': 'o3' })).status).toBe(415);
    expect((await post(url, '/pay', body, { 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': 'o4' })).status).toBe(415);
    expect((await post(url, '/pay', body, { host: `evil.example:${port}`, 'idempotency-key': 'o5' })).status).toBe(421);
    expect(await ids('/pay')).toEqual([]);
    // The same delivery from a program (no Origin, JSON, right Host) is taken.
    const ok = await post(url, '/pay', body, { 'idempotency-key': 'o6', 'sec-fetch-site': 'none' });
    expect(ok.status).toBe(202);
    expect(await ids('/pay')).toEqual(['o6']);
  });

  it('takes browser requests only when allowed', async () => {
    const url = await serve({ allowBrowsers: true });
    expect((await post(url, '/pay', '{}', { origin: 'https://app.example', 'idempotency-key': 'b1' })).status).toBe(202);
  });

  it('does not start on a non-loopback address without a secret', async () => {
    await expect(serve({ host: '0.0.0.0' })).rejects.toBeInstanceOf(WebhookConfigError);
    await expect(serve({ host: '0.0.0.0' })).rejects.toThrow(/REQON_WEBHOOK_SECRET/);
  });
});

describe('Standard Webhooks signatures', () => {
  it('accepts a signed delivery once, under its signed id whatever Idempotency-Key says', async () => {
    const url = await serve({ secret: SECRET });
    const body = '{"amount":5}';
    expect((await post(url, '/refund', body)).status).toBe(401);
    expect((await post(url, '/refund', body, { ...signed('msg_1', body), 'webhook-signature': 'v1,AAAA' })).status).toBe(401);
    const first = await post(url, '/refund', body, { ...signed('msg_1', body), 'idempotency-key': 'k1' });
    expect({ status: first.status, body: first.body }).toEqual({ status: 202, body: { accepted: true, eventId: 'msg_1', duplicate: false } });
    const again = await post(url, '/refund', body, { ...signed('msg_1', body), 'idempotency-key': 'k2-new' });
    expect(again.body).toEqual({ accepted: true, eventId: 'msg_1', duplicate: true });
    expect(await ids('/refund')).toEqual(['msg_1']);
  });

  it('refuses a signature outside the tolerance window', async () => {
    const url = await serve({ secret: SECRET });
    const body = '{"late":true}';
    const stale = await post(url, '/refund', body, signed('msg_old', body, Math.floor(Date.now() / 1000) - 3600));
    expect(stale.status).toBe(401);
    expect(String(stale.body['error'])).toContain('webhook-timestamp');
    expect(await ids('/refund')).not.toContain('msg_old');
  });

  it('refuses a signed delivery replayed to another path', async () => {
    const url = await serve({ secret: SECRET });
    const body = '{"payment":1}';
    const headers = signed('msg_pay', body);
    expect((await post(url, '/pay', body, headers)).status).toBe(202);
    const replayed = await post(url, '/refund', body, headers);
    expect(replayed.status).toBe(409);
    expect(await ids('/refund')).not.toContain('msg_pay');
  });
});

describe('bodies and the inbox', () => {
  it('answers a body nested deeper than the limit with a 400, not a 500', async () => {
    const url = await serve();
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const answer = await post(url, '/pay', deep, { 'idempotency-key': 'deep' });
    expect(answer.status).toBe(400);
    expect(String(answer.body['error'])).toContain('nested deeper than 256 levels');
  });

  it('holds at most maxPerPath unclaimed deliveries per path, and forgets them after maxAgeMs', async () => {
    const clock = new FakeClock(Date.now());
    const url = await serve({ env: { ...env, clock }, inbox: { maxPerPath: 2, maxAgeMs: 60_000 } });
    expect((await post(url, '/cap', '{}', { 'idempotency-key': 'c1' })).status).toBe(202);
    expect((await post(url, '/cap', '{}', { 'idempotency-key': 'c2' })).status).toBe(202);
    const full = await post(url, '/cap', '{}', { 'idempotency-key': 'c3' });
    expect(full.status).toBe(429);
    expect(String(full.headers['retry-after']), 'a 429 says when to come back').toMatch(/^[1-9]\d*$/);
    // A retry of one it holds is still acknowledged as such.
    expect((await post(url, '/cap', '{}', { 'idempotency-key': 'c2' })).body['duplicate']).toBe(true);
    expect(await ids('/cap')).toEqual(['c1', 'c2']);
    await clock.advance(61_000);
    expect((await post(url, '/cap', '{}', { 'idempotency-key': 'c3' })).status).toBe(202);
    expect(await ids('/cap')).toEqual(['c3']);
  });
});

describe('the inbox bounds by default (what `reqon worker` runs without --inbox-max or --inbox-expiry-hours)', () => {
  it('holds 1,000 unclaimed deliveries per path: the 1,001st is 429 with Retry-After', async () => {
    const url = await serve();
    for (let i = 1; i <= 1000; i++) {
      const answer = await post(url, '/bound', '{}', { 'idempotency-key': `b${i}` });
      expect(answer.status, `delivery ${i}`).toBe(202);
    }
    const past = await post(url, '/bound', '{}', { 'idempotency-key': 'b1001' });
    expect(past.status).toBe(429);
    expect(String(past.headers['retry-after'])).toMatch(/^[1-9]\d*$/);
    expect(await ids('/bound')).toHaveLength(1000);
  }, 120_000);

  it('keeps an unclaimed delivery 168 hours: the sweep a server makes as it starts drops it only past that', async () => {
    const clock = new FakeClock(Date.now());
    const url = await serve({ env: { ...env, clock } });
    expect((await post(url, '/aged', '{}', { 'idempotency-key': 'old' })).status).toBe(202);
    for (const s of servers.splice(0)) await s.close();
    await clock.advance(167 * 3_600_000);
    await serve({ env: { ...env, clock } });
    expect(await eventually(() => ids('/aged'))).toEqual(['old']);
    for (const s of servers.splice(0)) await s.close();
    await clock.advance(2 * 3_600_000);
    await serve({ env: { ...env, clock } });
    expect(await eventually(() => ids('/aged'), (held) => held.length === 0)).toEqual([]);
  });
});

/** `read()` once `done` holds of it (the start-up sweep is not awaited by startWebhookServer), else its last value after 2 s. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean = () => true): Promise<T> {
  const until = Date.now() + 2_000;
  let value = await read();
  while (!done(value) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    value = await read();
  }
  return value;
}

describe('a delivery with no id of its sender', () => {
  it("is the same delivery when its body comes again that day or the next, a new one later (helper 75: next week's was dropped as a duplicate)", async () => {
    const clock = new FakeClock(Date.UTC(2026, 11, 7, 12));
    const url = await serve({ env: { ...env, clock } });
    const body = '{"approved":true}';
    const first = await post(url, '/pay', body);
    expect(first.status).toBe(202);
    expect(first.body['duplicate']).toBe(false);
    await clock.advance(13 * 3600_000); // past midnight: the next day
    expect((await post(url, '/pay', body)).body).toEqual({ ...first.body, duplicate: true });
    await clock.advance(7 * 24 * 3600_000);
    const later = await post(url, '/pay', body);
    expect(later.status).toBe(202);
    expect(later.body['duplicate']).toBe(false);
    expect(later.body['eventId']).not.toBe(first.body['eventId']);
  });

  it('a retry of one taken before ids were dated is the same delivery while its sender may retry it, not for ever (helpers 76, 77)', async () => {
    // Dated from this engine's release, 2026-12-05 (webhook-server.ts DATED_FROM).
    const clock = new FakeClock(Date.UTC(2026, 11, 5, 18));
    const url = await serve({ env: { ...env, clock } });
    const body = '{"legacy":true}';
    const undated = `sha256:${createHash('sha256').update('/pay').update('\u0000').update(body).digest('hex')}`;
    expect(await log.deliverWebhook('/pay', undated, JSON.parse(body), clock.now())).toBe('accepted');
    expect((await post(url, '/pay', body)).body).toEqual({ accepted: true, eventId: undated, duplicate: true });
    await clock.advance(3 * 24 * 3600_000);
    expect((await post(url, '/pay', body)).body['duplicate']).toBe(false);
  });
});

describe('the health path', () => {
  it('answers GET /health, and takes a POST to /health as a delivery when a run can wait there', async () => {
    // Before, any request to /health got 200 {"ok":true}: a delivery there was acknowledged and lost.
    const text = PARKED.replace('mission Parked', 'mission ParkedHealth').replace('wait { path: "/pay" }', 'wait { path: "/health" }');
    const file = path.join(dir, 'parked-health.vague');
    fs.writeFileSync(file, text);
    const result = await startRun({ entry: file, files: [{ path: file, text }] }, { sources: {}, env: {} }, { log, env, dataDir: path.join(dir, 'data') });
    expect(result.status).toBe('suspended');
    const url = await serve();
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true });
    const delivered = await post(url, '/health', '{"n":1}', { 'idempotency-key': 'health-1' });
    expect({ status: delivered.status, body: delivered.body }).toEqual({ status: 202, body: { accepted: true, eventId: 'health-1', duplicate: false } });
    expect(await ids('/health')).toEqual(['health-1']);
  });
});

describe('what a delivery must be (helper 96)', () => {
  it('a path as sent: //host/path and dot segments are refused, never resolved onto another wait', async () => {
    const url = await serve();
    for (const raw of ['//shop/pay', '/x/../pay', '/x/%2e%2e/pay', '/./pay', '/a//pay']) {
      const answer = await postRaw(url, raw, '{}', { 'idempotency-key': `p-${raw}` });
      expect(answer.status, raw).toBe(400);
      expect(String(answer.body['error'])).toContain('not a webhook path');
    }
    expect(await ids('/pay')).not.toContain('p-//shop/pay');
  });

  it('a body of UTF-8 JSON, uncompressed: another charset, a compressed body or bytes that are not UTF-8 are refused; a byte-order mark is not', async () => {
    const url = await serve();
    expect((await postRaw(url, '/cap', Buffer.from('{"n":"caf\xe9"}', 'latin1'), { 'content-type': 'application/json; charset=iso-8859-1', 'idempotency-key': 'c1' })).status).toBe(415);
    expect((await postRaw(url, '/cap', Buffer.from('{"n":"caf\xe9"}', 'latin1'), { 'idempotency-key': 'c2' })).status).toBe(400);
    expect((await postRaw(url, '/cap', '{"n":1}', { 'content-encoding': 'gzip', 'idempotency-key': 'c3' })).status).toBe(415);
    const bom = await postRaw(url, '/cap', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"n":"café"}')]), { 'content-type': 'application/json; charset=utf-8', 'idempotency-key': 'c4' });
    expect(bom.status).toBe(202);
    expect((await log.webhookInbox('/cap')).find((d) => d.eventId === 'c4')?.payload).toEqual({ n: 'café' });
  });

  it('what is valid still is (helper 97): the absolute form of a request line, charset=us-ascii, a secret read with its trailing newline', async () => {
    const url = await serve();
    const port = new URL(url).port;
    expect((await postRaw(url, `http://127.0.0.1:${port}/cap?x=1`, '{"n":2}', { 'idempotency-key': 'a1' })).status).toBe(202);
    expect(await ids('/cap')).toContain('a1');
    expect((await postRaw(url, '/cap', '{"n":3}', { 'content-type': 'application/json; charset=US-ASCII', 'idempotency-key': 'a2' })).status).toBe(202);
    const signedUrl = await serve({ secret: `${SECRET}\n` });
    const body = '{"amount":6}';
    expect((await post(signedUrl, '/refund', body, signed('msg_newline', body))).status).toBe(202);
  });

  it('a secret that is no key does not start the server', async () => {
    for (const secret of ['whsec_', 'whsec_!!!!', 'whsec_QQ', '   ']) await expect(serve({ secret }), secret).rejects.toBeInstanceOf(WebhookConfigError);
  });

  it("an imported run's generated wait path is no path a run waits on: 404, not a delivery kept for ever", async () => {
    const other = await openLog(path.join(dir, 'exporter.db'));
    let text = '';
    try {
      const file = path.join(dir, 'generated.vague');
      const mission = 'mission Gen {\n  action A {\n    wait { timeout: 600000 }\n  }\n  run A\n}\n';
      fs.writeFileSync(file, mission);
      const waiting = await startRun({ entry: file, files: [{ path: file, text: mission }] }, { sources: {}, env: {} }, { log: other, env, dataDir: path.join(dir, 'data') });
      expect(waiting.status).toBe('suspended');
      for await (const chunk of exportRunText(other, waiting.runId)) text += chunk;
    } finally {
      await other.close();
    }
    const imported = await importBundle(log, parseBundle(text));
    const registered = (await log.read(imported.runId)).find((e) => e.type === 'wait.registered');
    const hook = (registered?.payload as { path: string }).path;
    expect(hook).toMatch(/^\/webhook\/run_/);
    const url = await serve();
    expect((await postRaw(url, hook, '{}', { 'idempotency-key': 'i1' })).status).toBe(404);
    expect(await ids(hook)).toEqual([]);
  });

  it('a loopback address other than 127.0.0.1 answers at the URL it prints', async () => {
    const url = await serve({ host: '127.0.0.2' });
    expect(new URL(url).hostname).toBe('127.0.0.2');
    expect((await postRaw(url, '/pay', '{}', { 'idempotency-key': 'h1' })).status).toBe(202);
  });
});

