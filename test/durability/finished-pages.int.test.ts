/**
 * On a resume, the pages of a streamed sync that the log shows finished are taken as recorded
 * instead of being walked again (Journal.skipFinishedPages): the run ends exactly as a crash-free
 * run ends — the same events at every step path, effect ids derived as ever, every record stored
 * once, the checkpoint covering all of them, verify clean — and nothing is skipped where the log
 * cannot vouch for it (the page it died in, a run under --crash-at, an edited mission).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { effectId } from '../../engine/journal/effect-id.js';
import { Journal } from '../../engine/journal/journal.js';
import { NondeterminismError } from '../../engine/journal/nondeterminism-error.js';
import type { StoredEvent } from '../../engine/log/events.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';
import { builtCli, describeResult, runCli, runIdOf } from './support/cli-build.js';

/**
 * Over 512 events a page, so each page commits at its end (GUARANTEES 5): a kill keeps them all.
 * (Each test spawns the CLI and syncs 3,700 records twice: on a loaded machine, over a minute.)
 */
const PAGE = 600;
const TOTAL = 6 * PAGE + 100; // 7 pages: 6 full, one of 100
const RECORDS = Array.from({ length: TOTAL }, (_, i) => ({ id: `r${i}`, n: i }));
/** Answers 503 once, then the page: a finished page with retried attempts is walked, not taken. */
const RETRIED_OFFSET = 2 * PAGE;

const MISSION = `mission Pages {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store synced: sql("pages_synced")
  action Sync {
    get "/records" {
      paginate: offset(offset, ${PAGE}),
      since: lastSync("records") { param: "since", format: unix },
      retry: { maxAttempts: 3, backoff: constant, initialDelay: 1 }
    }
    store response -> synced { key: .id }
  }
  run Sync
}
`;

/** Serves the pages below offset `end` from `records`. */
function servePages(h: Conformance, records = RECORDS, end = TOTAL): void {
  for (let offset = 0; offset < end; offset += PAGE) {
    const page = { body: records.slice(offset, offset + PAGE) };
    h.api.on(`GET /records?since=0&offset=${offset}`, offset === RETRIED_OFFSET ? [{ status: 503, body: { error: 'busy' } }, page] : page);
  }
}

function files(h: Conformance, text = MISSION) {
  const entry = path.join(h.dir, 'pages.vague');
  fs.writeFileSync(entry, text);
  return { entry, files: [{ path: entry, text }] };
}

/** Payload fields that differ between two runs of one mission: ids, timings, the server's clock. */
const MASKED = new Set(['effectId', 'batch', 'durationMs', 'syncedAt', 'date', 'idempotencyKey']);

/** Events grouped by step path, without what differs between two runs (run id, seq, time, ids). */
function byPath(events: StoredEvent[]): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const e of events) {
    if (e.stepPath === '') continue; // run.started, run.resumed, run.completed: run-specific
    const masked = e.type === 'value.recorded' && (e.payload as { source: string }).source === 'now' ? { source: 'now' } : e.payload;
    // Each harness has an API of its own: the same path on another port.
    const replacer = (k: string, v: unknown) => (MASKED.has(k) ? '…' : typeof v === 'string' ? v.replace(/^http:\/\/127\.0\.0\.1:\d+/, 'API') : v);
    (out[e.stepPath] ??= []).push([e.type, JSON.parse(JSON.stringify(masked, replacer)) as unknown]);
  }
  return out;
}

let cli: string;

// The CLI is built once per source state, outside any test's time limit.
beforeAll(() => {
  cli = builtCli();
}, 180_000);

