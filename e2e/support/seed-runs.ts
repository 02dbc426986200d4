/**
 * Seeds a temp log with runs of the demo mission (assets/demo/orders.vague) by writing their
 * events through the log API — the same shapes the executor writes, so the studio's folds
 * (summary, timeline, state at seq) see realistic runs: paginated fetches, a `for` over orders,
 * store writes, idempotent POSTs with a redacted Authorization header, a timer pause, a crash and
 * resume, retries and a failure. Times advance by a fixed step from a fixed start, so the seeded
 * runs look the same on every machine.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { CommitEntry, EventLog, Lease, StatusChange } from '../../engine/log/log.js';
import type { NewEvent } from '../../engine/log/events.js';

export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');
export const DEMO_MISSION_PATH = path.join(REPO_ROOT, 'assets', 'demo', 'orders.vague');

/**
 * The seeder's owner: a live-looking `host:pid:nonce` on another machine (engine/executor/owner.ts),
 * so the studio's worker never presumes it dead and leaves a seeded 'running' run alone while its
 * lease lasts. The lease counts from the run's fixed `createdAt` (a past date), so it is sized to
 * last a day from now.
 */
export const SEED_OWNER = 'seed-host-elsewhere:4242:seed01';
const leaseTtl = (startAt: number) => Math.max(0, Date.now() - startAt) + 24 * 3600_000;

export interface SeedOptions {
  runId: string;
  /** Orders in the /orders response; each adds about ten events. */
  orders?: number;
  startAt: number;
  /** How the run ends. */
  outcome: 'completed' | 'suspended' | 'failed' | 'running';
  /** Insert a crash + resume after this many orders. */
  crashAfterOrder?: number;
  /** Milliseconds between consecutive events. */
  stepMs?: number;
  /** For 'suspended': when the timer is due. */
  wakeAt?: number;
}

/** The line of each step in orders.vague, found by text so edits to comments do not break it. */
function lineOf(text: string, needle: string): number {
  const i = text.split('\n').findIndex((l) => l.includes(needle));
  if (i < 0) throw new Error(`seed: "${needle}" not found in ${DEMO_MISSION_PATH}; update e2e/support/seed-runs.ts`);
  return i + 1;
}

export class RunWriter {
  private pending: CommitEntry[] = [];
  private at: number;
  constructor(
    readonly log: EventLog,
    readonly lease: Lease,
    start: number,
    private readonly stepMs: number,
  ) {
    this.at = start;
  }
  tick(ms = this.stepMs): number {
    this.at += ms;
    return this.at;
  }
  now(): number {
    return this.at;
  }
  event<T extends NewEvent['type']>(type: T, stepPath: string, payload: NewEvent<T>['payload']): void {
    this.pending.push({ kind: 'event', event: { type, stepPath, payload, recordedAt: this.tick() } as NewEvent });
  }
  sqlWrite(table: string, store: string, key: string, record: Record<string, unknown>, stepPath: string, effectId: string): void {
    this.pending.push({ kind: 'store', write: { storeKind: 'sql', table, store, key, record, op: 'set', stepPath, effectId, recordedAt: this.tick() } });
  }
  async flush(status?: StatusChange): Promise<void> {
    const entries = this.pending;
    this.pending = [];
    if (entries.length === 0 && !status) return;
    await this.log.commit(this.lease, entries, { durable: false, ...(status ? { status } : {}) });
  }
  /** Commits every `batch` entries so a 100k-event run is not one giant transaction. */
  async maybeFlush(batch = 2000): Promise<void> {
    if (this.pending.length >= batch) await this.flush();
  }
}

export interface SeededRun {
  runId: string;
  lastSeqHint: number;
}

export function demoMissionText(): string {
  return fs.readFileSync(DEMO_MISSION_PATH, 'utf8');
}

function order(i: number) {
  return { id: `o-${1001 + i}`, customer: ['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Katherine Johnson', 'Edsger Dijkstra', 'Barbara Liskov', 'Donald Knuth'][i % 7]!, amount: 1000 + ((i * 3779) % 90000), items: 1 + (i % 9) };
}

