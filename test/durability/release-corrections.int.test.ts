/**
 * GUARANTEES 13, "across engine releases": a run recorded by an engine that evaluated an
 * expression otherwise (before 2026-12-02, `parseDecimal("0x10")` was 16 and a record without a
 * field read it from an array response) diverges, named at the step, when this engine verifies
 * or resumes it — never a replay that passes the step with another value. The older engine's
 * log is made here from a run of this one, with the value it would have written in its place
 * (the record of a store write, the body of a POST and so its identity), on every log backend.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import { continueRun } from '../../engine/executor/run-mission.js';
import { canonicalJson } from '../../engine/eval/values.js';
import type { StoredEvent } from '../../engine/log/events.js';
import type { RunOptions } from '../../engine/log/log.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';
import { insertStoredRun, openTempLog, type TempLog } from './support/stored-log.js';

const MISSION = `mission Corrected {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    store { id: "k", v: parseDecimal("0x10") } -> out { key: .id }
    post "/marks" { body: { v: parseDecimal("0x10") } }
    store { id: "m", mark: response.mark } -> out { key: .id }
  }
  run A
}
`;

let c: Conformance | undefined;
let older: TempLog | undefined;
afterEach(async () => {
  await older?.close();
  await c?.close();
  older = c = undefined;
});

/** The run's events as an older engine would have written them: `edit` rewrites one event. */
function asOlderEngine(events: readonly StoredEvent[], edit: (e: StoredEvent) => StoredEvent | undefined): StoredEvent[] {
  let edited = 0;
  const out = events.map((e) => {
    const changed = edit(e);
    if (changed === undefined) return e;
    edited++;
    return changed;
  });
  expect(edited).toBe(1);
  return out;
}

describe.each(backends)('%s: a run recorded before a correction of how an expression evaluates', (backend) => {
  async function recorded(): Promise<{ runId: string; events: StoredEvent[]; files: ReturnType<Conformance['mission']>; options: RunOptions }> {
    c = await openConformance({ backend });
    c.api.on('POST /marks', { status: 201, body: { mark: 1 } });
    const files = c.mission('corrected', MISSION);
    const result = await c.start(files);
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'out')).toEqual({ k: { id: 'k', v: null }, m: { id: 'm', mark: 1 } });
    return { runId: result.runId, events: await c.events(result.runId), files, options: (await c.log.getRun(result.runId))!.options };
  }

  async function verifyOlder(events: StoredEvent[], files: ReturnType<Conformance['mission']>, options: RunOptions) {
    older = await openTempLog(backend, {}, 'reqon-older-');
    const runId = await insertStoredRun(older.log, { events, missionFiles: files, options });
    return { runId, report: await verifyRun(older.log, runId, { env: c!.env }) };
  }

  it('diverges at the store write that recorded the old value', async () => {
    const { events, files, options } = await recorded();
    const old = asOlderEngine(events, (e) =>
      e.type === 'store.write' && (e.payload as { key: string }).key === 'k'
        ? ({ ...e, payload: { ...e.payload, record: { id: 'k', v: 16 } } } as StoredEvent)
        : undefined,
    );
    const { report } = await verifyOlder(old, files, options);
    expect(report.ok).toBe(false);
    expect(report.divergence).toMatchObject({ stepPath: 'A/0', cause: 'nondeterminism' });
    expect(report.divergence!.explanation).toContain('engine release');
  });

  it('diverges at the request whose body carried the old value, and a resume sends nothing', async () => {
    const { events, files, options } = await recorded();
    const bodySha256 = createHash('sha256').update(canonicalJson({ v: 16 })).digest('hex');
    const old = asOlderEngine(events, (e) => {
      if (e.type !== 'http.request') return undefined;
      const identity = (e.payload as { identity?: { bodySha256?: string } }).identity;
      expect(identity?.bodySha256).toMatch(/^[0-9a-f]{64}$/);
      expect(identity?.bodySha256).not.toBe(bodySha256);
      return { ...e, payload: { ...e.payload, identity: { ...identity, bodySha256 } } } as StoredEvent;
    });
    const { report } = await verifyOlder(old, files, options);
    expect(report.ok).toBe(false);
    expect(report.divergence).toMatchObject({ stepPath: 'A/1', cause: 'nondeterminism' });
    expect(report.divergence!.explanation).toMatch(/body/i);

    // Left mid-run by the older engine (its last store and end cut off), resumed by this one: it
    // stops at the request rather than answer the new body with the old one's response.
    const cut = old.findIndex((e) => e.type === 'http.response') + 1;
    const inFlight = await openTempLog(backend, {}, 'reqon-older-');
    try {
      const id = await insertStoredRun(inFlight.log, { events: old.slice(0, cut), missionFiles: files, options, crashed: true });
      const posts = c!.api.requests.length;
      const resumed = await continueRun(id, {}, c!.deps({ log: inFlight.log }));
      expect(resumed.status).toBe('failed');
      expect(resumed.status === 'failed' && resumed.error).toMatchObject({ code: 'NONDETERMINISM', message: expect.stringMatching(/step A\/1 .*the body of POST \/marks changed/) });
      // Its own mission: no advice to resume "with the original mission", which it already is.
      const message = resumed.status === 'failed' ? resumed.error.message : '';
      expect(message).toContain('the one the run started with');
      expect(message).toContain('engine release');
      expect(message).not.toContain('omit --mission');
      expect(c!.api.requests.length).toBe(posts);
      // Nothing of the new engine's own is recorded for the step: the log ends with its failure.
      const after = await inFlight.log.read(id);
      expect(after.slice(0, cut)).toEqual(old.slice(0, cut).map((e) => ({ ...e, runId: id })));
      expect(after.slice(cut).filter((e) => e.type === 'http.request' || e.type === 'store.write')).toEqual([]);
    } finally {
      await inFlight.close();
    }
  });
});

