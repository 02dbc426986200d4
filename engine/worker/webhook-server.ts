/**
 * The webhook endpoint of `reqon worker --listen PORT` (127.0.0.1 by default).
 *
 * A delivery is committed durably to the log's inbox BEFORE the sender gets its 2xx; deliveries
 * are deduplicated by their delivery id, so a sender's retry is consumed once. A delivery may
 * arrive before its run reaches the `wait`: it waits in the inbox. Accepted paths are those a live
 * run can wait on (its mission's `wait { path }` and `pause { resumeOn: webhook "…" }`, and the
 * generated paths of registered waits); others get 404.
 *
 * Who may deliver is `webhook-security.ts`: no browser pages, the Host checked on loopback, and
 * with a secret (`REQON_WEBHOOK_SECRET`, never the mission; required off loopback) every delivery
 * signed the Standard Webhooks way, its signed `webhook-id` the delivery id. Without a secret (on
 * loopback only) the id is `Idempotency-Key`, `X-Webhook-Id` or `X-Delivery-Id`, else a hash of
 * path and body. Every answer to a bad request is a 4xx with a one-line reason (senders retry a
 * 5xx for ever); the inbox holds at most `inbox.maxPerPath` unclaimed deliveries per path (429
 * past it) and forgets those no run claimed within `inbox.maxAgeMs`.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Env } from '../env/env.js';
import { JsonDepthError, MAX_JSON_DEPTH, parseJsonInput } from '../env/json-input.js';
import { logBusy, logUnreachable } from '../log/errors.js';
import { UnloggableValueError } from '../log/loggable.js';
import { modelFor, RunUnavailableError, resumeSuspendedRun } from '../executor/run-mission.js';
import type { EventLog, RunRecord } from '../log/log.js';
import { timerDueBy } from '../steps/pause-step.js';
import { generatedWaitRunId } from '../steps/wait-step.js';
import type { Step } from '../lang/ast.js';
import { runPages } from './run-pages.js';
import { isLoopback, refuseRequest, verifySignature, webhookKey, WebhookSecretError, type RequestGate } from './webhook-security.js';
import { isImported } from '../executor/run-bundle.js';
import type { Worker } from './worker.js';

export const DEFAULT_MAX_BODY = 1024 * 1024;
export const DEFAULT_INBOX_MAX_PER_PATH = 1000;
export const DEFAULT_INBOX_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
/** How often unclaimed deliveries past their age are swept (besides on each delivery to a path). */
const EXPIRY_SWEEP_MS = 60 * 60 * 1000;

export interface InboxBounds {
  /** Unclaimed deliveries kept per path; a delivery past it gets 429. */
  maxPerPath: number;
  /** Unclaimed deliveries older than this are removed. */
  maxAgeMs: number;
}

export interface WebhookServerOptions {
  log: EventLog;
  env: Env;
  worker: Worker;
  dataDir: string;
  host?: string;
  port: number;
  /** Standard Webhooks secret (`whsec_<base64>` or plain text); required off loopback. */
  secret?: string;
  /** Accept deliveries from browser pages (Origin / Sec-Fetch-Site, any content type). Default false. */
  allowBrowsers?: boolean;
  maxBodyBytes?: number;
  inbox?: Partial<InboxBounds>;
  progress?: (line: string) => void;
}

export interface WebhookServer {
  url: string;
  close(): Promise<void>;
}

/** A configuration the endpoint refuses to start with. */
export class WebhookConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookConfigError';
  }
}

/**
 * What a failed `listen` means to the person who typed `--listen`: a configuration error (the CLI
 * prints it as one line and exits 2), not an internal one. Other errors pass through unchanged.
 */