/** Writes one demo run and leaves its lease with the returned writer when the run is 'running'. */
export async function seedDemoRun(log: EventLog, opts: SeedOptions): Promise<RunWriter> {
  const text = demoMissionText();
  const L = {
    get: lineOf(text, 'get "/orders"'),
    for: lineOf(text, 'for order in response'),
    map: lineOf(text, 'map order -> Order'),
    validate: lineOf(text, 'validate response'),
    storeOrder: lineOf(text, 'store response -> orders'),
    post: lineOf(text, 'post "/confirmations"'),
    storeConf: lineOf(text, '-> confirmations'),
    pause: lineOf(text, 'pause { duration'),
    summary: lineOf(text, 'get "/summary"'),
    storeSummary: lineOf(text, '-> summary'),
  };
  const n = opts.orders ?? 7;
  const stepMs = opts.stepMs ?? 7;
  const { lease } = await log.createRun(
    {
      runId: opts.runId,
      mission: 'DemoOrders',
      missionHash: 'seed-' + opts.runId,
      missionFiles: { entry: 'orders.vague', files: [{ path: 'orders.vague', text }] },
      options: { sources: { Shop: 'http://127.0.0.1:4010' }, env: {} },
      createdAt: opts.startAt,
    },
    SEED_OWNER,
    leaseTtl(opts.startAt),
    [{ type: 'run.started', stepPath: '', payload: { mission: 'DemoOrders', missionHash: 'seed-' + opts.runId }, recordedAt: opts.startAt }],
  );
  const w = new RunWriter(log, lease, opts.startAt, stepMs);
  const orders = Array.from({ length: n }, (_, i) => order(i));

  w.event('stage.started', '', { index: 0, actions: ['Sync'] });
  w.event('action.started', 'Sync', { action: 'Sync', attempt: 1 });
  w.event('step.started', 'Sync/0', { stepType: 'get', line: L.get });
  const pages = Math.max(1, Math.ceil(n / 3));
  for (let p = 1; p <= pages; p++) {
    const effectId = `ef-get-orders-${p}`;
    w.event('http.request', 'Sync/0', { effectId, attempt: 1, request: { method: 'GET', url: `http://127.0.0.1:4010/orders?page=${p}`, headers: { accept: 'application/json', authorization: '[redacted]' } } });
    w.tick(30);
    w.event('http.response', 'Sync/0', { effectId, attempt: 1, response: { status: 200, headers: { 'content-type': 'application/json' }, body: { page: p, orders: orders.slice((p - 1) * 3, p * 3) } }, durationMs: 31, verdict: 'success' });
    w.event('page.completed', 'Sync/0', { effectId, page: p, records: orders.slice((p - 1) * 3, p * 3).length, done: p === pages });
    await w.maybeFlush();
  }
  w.event('fetch.completed', 'Sync/0', { effectId: 'ef-get-orders', pages, items: n, status: 200, value: n <= 50 ? orders : { truncated: n } });
  w.event('step.completed', 'Sync/0', { stepType: 'get', response: n <= 50 ? orders : { truncated: n } });
  w.event('step.started', 'Sync/1', { stepType: 'for', line: L.for });

  for (let i = 0; i < n; i++) {
    const o = orders[i]!;
    const it = `Sync/1[${i}]`;
    const mapped = { id: o.id, customer: o.customer, total: o.amount / 100, items: o.items };
    w.event('loop.iteration', 'Sync/1', { index: i, key: o.id });
    w.event('step.started', `${it}/0`, { stepType: 'map', line: L.map });
    w.event('step.completed', `${it}/0`, { stepType: 'map', response: mapped });
    w.event('step.started', `${it}/1`, { stepType: 'validate', line: L.validate });
    w.event('step.completed', `${it}/1`, { stepType: 'validate' });
    w.event('step.started', `${it}/2`, { stepType: 'store', line: L.storeOrder });
    w.sqlWrite('demo_orders', 'orders', o.id, mapped, `${it}/2`, `ef-store-${o.id}`);
    w.event('step.completed', `${it}/2`, { stepType: 'store' });
    w.event('step.started', `${it}/3`, { stepType: 'post', line: L.post });
    w.event('value.recorded', `${it}/3`, { source: 'now', value: w.now() });
    const effectId = `ef-confirm-${o.id}`;
    const failing = opts.outcome === 'failed' && i === Math.min(n - 1, 2);
    w.event('http.request', `${it}/3`, { effectId, attempt: 1, idempotencyKey: `idem-${opts.runId}-${o.id}`, request: { method: 'POST', url: 'http://127.0.0.1:4010/confirmations', headers: { 'content-type': 'application/json', authorization: '[redacted]', 'idempotency-key': `idem-${opts.runId}-${o.id}` }, body: { orderId: o.id, total: mapped.total } } });
    w.tick(failing ? 400 : 45);
    if (failing) {
      for (let attempt = 1; attempt <= 3; attempt++) {
        w.event('http.error', `${it}/3`, { effectId, attempt, error: { code: 'E_HTTP_503', message: 'POST /confirmations answered 503 Service Unavailable', retryable: true }, durationMs: 120, verdict: attempt < 3 ? 'retry' : 'fail', ...(attempt < 3 ? { retryInMs: 200 * attempt } : {}) });
        if (attempt < 3) w.event('http.request', `${it}/3`, { effectId, attempt: attempt + 1, idempotencyKey: `idem-${opts.runId}-${o.id}`, request: { method: 'POST', url: 'http://127.0.0.1:4010/confirmations', headers: { authorization: '[redacted]' }, body: { orderId: o.id } } });
      }
      const error = { code: 'E_HTTP_503', message: `POST /confirmations failed 3 times for order "${o.id}" (503 Service Unavailable); the API is down — retry the run with \`reqon resume ${opts.runId}\``, retryable: false };
      w.event('step.failed', `${it}/3`, { stepType: 'post', error });
      w.event('step.failed', 'Sync/1', { stepType: 'for', error });
      w.event('action.failed', 'Sync', { action: 'Sync', error });
      w.event('stage.failed', '', { index: 0, error });
      w.event('run.failed', '', { error });
      await w.flush({ status: 'failed', releaseLease: true });
      return w;
    }
    const confirmation = { confirmationId: `c-${5000 + i}`, status: 'confirmed', total: mapped.total };
    w.event('http.response', `${it}/3`, { effectId, attempt: 1, response: { status: 201, headers: { 'content-type': 'application/json' }, body: confirmation }, durationMs: 44, verdict: 'success' });
    w.event('fetch.completed', `${it}/3`, { effectId, pages: 1, status: 201, value: confirmation });
    w.event('step.completed', `${it}/3`, { stepType: 'post', response: confirmation });
    w.event('step.started', `${it}/4`, { stepType: 'store', line: L.storeConf });
    w.sqlWrite('demo_confirmations', 'confirmations', o.id, { id: o.id, confirmation: confirmation.confirmationId, status: 'confirmed' }, `${it}/4`, `ef-storec-${o.id}`);
    w.event('step.completed', `${it}/4`, { stepType: 'store' });
    if (opts.crashAfterOrder === i) {
      await w.flush();
      w.tick(1500);
      w.event('run.resumed', '', { reason: 'crash', owner: 'seed-worker-2', replayFromSeq: 1 });
    }
    await w.maybeFlush();
  }
  w.event('step.completed', 'Sync/1', { stepType: 'for' });
  w.event('action.completed', 'Sync', { action: 'Sync', outcome: 'done' });
  w.event('stage.completed', '', { index: 0 });
  w.event('stage.started', '', { index: 1, actions: ['Settle'] });
  w.event('action.started', 'Settle', { action: 'Settle', attempt: 1 });
  w.event('step.started', 'Settle/0', { stepType: 'pause', line: L.pause });
  const dueAt = opts.wakeAt ?? w.now() + 3000;
  w.event('pause.created', 'Settle/0', { pauseId: 'p-settle', dueAt });
  if (opts.outcome === 'suspended') {
    w.event('run.suspended', '', { reason: 'timer', dueAt });
    await w.flush({ status: 'suspended', wakeAt: dueAt, waitingOn: 'pause:p-settle', releaseLease: true });
    return w;
  }
  if (opts.outcome === 'running') {
    await w.flush();
    return w;
  }
  w.tick(3000);
  await finishSettle(w, L.summary, L.storeSummary, n);
  return w;
}