describe.each(backends)('%s: a page an older engine took for the last page', (backend) => {
  // Before 2026-12-02 a short page that said more follow ended the walk; this engine fails the
  // fetch there. The older engine's log is this engine's run with that page's answer in its place.
  const PAGED = `mission Paged {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    get "/items" { paginate: page(page, 10) }
    for r in response { store r -> out { key: .id } }
  }
  run A
}
`;
  const saysMore = { items: [{ id: 1 }, { id: 2 }], has_more: true };
  const olderPage = (e: StoredEvent): StoredEvent | undefined =>
    e.type === 'http.response' ? ({ ...e, payload: { ...e.payload, response: { ...(e.payload as { response: object }).response, body: saysMore } } } as StoredEvent) : undefined;

  it('diverges at the fetch on verify, and a resume from its answer fails the fetch rather than complete short', async () => {
    c = await openConformance({ backend });
    c.api.on('GET /items?page=1', { status: 200, body: { items: [{ id: 1 }, { id: 2 }], has_more: false } });
    const files = c.mission('paged', PAGED);
    const result = await c.start(files);
    expect(result.status).toBe('completed');
    const options = (await c.log.getRun(result.runId))!.options;
    const old = asOlderEngine(await c.events(result.runId), olderPage);

    older = await openTempLog(backend, {}, 'reqon-older-');
    const report = await verifyRun(older.log, await insertStoredRun(older.log, { events: old, missionFiles: files, options }), { env: c.env });
    expect(report.ok).toBe(false);
    expect(report.divergence).toMatchObject({ stepPath: 'A/0', cause: 'nondeterminism' });
    expect(report.divergence!.explanation).toContain('engine release');

    // Left by the older engine just after the page's answer: the walk's end is this engine's, and
    // it refuses the page instead of completing with two records.
    const cut = old.findIndex((e) => e.type === 'http.response') + 1;
    const inFlight = await openTempLog(backend, {}, 'reqon-older-');
    try {
      const id = await insertStoredRun(inFlight.log, { events: old.slice(0, cut), missionFiles: files, options, crashed: true });
      const gets = c.api.requests.length;
      const resumed = await continueRun(id, {}, c.deps({ log: inFlight.log }));
      expect(resumed.status).toBe('failed');
      expect(resumed.status === 'failed' && resumed.error).toMatchObject({ code: 'pagination', message: expect.stringContaining('yet says more pages follow (has_more: true)') });
      expect(c.api.requests.length).toBe(gets);
      expect((await inFlight.log.read(id)).filter((e) => e.type === 'store.write')).toEqual([]);
    } finally {
      await inFlight.close();
    }
  });
});