function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  const at = `${host}:${port}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return new WebhookConfigError(`cannot serve webhooks on ${at}: the port is in use by another program; pick another with --listen PORT (0 picks a free one)`);
    case 'EACCES':
      return new WebhookConfigError(`cannot serve webhooks on ${at}: permission denied (ports below 1024 need privileges); pick another with --listen PORT`);
    case 'EADDRNOTAVAIL':
      return new WebhookConfigError(`cannot serve webhooks on ${at}: ${host} is no address of this machine; pick one with --host`);
    default:
      return error;
  }
}

interface Served extends WebhookServerOptions {
  gate: RequestGate;
  key: Buffer | undefined;
  bounds: InboxBounds;
}

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopback(host) && !options.secret) {
    throw new WebhookConfigError(
      `webhooks on ${host} would let anyone who can reach it complete waiting runs; set REQON_WEBHOOK_SECRET (senders sign with it, Standard Webhooks) or listen on 127.0.0.1`,
    );
  }
  const bounds: InboxBounds = {
    maxPerPath: options.inbox?.maxPerPath ?? DEFAULT_INBOX_MAX_PER_PATH,
    maxAgeMs: options.inbox?.maxAgeMs ?? DEFAULT_INBOX_MAX_AGE_MS,
  };
  let key: Buffer | undefined;
  try {
    key = options.secret !== undefined ? webhookKey(options.secret) : undefined;
  } catch (error) {
    if (error instanceof WebhookSecretError) throw new WebhookConfigError(`REQON_WEBHOOK_SECRET: ${error.message}`);
    throw error;
  }
  const served: Served = { ...options, gate: { host, port: options.port, allowBrowsers: options.allowBrowsers === true }, key, bounds };
  const server: Server = createServer((req, res) => {
    handle(req, res, served).catch((error: unknown) => {
      const said = error instanceof Error ? error.message : String(error);
      options.progress?.(`webhook error: ${said}`);
      if (res.headersSent) return;
      // The log's database is down or restarting: nothing was committed, so nothing is
      // acknowledged — a 503 the sender retries (its delivery is idempotent by event id), not a 500.
      if (logUnreachable(error) || logBusy(error)) {
        res.setHeader('retry-after', '5');
        const why = logBusy(error) ? 'is busy (another process holds its lock)' : 'cannot be reached';
        reply(res, 503, { error: `the run log's database ${why}; nothing was recorded — send it again (${said})` });
        return;
      }
      reply(res, 500, { error: 'internal error' });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, host, options.port)));
    server.listen(options.port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  served.gate.port = address.port;
  const sweep = () => void options.log.expireWebhooks(options.env.clock.now() - bounds.maxAgeMs).catch(() => undefined);
  sweep();
  const sweeper = setInterval(sweep, EXPIRY_SWEEP_MS);
  sweeper.unref();
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(sweeper);
        server.close(() => resolve());
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, o: Served): Promise<void> {
  const refused = refuseRequest(req.headers, o.gate);
  if (refused) return reply(res, refused.status, { error: refused.error });
  const path = requestPath(req.url ?? '/');
  if (path === undefined) return reply(res, 400, { error: 'not a webhook path: it must start with one "/", with no empty, "." or ".." segment' });
  // A health check reads; a POST or PUT to /health is a delivery like any other (a run may wait
  // there), never acknowledged with a 200 and dropped.
  if (path === '/health' && (req.method === 'GET' || req.method === 'HEAD')) return reply(res, 200, { ok: true });
  if (req.method !== 'POST' && req.method !== 'PUT') return reply(res, 405, { error: 'webhooks are delivered with POST or PUT' });

  const limit = o.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const raw = await readBody(req, limit);
  if (raw === null) return reply(res, 413, { error: `payload larger than ${limit} bytes` });
  const now = o.env.clock.now();
  let eventId: string | undefined;
  if (o.key) {
    const verified = verifySignature(req.headers, raw, o.key, now);
    if ('status' in verified) return reply(res, verified.status, { error: verified.error });
    eventId = verified.id;
  }
  let payload: unknown = null;
  if (raw.length > 0) {
    let text: string;
    try {
      text = UTF8.decode(raw); // fatal: bytes that are not UTF-8 are refused, never turned into U+FFFD
    } catch {
      return reply(res, 400, { error: 'the body is not valid UTF-8 (JSON is UTF-8)' });
    }
    try {
      payload = parseJsonInput(text);
    } catch (error) {
      if (error instanceof JsonDepthError) return reply(res, 400, { error: `the body is nested deeper than ${MAX_JSON_DEPTH} levels, the most a run accepts` });
      if (error instanceof UnloggableValueError) return reply(res, 400, { error: `the body ${error.message.replace(/^the JSON /, '')}` });
      return reply(res, 400, { error: 'the body is not JSON' });
    }
  }
  eventId ??= await deliveryId(req, path, raw, now, o.log);
  if (!(await isKnownPath(o.log, path, o.worker))) {
    // A sender retrying a delivery we already took gets the same answer, even after its run ended.
    if (await o.log.webhookDelivered(path, eventId)) return reply(res, 202, { accepted: true, eventId, duplicate: true });
    return reply(res, 404, { error: `no run waits on ${path}` });
  }

  const outcome = await o.log.deliverWebhook(path, eventId, payload, now, {
    maxPerPath: o.bounds.maxPerPath,
    expireBefore: now - o.bounds.maxAgeMs,
    bindId: o.key !== undefined,
  });
  switch (outcome) {
    case 'full':
      res.setHeader('retry-after', '60');
      return reply(res, 429, { error: `${path} already holds ${o.bounds.maxPerPath} deliveries no run has taken; retry later` });
    case 'other-path':
      return reply(res, 409, { error: `webhook-id ${JSON.stringify(eventId)} was delivered to another path; a delivery is bound to one path` });
    case 'duplicate':
      return reply(res, 202, { accepted: true, eventId, duplicate: true });
    case 'accepted':
      // Durable from here: acknowledge, then wake whoever waits.
      reply(res, 202, { accepted: true, eventId, duplicate: false });
      return wake(path, eventId, payload, now, o);
    default: {
      const never: never = outcome;
      throw new Error(`unhandled delivery outcome ${String(never)}`);
    }
  }
}

