/**
 * The run summary from the log's counts (`readRunSummary`: what `reqon show` and the studio's runs
 * list use) equals the full fold of every event (RunSummaryHandler over `log.read`), field for
 * field and in the same key order, on both backends: on random logs written through the log API
 * (every event type the summary looks at, 2xx and other statuses, resumes, pauses, waits, nested
 * failures, clocks that go backwards) and on real runs of the engine with many effects (a loop of
 * POSTs the API answers with changing statuses, a long run of store steps).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventPayloads, EventType, NewEvent } from '../../engine/log/events.js';
import type { CommitEntry, EventLog } from '../../engine/log/log.js';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { readRunSummary, RunSummaryHandler } from '../../engine/inspect/run-summary.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import Database from 'better-sqlite3';
import { openLog } from '../../engine/log/open-log.js';
import { SCHEMA_VERSION } from '../../engine/log/sqlite/migrations.js';
import { backends, openTempLog, tempLogTarget, type Backend, type TempLog } from '../support/temp-log.js';
import { newRun, started, storeWrite } from '../log/helpers.js';
import { prng } from '../support/prng.js';

/** Both summaries of `runId`, and the full one as JSON (key order included). */
async function bothSummaries(log: EventLog, runId: string) {
  const full = runFold(new RunSummaryHandler(runId), await log.read(runId));
  const { summary, first } = await readRunSummary(log, runId);
  return { full, counted: summary, first, sameJson: JSON.stringify(summary) === JSON.stringify(full) };
}


const STATUSES = [200, 201, 204, 299, 300, 304, 199, 404, 422, 500, 503];
const PATHS = ['A/0', 'A/1', 'A/1[0]/0', 'A/1[1]/0', 'A/1[1]/0>2', 'B/0', 'B/0!1', 'A/10'];

/** One random event of a type the summary reads, counts or ignores; `at` is its recordedAt. */
function randomEntry(next: () => number, at: number, n: number): CommitEntry {
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const event = <T extends EventType>(type: T, payload: EventPayloads[T], stepPath = pick(PATHS)): CommitEntry => ({ kind: 'event', event: { type, stepPath, payload, recordedAt: at } as NewEvent });
  const id = `x${n % 3}`;
  switch (Math.floor(next() * 16)) {
    case 0:
    case 1:
      return event('step.completed', { stepType: 'store' });
    case 2:
      return storeWrite({ key: `k${n}`, record: { n }, recordedAt: at, stepPath: pick(PATHS) });
    case 3:
    case 4:
      return event('http.response', { effectId: `e${n}`, attempt: 1, response: { status: pick(STATUSES), headers: {}, body: { n } }, durationMs: 1, verdict: 'success' });
    case 5:
      return event('step.failed', { stepType: 'post', error: { code: 'http-status', message: `failed ${n}` } });
    case 6:
      return event('run.resumed', { reason: pick(['crash', 'pause', 'lease-expired', 'manual'] as const), owner: 'w', replayFromSeq: 1 }, '');
    case 7:
      return event('run.suspended', next() < 0.5 ? { reason: 'timer', dueAt: at + 5_000 } : { reason: pick(['webhook', 'wait'] as const) }, '');
    case 8:
      return event('pause.created', next() < 0.5 ? { pauseId: id, dueAt: at + 1_000 } : { pauseId: id, webhookPath: `/hook/${id}` });
    case 9:
      return event('pause.resumed', { pauseId: pick(['x0', 'x1', 'x2']), by: 'timer' });
    case 10:
      return event('wait.registered', { waitId: id, path: `/wait/${id}`, expiresAt: at + 9_000, expectedEvents: 1 });
    case 11:
      return event('wait.completed', { waitId: pick(['x0', 'x1', 'x2']), events: 1, timedOut: false });
    case 12:
      return event('run.started', { mission: `M${n}`, missionHash: 'h' }, '');
    case 13:
      return next() < 0.5 ? event('run.completed', { actionsRun: ['A'] }, '') : event('run.failed', { error: { code: 'x', message: `boom ${n}` } }, '');
    default:
      return event('step.started', { stepType: 'get', line: n });
  }
}