describe.each(backends)('finished pages of a streamed sync on resume (%s)', (backend) => {
  let h: Conformance;

  beforeEach(async () => {
    h = await openConformance({ backend });
    servePages(h);
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    await h.close();
  });

  /** `reqon run` killed (SIGKILL) while it stores its 6th page; its run id. */
  async function killedAtSixthPage(text = MISSION): Promise<string> {
    const killed = await runCli(cli, ['run', files(h, text).entry, '--db', h.dbPath, '--source', `Api=${h.api.url}`, '--crash-at', 'mid-store:6'], { cwd: h.dir });
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    return runIdOf(killed);
  }

  /** Resumes in this process, collecting what skipFinishedPages took as recorded. */
  async function resume(runId: string, extra: Parameters<Conformance['resume']>[2] = {}, missionFiles?: ReturnType<typeof files>) {
    const skip = vi.spyOn(Journal.prototype, 'skipFinishedPages');
    try {
      const result = await h.resume(runId, { by: 'api', ...(missionFiles ? { missionFiles } : {}) }, extra);
      const taken = skip.mock.results.flatMap((r) => (r.type === 'return' ? [r.value as { pages: number; items: number }] : []));
      return { result, pages: taken.reduce((sum, t) => sum + t.pages, 0), items: taken.reduce((sum, t) => sum + t.items, 0) };
    } finally {
      skip.mockRestore();
    }
  }

  async function expectSyncedOnce(runId: string): Promise<StoredEvent[]> {
    const events = await h.events(runId);
    const writes = events.filter((e): e is StoredEvent<'store.write'> => e.type === 'store.write');
    expect(writes.map((w) => w.payload.key)).toEqual(RECORDS.map((r) => r.id));
    // Effect ids are positions in the whole response, taken pages or walked ones alike.
    expect(writes.map((w) => w.payload.effectId)).toEqual(RECORDS.map((_, i) => effectId(runId, 'Sync/1', 'store', i)));
    expect(events.filter((e) => e.type === 'checkpoint.advanced').map((e) => (e.payload as { records?: number }).records)).toEqual([TOTAL]);
    const completed = events.filter((e): e is StoredEvent<'fetch.completed'> => e.type === 'fetch.completed').map((e) => e.payload);
    expect(completed).toMatchObject([{ pages: 7, items: TOTAL, status: 200 }]);
    expect((await h.log.readTable('sql', 'pages_synced')).map((r) => r.record)).toEqual(RECORDS);
    await h.expectVerified(runId);
    return events;
  }

  it('walks every page when the source\'s breaker counts successes too (failureRate)', { timeout: 180_000 }, async () => {
    const rated = MISSION.replace('base: "http://127.0.0.1:1" }', 'base: "http://127.0.0.1:1", circuitBreaker: { failureRate: 50, minimumRequests: 100 } }');
    expect(rated).toContain('failureRate');
    const runId = await killedAtSixthPage(rated);
    const { result, pages } = await resume(runId);
    expect(result.status, result.status === 'failed' ? result.error.message : '').toBe('completed');
    expect(pages).toBe(0);
    await expectSyncedOnce(runId);
  });

  it('takes the finished pages as recorded and ends with the events of a crash-free run', { timeout: 180_000 }, async () => {
    const runId = await killedAtSixthPage();
    // The API changes its answers for the pages the log holds: the resume must not ask again.
    servePages(h, RECORDS.map((r) => ({ ...r, n: -1 })), 5 * PAGE);
    const sent = h.api.requests.length;
    const { result, pages, items } = await resume(runId);
    expect(result.status, result.status === 'failed' ? result.error.message : '').toBe('completed');
    // Pages 1–2: each followed by the next one's request. The 3rd was answered after a retry, so
    // it and the pages after it the log holds are walked, answered from the log (its failed
    // attempt must reach the circuit breaker); the 6th, sent before the kill but never recorded,
    // and the 7th are fetched live.
    expect({ pages, items }).toEqual({ pages: 2, items: 2 * PAGE });
    expect(h.api.lines().slice(sent)).toEqual([`GET /records?since=0&offset=${5 * PAGE}`, `GET /records?since=0&offset=${6 * PAGE}`]);
    const events = await expectSyncedOnce(runId);
    // The retried page's two attempts are in the log once each.
    expect(events.filter((e) => e.type === 'http.response').map((e) => (e.payload as { verdict: string }).verdict)).toEqual(['success', 'success', 'retry', ...Array(5).fill('success')]);

    const reference = await openConformance({ backend });
    try {
      servePages(reference);
      const clean = await reference.start(files(reference));
      expect(clean.status).toBe('completed');
      expect(byPath(events)).toEqual(byPath(await reference.events(clean.runId)));
    } finally {
      await reference.close();
    }
  });

  it('walks every page under --crash-at (its counts include replayed passes), to the same end', { timeout: 180_000 }, async () => {
    const runId = await killedAtSixthPage();
    const { result, pages } = await resume(runId, { crash: { point: 'before-wait', occurrence: 99 } });
    expect(pages).toBe(0);
    expect(result.status).toBe('completed');
    await expectSyncedOnce(runId);
  });

  it('walks every page against an edited mission, so an edit of the first page is still caught', { timeout: 180_000 }, async () => {
    const runId = await killedAtSixthPage();
    const edited = files(h, MISSION.replace('-> synced { key: .id }', '-> synced { key: .n }'));
    const resumed = resume(runId, {}, edited);
    await expect(resumed).rejects.toThrow(NondeterminismError);
    await expect(resumed).rejects.toThrow(/Sync\/1/);
    await expect(resumed).rejects.toThrow(/key "r0"/);
  });
});