/** UTF-8 that refuses what is not (a byte-order mark is dropped, as JSON allows a reader to). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The request's path as sent, without its query: never resolved as a URL would (`//shop/x` read
 * as host "shop", path "/x", was delivered to another mission's wait on /x; `/a/%2e%2e/x` became
 * /x: helper 96). One with an empty, `.` or `..` segment (written or percent-encoded) is none.
 */
function requestPath(url: string): string | undefined {
  // The absolute form a proxy sends (`POST http://host:port/hooks/x`, RFC 9112 3.2.2): its path.
  const absolute = /^https?:\/\/[^/?#]*/i.exec(url);
  const target = absolute ? url.slice(absolute[0].length) || '/' : url;
  const path = target.split('?', 1)[0]!.split('#', 1)[0]!;
  if (!path.startsWith('/') || path.includes('\\')) return undefined;
  const segments = path.slice(1).split('/');
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!.replace(/%2e/gi, '.');
    // An empty segment only as the trailing slash of a path (`/hooks/`): `//x` and `/a//b` are none.
    if ((segment === '' && i < segments.length - 1) || segment === '.' || segment === '..') return undefined;
  }
  return path;
}


/** Wake the runs this delivery concerns: waits on `path`, and pauses resumed by it. */
async function wake(path: string, eventId: string, payload: unknown, receivedAt: number, o: WebhookServerOptions): Promise<void> {
  // A generated wait path names its run: woken even when it waits on a sibling branch's wait (a
  // concurrent loop's iterations each waiting), whose delivery would otherwise sit until that one's came.
  const owner = generatedWaitRunId(path);
  if (owner !== undefined) {
    const run = await o.log.getRun(owner);
    // Only while that wait is pending: a late retry to a finished one replayed the whole run for nothing.
    if (run?.status === 'suspended' && run.waitingOn?.startsWith('wait:') && run.waitingOn !== `wait:${path}` && (await o.worker.pendingHooksOf(run)).waitPaths.includes(path)) {
      await o.worker.start(run);
      return;
    }
  }
  // Every suspended run, a page at a time: not only the newest page (runs waiting on people pile up).
  for await (const suspended of runPages(o.log, { status: 'suspended' })) {
    for (const run of suspended) {
      if (run.waitingOn === `wait:${path}`) {
        await o.worker.start(run);
        continue;
      }
      // The pause the run waits on, or another branch's pending with it (a parallel stage whose
      // other action waits on a timer): the delivery resumes it now, not once the timer is due.
      // Another branch's wait on `path` wakes the run to take it, what it waits on left pending.
      const { pauses, waitPaths } = await o.worker.pendingHooksOf(run);
      // A pause whose timer was due when the delivery came was resumed by its timer first (as a
      // wait's timeout comes before a late delivery): the worker carries it on, without it (helper 96).
      const created = pauses.find((e) => e.payload.webhookPath === path && !timerDueBy(e.payload.dueAt, receivedAt));
      if (created === undefined) {
        if (waitPaths.includes(path)) await o.worker.start(run, { wake: true });
        continue;
      }
      try {
        // The delivery is claimed with the resume: one delivery resumes one pause, once.
        await resumeSuspendedRun(run, { by: 'webhook', payload, claim: { path, eventId } }, { log: o.log, env: o.env, dataDir: o.dataDir }, created);
      } catch (error) {
        if (error instanceof RunUnavailableError) continue;
        throw error;
      }
      const current = await o.log.getRun(run.runId);
      if (current) await o.worker.start(current);
      return;
    }
  }
}

