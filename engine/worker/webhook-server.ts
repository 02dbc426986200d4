/**
 * The webhook endpoint of `reqon worker --listen PORT` (127.0.0.1 by default).
 *
 * A delivery is committed durably to the log's inbox BEFORE the sender gets its 2xx; deliveries
 * are deduplicated by their delivery id (`Idempotency-Key`, `X-Webhook-Id` or `X-Delivery-Id`
 * header, else a hash of path and body), so a sender's retry is consumed once. A delivery may
 * arrive before its run reaches the `wait`: it waits in the inbox. Accepted paths are those a live
 * run can wait on (its mission's `wait { path }` and `pause { resumeOn: webhook "…" }`, and the
 * generated paths of registered waits); others get 404.
 *
 * Optional HMAC: with a secret configured (`REQON_WEBHOOK_SECRET`, never the mission), a delivery
 * must carry `X-Reqon-Signature: sha256=<hex HMAC of the raw body>`.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Env } from '../env/env.js';
import { modelFor, pendingPause, RunUnavailableError, resumeSuspendedRun } from '../executor/run-mission.js';
import type { EventLog } from '../log/log.js';
import type { Step } from '../lang/ast.js';
import type { Worker } from './worker.js';

export const DEFAULT_MAX_BODY = 1024 * 1024;

export interface WebhookServerOptions {
  log: EventLog;
  env: Env;
  worker: Worker;
  dataDir: string;
  host?: string;
  port: number;
  secret?: string;
  maxBodyBytes?: number;
  progress?: (line: string) => void;
}

export interface WebhookServer {
  url: string;
  close(): Promise<void>;
}

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const server: Server = createServer((req, res) => {
    handle(req, res, options).catch((error: unknown) => {
      options.progress?.(`webhook error: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) reply(res, 500, { error: 'internal error' });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.address}:${address.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, o: WebhookServerOptions): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/health') return reply(res, 200, { ok: true });
  if (req.method !== 'POST' && req.method !== 'PUT') return reply(res, 405, { error: 'webhooks are delivered with POST or PUT' });

  const raw = await readBody(req, o.maxBodyBytes ?? DEFAULT_MAX_BODY);
  if (raw === null) return reply(res, 413, { error: `payload larger than ${o.maxBodyBytes ?? DEFAULT_MAX_BODY} bytes` });
  if (o.secret && !signatureOk(raw, req.headers['x-reqon-signature'], o.secret)) {
    return reply(res, 401, { error: 'missing or wrong X-Reqon-Signature (sha256=<hex HMAC of the body>)' });
  }
  let payload: unknown = null;
  if (raw.length > 0) {
    try {
      payload = JSON.parse(raw.toString('utf8'));
    } catch {
      return reply(res, 400, { error: 'the body is not JSON' });
    }
  }
  const path = url.pathname;
  const eventId = deliveryId(req, path, raw);
  const known = await knownPaths(o.log);
  if (!known.has(path)) {
    // A sender retrying a delivery we already took gets the same answer, even after its run ended.
    if (await o.log.webhookDelivered(path, eventId)) return reply(res, 202, { accepted: true, eventId, duplicate: true });
    return reply(res, 404, { error: `no run waits on ${path}` });
  }

  const outcome = await o.log.deliverWebhook(path, eventId, payload, o.env.clock.now());
  // Durable from here: acknowledge, then wake whoever waits.
  reply(res, 202, { accepted: true, eventId, duplicate: outcome === 'duplicate' });
  if (outcome === 'accepted') await wake(path, payload, o);
}

/** Wake the runs this delivery concerns: waits on `path`, and pauses resumed by it. */
async function wake(path: string, payload: unknown, o: WebhookServerOptions): Promise<void> {
  const suspended = await o.log.listRuns({ status: 'suspended', limit: 1000 });
  for (const run of suspended) {
    if (run.waitingOn === `wait:${path}`) {
      await o.worker.start(run);
      continue;
    }
    const created = await pendingPause(o.log, run);
    if (created?.payload.webhookPath !== path) continue;
    try {
      await resumeSuspendedRun(run, { by: 'webhook', payload }, { log: o.log, env: o.env, dataDir: o.dataDir });
    } catch (error) {
      if (error instanceof RunUnavailableError) continue;
      throw error;
    }
    const current = await o.log.getRun(run.runId);
    if (current) await o.worker.start(current);
  }
}

/** Webhook paths that runs which have not finished can wait on. */
async function knownPaths(log: EventLog): Promise<Set<string>> {
  const paths = new Set<string>();
  const live = [...(await log.listRuns({ status: 'running', limit: 1000 })), ...(await log.listRuns({ status: 'suspended', limit: 1000 }))];
  const seen = new Set<string>();
  for (const run of live) {
    if (run.waitingOn?.startsWith('wait:')) paths.add(run.waitingOn.slice('wait:'.length));
    if (seen.has(run.missionHash)) continue;
    seen.add(run.missionHash);
    try {
      for (const p of missionWebhookPaths(run.missionHash, () => modelFor(run.missionFiles).mission.actions.flatMap((a) => a.steps))) paths.add(p);
    } catch {
      // A run whose mission no longer parses cannot wait on anything new.
    }
  }
  return paths;
}

const pathCache = new Map<string, string[]>();

function missionWebhookPaths(hash: string, steps: () => Step[]): string[] {
  let cached = pathCache.get(hash);
  if (!cached) {
    cached = [];
    const visit = (list: readonly Step[]): void => {
      for (const s of list) {
        if (s.kind === 'Wait' && s.path) cached!.push(s.path.value);
        if (s.kind === 'Pause') for (const t of s.resumeOn) if (t.kind === 'webhook') cached!.push(t.path.value);
        if (s.kind === 'For') visit(s.body);
        if (s.kind === 'Validate' && s.fallback) visit(s.fallback);
        if (s.kind === 'Match') for (const arm of s.arms) if (arm.body.kind === 'Steps') visit(arm.body.steps);
      }
    };
    visit(steps());
    pathCache.set(hash, cached);
  }
  return cached;
}

function deliveryId(req: IncomingMessage, path: string, raw: Buffer): string {
  for (const name of ['idempotency-key', 'x-webhook-id', 'x-delivery-id']) {
    const value = req.headers[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  return `sha256:${createHash('sha256').update(path).update('\u0000').update(raw).digest('hex')}`;
}

function signatureOk(raw: Buffer, header: string | string[] | undefined, secret: string): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(raw).digest('hex'));
  const given = Buffer.from(header.slice('sha256='.length));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooBig = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooBig = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(tooBig ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
