/**
 * Streamed syncs (engine/steps/streamed-sync.ts): `get … { paginate }` directly followed by
 * `store response -> S` stores page by page. These tests hold it to its promise: the same store
 * contents and, step path by step path, the same events as the gathered (unstreamed) pair; a kill
 * in the middle of the stream, then a resume, ends with every record stored exactly once and the
 * checkpoint advanced once; a failing page leaves the pages before it stored and the checkpoint
 * where it was. On every log backend (test/support/temp-log.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import type { StoredEvent } from '../../engine/log/events.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';
import { builtCli, describeResult, runCli, runIdOf } from './support/cli-build.js';

const PAGE = 4;
const TOTAL = 18; // 5 pages: 4 full, one of 2
const RECORDS = Array.from({ length: TOTAL }, (_, i) => ({ id: `r${i}`, n: i, tags: i % 2 === 0 ? ['even'] : [] }));

/** `streamed`: the store is the action's last step; otherwise a `validate response` after it keeps `response` alive. */
function mission(streamed: boolean, store = 'sql("synced")'): string {
  // Named apart: the two variants must not share a lastSync checkpoint.
  return `mission ${streamed ? 'Streamed' : 'Gathered'} {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store synced: ${store}
  action Sync {
    get "/records" {
      paginate: offset(offset, ${PAGE}),
      since: lastSync("records") { param: "since", format: unix }
    }
    store response -> synced { key: .id }
${streamed ? '' : '    validate response { assume length(response) >= 0 }\n'}  }
  run Sync
}
`;
}

let h: Conformance;
let cli: string;

// The CLI is built once per source state, outside any test's time limit.
beforeAll(() => {
  cli = builtCli();
}, 180_000);

/** One route per page (the fake API matches path and query exactly); from `failFrom` on, a 400. */
function servePages(failFrom = Infinity): void {
  for (let offset = 0; offset < TOTAL; offset += PAGE) {
    h.api.on(`GET /records?since=0&offset=${offset}`, offset >= failFrom ? { status: 400, body: { error: 'bad page' } } : { body: RECORDS.slice(offset, offset + PAGE) });
  }
}


/** Payload fields that differ between two runs of one mission: ids, timings, the server's clock. */
const MASKED = new Set(['effectId', 'durationMs', 'syncedAt', 'date']);

/** Events grouped by step path, without what differs between two runs (run id, seq, time, ids). */
function byPath(events: StoredEvent[]): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const e of events) {
    if (e.stepPath === '') continue; // run.started / run.completed carry run-specific fields
    const masked = e.type === 'value.recorded' && (e.payload as { source: string }).source === 'now' ? { source: 'now' } : e.payload;
    // `batch` names a store batch's first write: a streamed page is a batch of its own (asserted apart).
    const payload = JSON.parse(JSON.stringify(masked, (k, v: unknown) => (k === 'batch' ? undefined : MASKED.has(k) ? '…' : v))) as unknown;
    (out[e.stepPath] ??= []).push([e.type, payload]);
  }
  return out;
}