/** Whether a run that has not finished can wait on `path`: every such run is looked at, a page at a time, until one can. */
async function isKnownPath(log: EventLog, path: string, worker: Worker): Promise<boolean> {
  // A wait with no `path:` is given /webhook/<run>/<wait id> (wait-step.ts): known while that run
  // has not finished — whether it waits on that wait now or on a sibling branch's, or is running
  // between two of the deliveries an `expectedEvents: 2` wait takes. Its mission names no path.
  // Only a path one of its waits registered: any other text under it (a truncated copy of the URL,
  // an id of no wait) was answered 202, kept where no wait could take it, and woke the run for nothing.
  const owner = generatedWaitRunId(path);
  if (owner !== undefined) {
    const run = await log.getRun(owner);
    // An imported run is read-only: nothing would ever take a delivery for it (helper 96: 202, kept for ever).
    if (run !== undefined && !isImported(run) && (run.status === 'running' || run.status === 'suspended')) {
      // A suspended run's pending waits are known once per suspension: not a read of every wait a
      // concurrent loop of thousands registered, for each of its deliveries.
      if (run.status === 'suspended' && (await worker.pendingHooksOf(run)).waitPaths.includes(path)) return true;
      const events = await log.read(run.runId, { types: ['wait.registered', 'wait.completed'] });
      const ids = new Set(events.flatMap((e) => (e.type === 'wait.registered' && e.payload.path === path ? [e.payload.waitId] : [])));
      // A wait that took its deliveries is done: a new delivery there is one no wait takes (a 404; a
      // retry of one it took is still answered as a duplicate). One that timed out may be waited on
      // again by its action's next attempt, which listens on the same path (wait-step.ts).
      const ended = new Map(events.flatMap((e) => (e.type === 'wait.completed' && ids.has(e.payload.waitId) ? [[e.payload.waitId, e.payload.timedOut] as const] : [])));
      if ([...ids].some((id) => !ended.has(id) || ended.get(id) === true)) return true;
    }
  }
  const seen = new Set<string>();
  // Both statuses in one query: read one after the other, a run that a delivery or a timer
  // resumed (or suspended) in between was in neither, and its delivery answered 404 — lost.
  for await (const live of runPages(log, { status: ['running', 'suspended'] })) {
    for (const run of live) {
      if (isImported(run)) continue;
      if (run.waitingOn === `wait:${path}`) return true;
      if (seen.has(run.missionHash)) continue;
      seen.add(run.missionHash);
      if (canWaitOn(run, path)) return true;
    }
  }
  return false;
}

/** Whether the run's mission has a wait or pause on `path`. */
function canWaitOn(run: RunRecord, path: string): boolean {
  try {
    return missionWebhookPaths(run.missionHash, () => modelFor(run.missionFiles).mission.actions.flatMap((a) => a.steps)).includes(path);
  } catch {
    // A run whose mission no longer parses cannot wait on anything new.
    return false;
  }
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

/**
 * A delivery's id: the sender's (`Idempotency-Key`, `X-Webhook-Id`, `X-Delivery-Id`), or, where it
 * sends none, one made of the path and the body, so a sender's retry of the same body is taken
 * once. Only for a day or two: made of the body alone it lasted until the run that claimed it was
 * pruned, so next week's identical `{"approved": true}` for a new run was answered "duplicate" and
 * dropped, its run waiting for ever (helper 75). So the body's hash is dated by the UTC day it
 * came: a retry the same day or the next is the delivery it repeats; a later one is a new one.
 */
async function deliveryId(req: IncomingMessage, path: string, raw: Buffer, now: number, log: WebhookServerOptions['log']): Promise<string> {
  for (const name of ['idempotency-key', 'x-webhook-id', 'x-delivery-id']) {
    const value = req.headers[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  const body = `sha256:${createHash('sha256').update(path).update('\u0000').update(raw).digest('hex')}`;
  const day = Math.floor(now / DAY_MS);
  const yesterday = `${body}:${day - 1}`;
  if (await log.webhookDelivered(path, yesterday)) return yesterday;
  // One taken before ids were dated is the same delivery while its sender may still retry it
  // (helper 76), not for ever (helper 77: every later identical body was a duplicate again).
  if (now < DATED_FROM + 2 * DAY_MS && (await log.webhookDelivered(path, body))) return body;
  return `${body}:${day}`;
}

const DAY_MS = 24 * 3600 * 1000;
/** When ids without a sender's were first dated (this engine's release): undated ones are at most this old. */
const DATED_FROM = Date.UTC(2026, 11, 5);

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
  // A refusal may come before the body was read: drain it, or closing the connection under a
  // sender still writing resets it and the sender never sees the answer.
  res.req.resume();
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
