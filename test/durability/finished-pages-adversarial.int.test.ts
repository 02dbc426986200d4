/**
 * Adversarial cases for finished pages taken as recorded on a resume (GUARANTEES 13,
 * Journal.skipFinishedPages): a resume must end as a run that never crashed ends, served the same
 * answers — its events, requests, rows and checkpoint.
 *
 * A paginated POST (a search endpoint) records each page's request durably before sending it, so
 * a crash can leave the log showing page k finished (page k+1's request follows it) with page
 * k+1 unanswered. Page k is then taken as recorded, and the pagination starts at page k+1 without
 * what walking page k gave it: the list field the pages before had (a page whose list turned into
 * an object is refused, page-checks.ts checkListField) and the previous page's shape (an API that
 * answers every page with the same one is refused, pagination.ts sameShape). A crash-free run
 * fails on such a page; the resume went on past it. The list field is the FIRST page's with
 * records, not the last finished one's: pages that disagree on it (helper 33) end the resume as
 * they end a crash-free run, failed or completed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';
import { builtCli, describeResult, runCli, runIdOf } from './support/cli-build.js';

const PAGE = 2;
const RECORDS = Array.from({ length: 7 }, (_, i) => ({ id: `r${i}`, n: i }));

const MISSION = `mission Search {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store synced: sql("search_synced")
  action Sync {
    post "/search" {
      body: { q: "all" },
      paginate: offset(offset, ${PAGE}),
      since: lastSync("search") { param: "since", format: unix }
    }
    store response -> synced { key: .id }
  }
  run Sync
}
`;

const url = (offset: number) => `POST /search?since=0&offset=${offset}`;

/** Pages of `{ data: [...] }`; the third (offset 4) sends its list as an object, as PHP sends a list with gaps. */
function serveObjectListOnThirdPage(h: Conformance): void {
  h.api.on(url(0), { body: { data: RECORDS.slice(0, 2) } });
  h.api.on(url(2), { body: { data: RECORDS.slice(2, 4) } });
  h.api.on(url(4), { body: { data: { '0': RECORDS[4], '2': RECORDS[5] } } });
  h.api.on(url(6), { body: { data: RECORDS.slice(6) } });
}

/**
 * Page 1 has its records under "items", page 2 under "data"; page 3 has one of them as an object
 * and the other as a list: `objectUnder` names which is the object.
 */
function serveDisagreeingFields(h: Conformance, objectUnder: 'items' | 'data'): void {
  const other = objectUnder === 'items' ? 'data' : 'items';
  h.api.on(url(0), { body: { items: RECORDS.slice(0, 2) } });
  h.api.on(url(2), { body: { data: RECORDS.slice(2, 4) } });
  h.api.on(url(4), { body: { [objectUnder]: { '0': RECORDS[4] }, [other]: [RECORDS[5]] } });
}

/** An API that does not read `offset`: every page is the first. */
function serveIgnoringOffset(h: Conformance): void {
  for (let offset = 0; offset <= 8; offset += PAGE) h.api.on(url(offset), { body: { data: RECORDS.slice(0, 2) } });
}

function files(h: Conformance) {
  const entry = path.join(h.dir, 'search.vague');
  fs.writeFileSync(entry, MISSION);
  return { entry, files: [{ path: entry, text: MISSION }] };
}

/** Masked: what differs between two runs; `attempt` too, since a kill in flight numbers the request sent again 2. */
const MASKED = new Set(['effectId', 'batch', 'durationMs', 'syncedAt', 'date', 'idempotencyKey', 'Idempotency-Key', 'attempt']);

/** Events without what differs between two runs (run id, seq, time, ids, the API's port, the mission's folder). */
function shape(events: StoredEvent[]): unknown[] {
  return events
    .filter((e) => e.stepPath !== '' || (e.type !== 'run.started' && e.type !== 'run.resumed'))
    .map((e) => {
      const masked = e.type === 'value.recorded' && (e.payload as { source: string }).source === 'now' ? { source: 'now' } : e.payload;
      const replacer = (k: string, v: unknown) => (MASKED.has(k) ? '…' : typeof v === 'string' ? v.replace(/^http:\/\/127\.0\.0\.1:\d+/, 'API').replace(/^.*\/search\.vague/, 'search.vague') : v);
      return [e.type, e.stepPath, JSON.parse(JSON.stringify(masked, replacer)) as unknown];
    });
}