describe.each(backends)('%s: streamed sync', (backend) => {
  beforeEach(async () => {
    h = await openConformance({ backend });
  });

  afterEach(async () => {
    await h.close();
  });

  it('stores what the gathered pair stores, with the same events at every step path', async () => {
    servePages();
    const streamed = await h.start(h.mission('streamed', mission(true)));
    const gathered = await h.start(h.mission('gathered', mission(false)));
    expect(streamed.status).toBe('completed');
    expect(gathered.status).toBe('completed');
    const table = await h.log.readTable('sql', 'synced');
    // In insertion order (reference §B.4): the API's order, which the rewrites of the second run keep.
    expect(table.map((r) => r.record)).toEqual(RECORDS);

    const s = byPath(await h.events(streamed.runId));
    const g = byPath(await h.events(gathered.runId));
    delete g['Sync/2']; // the validate step only the gathered variant has
    expect(s).toEqual(g);
    // Store write effect ids are positions in the whole response, not in the page.
    const writes = (await h.events(streamed.runId)).filter((e): e is StoredEvent<'store.write'> => e.type === 'store.write');
    expect(new Set(writes.map((w) => w.payload.effectId)).size).toBe(TOTAL);
    expect(writes.map((w) => w.payload.key)).toEqual(RECORDS.map((r) => r.id));
    // Each page is a batch (one crash-point occurrence each); the gathered store is one.
    const batches = (runId: string) => h.events(runId).then((es) => es.filter((e) => e.type === 'store.write' && e.payload.batch !== undefined).length);
    expect(await batches(streamed.runId)).toBe(5);
    expect(await batches(gathered.runId)).toBe(1);
    const report = await verifyRun(h.log, streamed.runId, { env: h.env });
    expect(report.divergence).toBeNull();
  });

  it('interleaves pages and their writes, and commits them page by page', async () => {
    servePages();
    const run = await h.start(h.mission('streamed', mission(true, 'memory("synced")')));
    expect(run.status).toBe('completed');
    const events = await h.events(run.runId);
    const order = events.filter((e) => e.type === 'http.response' || e.type === 'store.write').map((e) => (e.type === 'http.response' ? 'P' : 'w'));
    expect(order.join('')).toBe('Pwwww'.repeat(4) + 'Pww');
    expect(Object.keys(await h.store(run.runId, 'synced'))).toHaveLength(TOTAL);
  });

  it('survives a kill in the middle of the stream: resumed, every record is stored once and the checkpoint advances once', async () => {
    servePages();
    const text = mission(true);
    const entry = path.join(h.dir, 'crash.vague');
    fs.writeFileSync(entry, text);
    // The CLI processes share the harness's log (empty until now); it reads back what they committed.
    const common = ['--db', h.dbPath];
    // mid-store:3 is the third page's write batch (each page is one batch).
    const killed = await runCli(cli, ['run', entry, ...common, '--source', `Api=${h.api.url}`, '--crash-at', 'mid-store:3'], { cwd: h.dir });
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runId = runIdOf(killed);
    const resumed = await runCli(cli, ['resume', runId, ...common], { cwd: h.dir });
    expect(resumed.code, describeResult(resumed)).toBe(0);

    const events = await h.events(runId);
    const keys = events.filter((e): e is StoredEvent<'store.write'> => e.type === 'store.write').map((e) => e.payload.key);
    expect(keys).toEqual(RECORDS.map((r) => r.id));
    expect(events.filter((e) => e.type === 'checkpoint.advanced').map((e) => (e.payload as { records?: number }).records)).toEqual([TOTAL]);
    expect((await h.log.readTable('sql', 'synced')).length).toBe(TOTAL);
    const verified = await runCli(cli, ['verify', runId, ...common], { cwd: h.dir });
    expect(verified.code, describeResult(verified)).toBe(0);
  });

  it('streams inside concurrent loop iterations, and the run replays without divergence', async () => {
    for (const src of ['a', 'b', 'c']) {
      for (let offset = 0; offset < 10; offset += PAGE) {
        h.api.on(`GET /sources/${src}/records?offset=${offset}`, { body: RECORDS.slice(offset, Math.min(offset + PAGE, 10)).map((r) => ({ ...r, id: `${src}-${r.id}` })) });
      }
    }
    const text = `mission Fanned {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store synced: sql("fanned")
  action Sync {
    for src in ["a", "b", "c"] concurrency 3 {
      get "/sources/{src}/records" { paginate: offset(offset, ${PAGE}) }
      store response -> synced { key: .id }
    }
  }
  run Sync
}
`;
    const run = await h.start(h.mission('fanned', text));
    expect(run.status, run.status === 'failed' ? run.error.message : '').toBe('completed');
    expect((await h.log.readTable('sql', 'fanned')).length).toBe(30);
    const report = await verifyRun(h.log, run.runId, { env: h.env });
    expect(report.divergence).toBeNull();
    expect(report.replayed.length).toBe(report.original.length);
  });

  it('a failing page fails both steps, keeps the pages before it, and does not advance the checkpoint', async () => {
    servePages(2 * PAGE);
    const run = await h.start(h.mission('failing', mission(true)));
    expect(run.status).toBe('failed');
    const events = await h.events(run.runId);
    expect(events.filter((e) => e.type === 'step.failed').map((e) => e.stepPath)).toEqual(['Sync/0', 'Sync/1']);
    expect(events.some((e) => e.type === 'checkpoint.advanced')).toBe(false);
    expect((await h.log.readTable('sql', 'synced')).map((r) => r.key).sort()).toEqual(RECORDS.slice(0, 2 * PAGE).map((r) => r.id).sort());
  });

  it('a page whose write fails (a record without its key) fails at the store step, not at the fetch (helper 59)', async () => {
    for (let offset = 0; offset < TOTAL; offset += PAGE) {
      const page = RECORDS.slice(offset, offset + PAGE).map((r) => (r.n === 5 ? { n: r.n } : r));
      h.api.on(`GET /records?since=0&offset=${offset}`, { body: page });
    }
    const files = h.mission('keyless', mission(true));
    const run = await h.start(files);
    expect(run.status).toBe('failed');
    if (run.status !== 'failed') return;
    expect(run.error.message).toMatch(/store key evaluated to null/);
    // Line 9 is `    store response -> synced { key: .id }`; the fetch is line 5.
    expect(run.error.at).toBe(`${files.entry}:9:5`);
  });
});