/** The tail of a demo run after its pause: fetch the summary, store it, complete. */
export async function finishSettle(w: RunWriter, summaryLine: number, storeLine: number, orders: number): Promise<void> {
  w.event('pause.resumed', 'Settle/0', { pauseId: 'p-settle', by: 'timer' });
  w.event('step.completed', 'Settle/0', { stepType: 'pause' });
  w.event('step.started', 'Settle/1', { stepType: 'get', line: summaryLine });
  w.event('http.request', 'Settle/1', { effectId: 'ef-summary', attempt: 1, request: { method: 'GET', url: 'http://127.0.0.1:4010/summary', headers: { authorization: '[redacted]' } } });
  const summary = { id: 'summary', orders, confirmed: orders };
  w.event('http.response', 'Settle/1', { effectId: 'ef-summary', attempt: 1, response: { status: 200, headers: {}, body: summary }, durationMs: 12, verdict: 'success' });
  w.event('fetch.completed', 'Settle/1', { effectId: 'ef-summary', pages: 1, status: 200, value: summary });
  w.event('step.completed', 'Settle/1', { stepType: 'get', response: summary });
  w.event('step.started', 'Settle/2', { stepType: 'store', line: storeLine });
  w.event('store.write', 'Settle/2', { effectId: 'ef-store-summary', store: 'summary', key: 'summary', record: summary, op: 'set' });
  w.event('checkpoint.advanced', 'Settle/2', { key: 'orders-sync', syncedAt: w.now(), records: orders });
  w.event('step.completed', 'Settle/2', { stepType: 'store' });
  w.event('action.completed', 'Settle', { action: 'Settle', outcome: 'done' });
  w.event('stage.completed', '', { index: 1 });
  w.event('run.completed', '', { actionsRun: ['Sync', 'Settle'] });
  await w.flush({ status: 'completed', releaseLease: true });
}

export function demoLines(): { summary: number; storeSummary: number } {
  const text = demoMissionText();
  return { summary: lineOf(text, 'get "/summary"'), storeSummary: lineOf(text, '-> summary') };
}
