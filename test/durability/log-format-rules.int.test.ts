/**
 * A run keeps the rules it was recorded by (events.ts LOG_FORMAT). Format 4 made `key` a
 * credential word (`Ocp-Apim-Subscription-Key`, `?key=`): had a run recorded in format 3 been
 * replayed by the format-4 rule, its request with `?key=public-filter` would have been asked for
 * as `key=[REDACTED]` and diverged, failing an in-flight run after the upgrade. Here a run whose
 * `run.started` says format 3 is carried on by this engine: it records and replays by the
 * format-3 rule, and verifies clean; a run of this engine's format redacts by the new one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { resumeRun } from '../../engine/executor/run-resume.js';
import { prepareNewRun } from '../../engine/executor/run-start.js';
import { verifyRun } from '../../engine/executor/verify.js';
import type { StoredEvent } from '../../engine/log/events.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const MISSION = `mission KeyNames {
  source Api { auth: none, base: "http://127.0.0.1:1", headers: { "Ocp-Apim-Subscription-Key": "\${SUB}" } }
  action A {
    get "/items?key=public-filter"
  }
  run A
}
`;

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

/**
 * A run of `files` whose `run.started` says log format `format`, as an engine of that format
 * recorded it, that crashed before its first step and is carried on by this engine.
 */
async function carriedFromFormat(c: Conformance, files: Parameters<typeof prepareNewRun>[0], options: Parameters<typeof prepareNewRun>[1], format: number) {
  const old = prepareNewRun(files, options, c.deps());
  old.first[0] = { ...old.first[0]!, payload: { ...(old.first[0]!.payload as object), format } } as (typeof old.first)[0];
  const { lease } = await c.log.createRun(old.run, 'gone-host:1:w', 1, old.first);
  await c.log.release(lease);
  return resumeRun(old.run.runId, {}, c.deps());
}

/** The recorded request's URL and the header as the log holds them. */
function recordedRequest(events: StoredEvent[]): { url: string; header: string | undefined } {
  const request = events.find((e) => e.type === 'http.request')!.payload as { request: { url: string; headers: Record<string, string> } };
  const header = Object.entries(request.request.headers).find(([name]) => name.toLowerCase() === 'ocp-apim-subscription-key')?.[1];
  return { url: request.request.url, header };
}

