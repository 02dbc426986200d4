/**
 * A long run with a big `response`, written straight into a log through the log API (seconds,
 * where running it would take minutes): one GET whose answer is `records` orders, then a `for`
 * over them that validates and stores each (so `response` stays the big answer throughout the
 * loop), until the log holds `total` events. Used by the
 * State-tab bench (studio-state.bench.ts) and the e2e spec of the State tab on a big run.
 *
 * The events have the shapes the executor writes (step paths `Sync/1[i]/0`, a `loop.iteration`
 * per iteration at the iteration's path, the fetch's value in `fetch.completed`), and the mission
 * text is a real mission whose lines the events name, so State shows the loop variable too.
 */
import type { NewEvent } from '../../engine/log/events.js';
import type { EventLog } from '../../engine/log/log.js';

export const BIG_RUN_MISSION = `mission BigSync {
  source Shop { auth: none, base: "http://127.0.0.1:1" }
  store orders: sql("big_orders")
  action Sync {
    get "/orders"
    for order in response {
      validate order { assume .amount > 0 }
      store order -> orders { key: .id }
    }
  }
  run Sync
}
`;

const LINE = { get: 5, for: 6, validate: 7, store: 8 };
const BATCH = 5_000;

export function bigOrder(i: number): Record<string, unknown> {
  return { id: `o-${100000 + i}`, customer: `Customer ${i % 977}`, amount: 1000 + ((i * 3779) % 90000), items: 1 + (i % 9), region: ['eu', 'us', 'apac'][i % 3] };
}

export interface BigRun {
  runId: string;
  lastSeq: number;
  /** Seq of the `fetch.completed` that holds the whole response. */
  responseSeq: number;
  /** Iterations the loop ran. */
  iterations: number;
}

export async function seedBigRun(log: EventLog, opts: { runId: string; total: number; records: number; startAt?: number }): Promise<BigRun> {
  const { runId, total, records } = opts;
  let at = opts.startAt ?? 1_780_000_000_000;
  const pending: NewEvent[] = [];
  const add = <T extends NewEvent['type']>(type: T, stepPath: string, payload: NewEvent<T>['payload']) => {
    at += 2;
    pending.push({ type, stepPath, payload, recordedAt: at } as NewEvent);
  };
  const { lease } = await log.createRun(
    {
      runId,
      mission: 'BigSync',
      missionHash: `seed-${runId}`,
      missionFiles: { entry: 'big-sync.vague', files: [{ path: 'big-sync.vague', text: BIG_RUN_MISSION }] },
      options: { sources: { Shop: 'http://127.0.0.1:1' }, env: {} },
      createdAt: at,
    },
    'seed-big-run',
    60 * 60 * 1000,
    [{ type: 'run.started', stepPath: '', payload: { mission: 'BigSync', missionHash: `seed-${runId}` }, recordedAt: at }],
  );
  let written = 1;
  const flush = async (end = false) => {
    if (pending.length === 0 && !end) return;
    const entries = pending.splice(0).map((event) => ({ kind: 'event' as const, event }));
    written += entries.length;
    await log.commit(lease, entries, { durable: false, ...(end ? { status: { status: 'completed' as const, releaseLease: true } } : {}) });
  };

  const orders = Array.from({ length: records }, (_, i) => bigOrder(i));
  add('stage.started', '', { index: 0, actions: ['Sync'] });
  add('action.started', 'Sync', { action: 'Sync', attempt: 1 });
  add('step.started', 'Sync/0', { stepType: 'Fetch', line: LINE.get });
  add('http.request', 'Sync/0', { effectId: 'ef-orders', attempt: 1, request: { method: 'GET', url: 'http://127.0.0.1:1/orders', headers: {} } });
  add('http.response', 'Sync/0', { effectId: 'ef-orders', attempt: 1, response: { status: 200, headers: { 'content-type': 'application/json' }, body: orders }, durationMs: 80, verdict: 'success' });
  add('fetch.completed', 'Sync/0', { effectId: 'ef-orders', pages: 1, items: records, status: 200, value: orders });
  const responseSeq = written + pending.length;
  add('step.completed', 'Sync/0', { stepType: 'Fetch' });
  add('step.started', 'Sync/1', { stepType: 'For', line: LINE.for });
  await flush();

  // Six events per iteration; leave room for the loop's and the run's four closing events.
  const closing = 4;
  let i = 0;
  for (; i < records && written + pending.length + 6 + closing <= total; i += 1) {
    const o = orders[i]!;
    const it = `Sync/1[${i}]`;
    add('loop.iteration', it, { index: i, key: String(o.id) });
    add('step.started', `${it}/0`, { stepType: 'Validate', line: LINE.validate });
    add('step.completed', `${it}/0`, { stepType: 'Validate' });
    add('step.started', `${it}/1`, { stepType: 'Store', line: LINE.store });
    add('store.write', `${it}/1`, { effectId: `ef-s-${i}`, store: 'orders', key: String(o.id), record: o, op: 'set' });
    add('step.completed', `${it}/1`, { stepType: 'Store' });
    if (pending.length >= BATCH) await flush();
  }
  // Pad to exactly `total` with recorded instants, as a long loop's clock reads would.
  while (written + pending.length + closing < total) add('value.recorded', 'Sync/1', { source: 'now', value: at });
  add('step.completed', 'Sync/1', { stepType: 'For' });
  add('action.completed', 'Sync', { action: 'Sync', outcome: 'done' });
  add('stage.completed', '', { index: 0 });
  add('run.completed', '', { actionsRun: ['Sync'] });
  await flush(true);
  const run = await log.getRun(runId);
  if (!run) throw new Error(`seedBigRun: run ${runId} is missing after seeding`);
  return { runId, lastSeq: run.lastSeq, responseSeq, iterations: i };
}