/** A run's events without the attempt a kill left unanswered (its intent, then the same request again). */
function withoutInterruptedAttempts(events: StoredEvent[]): StoredEvent[] {
  return events.filter((e, i) => !(e.type === 'http.request' && events.slice(i + 1).find((n) => n.stepPath === e.stepPath && n.type !== 'run.resumed')?.type === 'http.request'));
}

let cli: string;

beforeAll(() => {
  cli = builtCli();
}, 180_000);

describe.each(backends)('finished pages of a paginated POST taken as recorded (%s)', (backend) => {
  let h: Conformance;
  let reference: Conformance;

  beforeEach(async () => {
    h = await openConformance({ backend });
    reference = await openConformance({ backend });
  });

  afterEach(async () => {
    await h.close();
    await reference.close();
  });

  /** `reqon run … --crash-at POINT`, killed; its run id. */
  async function killedAt(point: string): Promise<string> {
    const killed = await runCli(cli, ['run', files(h).entry, '--db', h.dbPath, '--source', `Api=${h.api.url}`, '--crash-at', point], { cwd: h.dir });
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    return runIdOf(killed);
  }

  it('fails on a page whose list became an object, as a crash-free run does — never completes past it', { timeout: 120_000 }, async () => {
    serveObjectListOnThirdPage(reference);
    const clean = await reference.start(files(reference));
    expect(clean.status).toBe('failed');
    expect(clean.status === 'failed' ? clean.error.message : '').toMatch(/page 3 has an object under "data"/);

    serveObjectListOnThirdPage(h);
    // before-effect passes: 1 request, 2 page 1's batch, 3 request, 4 page 2's batch, 5 page 3's request
    // (recorded and fsync'd, a POST, then killed before it is sent): pages 1 and 2 show finished.
    const runId = await killedAt('before-effect:5');
    const result = await h.resume(runId, { by: 'api' });

    expect(result.status).toBe('failed');
    const events = await h.events(runId);
    // No checkpoint past records never stored (r4, r5, r6).
    expect(events.filter((e) => e.type === 'checkpoint.advanced')).toEqual([]);
    expect(shape(withoutInterruptedAttempts(events))).toEqual(shape(await reference.events(clean.runId)));
    await h.expectVerified(runId);
  });

  it('stops at the page an API that ignores offset repeats, with the requests of a crash-free run', { timeout: 120_000 }, async () => {
    serveIgnoringOffset(reference);
    const clean = await reference.start(files(reference));
    expect(clean.status).toBe('failed');
    expect(clean.status === 'failed' ? clean.error.message : '').toMatch(/answered page 2 \(offset=2\) with the same 2 items as page 1/);

    serveIgnoringOffset(h);
    // before-effect:3 is page 2's request: recorded, then killed before it is sent.
    const runId = await killedAt('before-effect:3');
    const result = await h.resume(runId, { by: 'api' });

    expect(result.status).toBe('failed');
    expect(result.status === 'failed' ? result.error.message : '').toMatch(/answered page 2 \(offset=2\) with the same 2 items as page 1/);
    // Every POST the API saw is one the crash-free run sent: none for offset=4.
    expect([...new Set(h.api.lines())]).toEqual([...new Set(reference.api.lines())]);
    expect(shape(withoutInterruptedAttempts(await h.events(runId)))).toEqual(shape(await reference.events(clean.runId)));
    await h.expectVerified(runId);
  });

  it.each(['items', 'data'] as const)(
    'holds later pages to the list field of the first page with records, when pages disagree (%s an object on page 3)',
    { timeout: 120_000 },
    async (objectUnder) => {
      serveDisagreeingFields(reference, objectUnder);
      const clean = await reference.start(files(reference));
      // Held to page 1's "items": an object under it fails; an object under "data" is no list field's.
      expect(clean.status).toBe(objectUnder === 'items' ? 'failed' : 'completed');

      serveDisagreeingFields(h, objectUnder);
      // before-effect:5 is page 3's request: pages 1 and 2 show finished and are taken as recorded.
      const runId = await killedAt('before-effect:5');
      const result = await h.resume(runId, { by: 'api' });

      expect(result.status).toBe(clean.status);
      if (clean.status === 'failed') expect(result.status === 'failed' ? result.error.message : '').toBe(clean.error.message);
      expect(shape(withoutInterruptedAttempts(await h.events(runId)))).toEqual(shape(await reference.events(clean.runId)));
      await h.expectVerified(runId);
    },
  );
});