describe.each(backends)('%s log: the summary from counts equals the full fold', (backend: Backend) => {
  let t: TempLog;
  beforeEach(async () => {
    t = await openTempLog(backend);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('on random logs of every event type the summary looks at', async () => {
    for (let seed = 1; seed <= 12; seed++) {
      const next = prng(seed);
      const runId = `fuzz-${seed}`;
      let at = 1_000 + seed;
      const { lease } = await t.log.createRun(newRun(runId, at), 'w1', 600_000, [started(at)]);
      const commits = 20 + Math.floor(next() * 40);
      let n = 0;
      for (let c = 0; c < commits; c++) {
        const entries: CommitEntry[] = [];
        for (let i = 1 + Math.floor(next() * 6); i > 0; i--) {
          // Mostly forward, sometimes back: updatedAt is the latest instant, not the last event's.
          at = Math.max(0, at + Math.floor(next() * 400) - 100);
          entries.push(randomEntry(next, at, n++));
        }
        await t.log.commit(lease, entries, { durable: false });
      }
      const { full, counted, sameJson } = await bothSummaries(t.log, runId);
      expect(counted, `seed ${seed}`).toEqual(full);
      expect(sameJson, `seed ${seed}: same keys in the same order`).toBe(true);
      // The random log did exercise what the counts stand for.
      expect(full.lastSeq).toBeGreaterThan(commits);
    }
  });

  it('on a run without events past its first, and on a run the log does not hold', async () => {
    await t.log.createRun(newRun('one', 5_000), 'w1', 30_000, [started(5_000)]);
    const { full, counted, first } = await bothSummaries(t.log, 'one');
    expect(counted).toEqual(full);
    expect(first?.type).toBe('run.started');
    const none = await readRunSummary(t.log, 'nope');
    expect(none.summary).toEqual(runFold(new RunSummaryHandler('nope'), []));
    expect(none.first).toBeUndefined();
  });

  it('counts http.response statuses as stored, each 2xx an effect', async () => {
    const { lease } = await t.log.createRun(newRun('codes', 1_000), 'w1', 30_000, [started()]);
    const entries = STATUSES.map((status, i): CommitEntry => ({
      kind: 'event',
      event: { type: 'http.response', stepPath: 'A/0', payload: { effectId: `e${i}`, attempt: 1, response: { status, headers: {}, body: null }, durationMs: 1, verdict: 'success' }, recordedAt: 2_000 + i },
    }));
    await t.log.commit(lease, entries, { durable: false });
    const counts = await t.log.eventCounts('codes', ['run.started', 'http.response', 'store.write']);
    expect(counts.byType).toEqual({ 'run.started': 1, 'http.response': STATUSES.length, 'store.write': 0 });
    // Without http.response asked for, no statuses; an unknown run counts nothing.
    expect((await t.log.eventCounts('codes', ['run.started'])).responseStatuses).toEqual([]);
    expect(await t.log.eventCounts('nope', ['run.started'])).toEqual({ lastSeq: 0, firstRecordedAt: null, latestRecordedAt: null, byType: { 'run.started': 0 }, responseStatuses: [] });
    await expect(t.log.eventCounts('codes', 'run.started' as never)).rejects.toThrow(/types must be an array/);
    expect(counts.responseStatuses.map((r) => [r.status, r.count]).sort((a, b) => (a[0] as number) - (b[0] as number))).toEqual([...STATUSES].sort((a, b) => a - b).map((s) => [s, 1]));
    expect(counts).toMatchObject({ lastSeq: STATUSES.length + 1, firstRecordedAt: 1_000, latestRecordedAt: 2_000 + STATUSES.length - 1 });
    const { full, counted } = await bothSummaries(t.log, 'codes');
    expect(counted).toEqual(full);
    expect(counted.effects).toBe(4); // 200, 201, 204, 299
  });
});

describe('SQLite: a log from before the summary indexes', () => {
  it('opens at version 5, gains them (migrations 6 and 7), and summarises as before', async () => {
    const target = await tempLogTarget('sqlite', 'reqon-summary-migrate-');
    try {
      let log = await openLog(target.target);
      const { lease } = await log.createRun(newRun('old', 1_000), 'w1', 30_000, [started()]);
      await log.commit(
        lease,
        [
          { kind: 'event', event: { type: 'step.failed', stepPath: 'A/0', payload: { stepType: 'post', error: { code: 'x', message: 'no' } }, recordedAt: 2_000 } },
          { kind: 'event', event: { type: 'step.completed', stepPath: 'A/1', payload: { stepType: 'let' }, recordedAt: 3_000 } },
        ],
        { durable: true },
      );
      const before = runFold(new RunSummaryHandler('old'), await log.read('old'));
      await log.close();
      const raw = new Database(target.target);
      raw.exec('DROP INDEX reqon_events_summary; DROP INDEX reqon_events_step_failed');
      raw.pragma('user_version = 5');
      raw.close();
      log = await openLog(target.target);
      try {
        expect((await readRunSummary(log, 'old')).summary).toEqual(before);
        expect((await log.listRuns({ status: 'running', failedSteps: true })).map((r) => r.runId)).toEqual(['old']);
      } finally {
        await log.close();
      }
      const check = new Database(target.target, { readonly: true });
      try {
        expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
        const names = (check.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'reqon_events'").all() as { name: string }[]).map((r) => r.name);
        expect(names).toEqual(expect.arrayContaining(['reqon_events_summary', 'reqon_events_step_failed']));
      } finally {
        check.close();
      }
    } finally {
      await target.drop();
    }
  });
});

describe.each(backends)('%s: real runs with many effects', (backend: Backend) => {
  let h: Conformance;
  beforeEach(async () => {
    h = await openConformance({ backend });
  });
  afterEach(async () => {
    await h.close();
  });

  it('a loop of POSTs answered 201, 422, 500 and 200 in turn, stored as it goes', async () => {
    const items = Array.from({ length: 60 }, (_, i) => ({ id: `i${i}`, qty: i }));
    h.api.on('GET /items', { body: items });
    let calls = 0;
    // Changing answers: a 500 is retried (its retry answers 200), a 422 is a tolerated failure.
    h.api.on('POST /shipments', () => {
      const status = [201, 422, 500, 200][calls++ % 4]!;
      return { status, body: { n: calls } };
    });
    const text = `mission Ship {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store sent: sql("sent")
  action Run {
    get "/items"
    for item in response {
      post "/shipments" { body: { sku: item.id, qty: item.qty } }
      store { id: item.id, status: response.status } -> sent { key: .id }
    }
  }
  run Run
}
`;
    const entry = `${h.dir}/ship.vague`;
    const result = await h.start({ entry, files: [{ path: entry, text }] });
    const { full, counted, sameJson } = await bothSummaries(h.log, result.runId);
    expect(counted).toEqual(full);
    expect(sameJson).toBe(true);
    expect(full.failures).toBeGreaterThan(10);
    expect(full.effects).toBeGreaterThan(10);
  });

  it('a long run of store steps', async () => {
    const text = `mission Long {
  store kept: sql("kept")
  action Run {
    for i in range(0, 1500) {
      store { id: i } -> kept { key: .id }
    }
  }
  run Run
}
`;
    const entry = `${h.dir}/long.vague`;
    const result = await h.start({ entry, files: [{ path: entry, text }] });
    expect(result.status).toBe('completed');
    const { full, counted, sameJson } = await bothSummaries(h.log, result.runId);
    expect(counted).toEqual(full);
    expect(sameJson).toBe(true);
    expect(full.effects).toBe(1500);
  });
});