describe.each(backends)('%s: the credential-name rule a run was recorded by', (backend) => {
  it('a format-3 run carried on by this engine keeps the format-3 rule and verifies clean; a new run redacts `key` names', async () => {
    c = await openConformance({ backend });
    c.api.on('GET /items?key=public-filter', { body: [{ id: 1 }] });
    const files = c.mission('key-names', MISSION);
    const options = { sources: { Api: c.api.url }, env: { SUB: 'sub-0123456789abcdef' } };

    // Recorded by an engine of format 3: its run.started says so; it crashed before its first step.
    const carried = await carriedFromFormat(c, files, options, 3);
    expect(carried.status).toBe('completed');
    const before = recordedRequest(await c.events(carried.runId));
    expect(before.url).toContain('key=public-filter');
    expect(before.header).toBe('sub-0123456789abcdef');
    const oldReport = await verifyRun(c.log, carried.runId, { env: c.env });
    expect(oldReport.divergence, JSON.stringify(oldReport.divergence)).toBeNull();

    // This engine's own format: the new rule.
    const fresh = await c.start(files, options);
    expect(fresh.status).toBe('completed');
    const now = recordedRequest(await c.events(fresh.runId));
    expect(now.url).toContain('key=[REDACTED]');
    expect(now.header).toBe('[REDACTED]');
    const freshReport = await verifyRun(c.log, fresh.runId, { env: c.env });
    expect(freshReport.divergence).toBeNull();
  });

  it('a format-3 run keeps a since fetch answered 204 as null; this engine\'s format takes it as an empty list', async () => {
    c = await openConformance({ backend });
    c.api.on('GET /changes?*', { status: 204 });
    const files = c.mission('since-204', `mission Since204 {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store seen: memory("seen")
  action A {
    get "/changes" { since: lastSync }
    store { id: "r", empty: response == null } -> seen { key: .id }
  }
  run A
}
`);
    const options = { sources: { Api: c.api.url }, env: {} };
    const carried = await carriedFromFormat(c, files, options, 3);
    expect(carried.status, carried.status === 'failed' ? carried.error.message : '').toBe('completed');
    expect(await c.store(carried.runId, 'seen')).toEqual({ r: { id: 'r', empty: true } });
    expect((await verifyRun(c.log, carried.runId, { env: c.env })).divergence).toBeNull();
    const fresh = await c.start(files, options);
    expect(await c.store(fresh.runId, 'seen')).toEqual({ r: { id: 'r', empty: false } });
  });

  it("a format-6 run keeps a plain GET answered 204 as null; this engine's format takes it as an empty list, a write's as null", async () => {
    // Helper 79: `get "/changes"` answered 204, then `store response -> S`, failed the run on its null.
    c = await openConformance({ backend });
    c.api.on('GET /changes', { status: 204 });
    c.api.on('POST /ping', { status: 204 });
    // A JSON `null` is an answer (Firebase's "no data"), not an empty body (helper 82).
    c.api.on('GET /nothing', { raw: 'null', headers: { 'content-type': 'application/json' } });
    const files = c.mission('get-204', `mission Get204 {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store seen: memory("seen")
  store changes: memory("changes")
  action A {
    get "/changes"
    store { id: "read", empty: response == null, n: length(response ?? []) } -> seen { key: .id }
    store response -> changes { key: .id }
    post "/ping" { body: {} }
    store { id: "write", empty: response == null } -> seen { key: .id }
    get "/nothing"
    store { id: "null", empty: response == null } -> seen { key: .id }
  }
  run A
}
`);
    const options = { sources: { Api: c.api.url }, env: {} };
    const carried = await carriedFromFormat(c, files, options, 6);
    // As it ran before: the store of a null response fails it, and it verifies as recorded.
    expect(carried.status).toBe('failed');
    expect((await verifyRun(c.log, carried.runId, { env: c.env })).divergence).toBeNull();
    const fresh = await c.start(files, options);
    expect(fresh.status, fresh.status === 'failed' ? fresh.error.message : '').toBe('completed');
    expect(await c.store(fresh.runId, 'seen')).toEqual({ read: { id: 'read', empty: false, n: 0 }, write: { id: 'write', empty: true }, null: { id: 'null', empty: true } });
    expect(await c.store(fresh.runId, 'changes')).toEqual({});
    expect((await verifyRun(c.log, fresh.runId, { env: c.env })).divergence).toBeNull();
  });

  it("a format-6 run keeps the evaluation rules it ran by (`in`, a match expression's schema arm), this engine's format the new ones; each verifies clean", async () => {
    c = await openConformance({ backend });
    const files = c.mission('eval-rules', `mission EvalRules {
  store seen: memory("seen")
  schema Card { brand: string }
  action A {
    let o = { id: 1, pay: { brand: "visa" } }
    let kind = match o.pay { Card => "card", _ => "other" }
    store { id: "r", missingIn: o.status in [null, "draft"], kind: kind } -> seen { key: .id }
  }
  run A
}
`);
    const options = { sources: {}, env: {} };
    const carried = await carriedFromFormat(c, files, options, 6);
    expect(carried.status).toBe('completed');
    expect(await c.store(carried.runId, 'seen')).toEqual({ r: { id: 'r', missingIn: false, kind: 'other' } });
    expect((await verifyRun(c.log, carried.runId, { env: c.env })).divergence).toBeNull();
    const fresh = await c.start(files, options);
    expect(await c.store(fresh.runId, 'seen')).toEqual({ r: { id: 'r', missingIn: true, kind: 'card' } });
    expect((await verifyRun(c.log, fresh.runId, { env: c.env })).divergence).toBeNull();
  });

  it("a format-7 run keeps an until that holds by counting an object of a full page; this engine's format refuses it; each verifies clean", async () => {
    c = await openConformance({ backend });
    c.api.on('GET /users?offset=0', { body: { users: [{ id: 'u1' }, { id: 'u2' }], total: 4 } });
    c.api.on('GET /users?offset=2', { body: { users: [{ id: 'u3' }, { id: 'u4' }], total: 4 } });
    const files = c.mission('count-object', `mission CountObject {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store users: memory("users")
  action A {
    get "/users" { paginate: offset(offset, 2), until: length(response) == 0 }
    store response -> users { key: .id }
  }
  run A
}
`);
    const options = { sources: { Api: c.api.url }, env: {} };
    const carried = await carriedFromFormat(c, files, options, 7);
    // As it ran before: one page, completed (the trap this engine's format refuses).
    expect(carried.status).toBe('completed');
    expect(Object.keys(await c.store(carried.runId, 'users'))).toEqual(['u1', 'u2']);
    expect((await verifyRun(c.log, carried.runId, { env: c.env })).divergence).toBeNull();
    const fresh = await c.start(files, options);
    expect(fresh.status).toBe('failed');
    expect((await verifyRun(c.log, fresh.runId, { env: c.env })).divergence).toBeNull();
  });

  it("a format-7 run keeps a wait's storage key made by String(); this engine's format refuses an object key", async () => {
    c = await openConformance({ backend });
    const files = c.mission('wait-key', `mission WaitKey {
  store got: memory("got")
  action A {
    wait { path: "/orders", timeout: 600000, storage: { target: got, key: .id } }
  }
  run A
}
`);
    const options = { sources: {}, env: {} };
    const carried = await carriedFromFormat(c, files, options, 7);
    expect(carried.status).toBe('suspended');
    const fresh = await c.start(files, options);
    expect(fresh.status).toBe('suspended');
    await c.log.deliverWebhook('/orders', 'o1', { id: { shop: 'eu' } }, Date.now());
    await c.log.deliverWebhook('/orders', 'o2', { id: { shop: 'us' } }, Date.now());
    // As it ran before: the key is "[object Object]".
    const old = await resumeRun(carried.runId, {}, c.deps());
    expect(old.status).toBe('completed');
    expect(Object.keys(await c.store(carried.runId, 'got'))).toEqual(['[object Object]']);
    expect((await verifyRun(c.log, carried.runId, { env: c.env })).divergence).toBeNull();
    const now = await resumeRun(fresh.runId, {}, c.deps());
    expect(now.status).toBe('failed');
  });
});
