/**
 * §H3 — cursor and page pagination, incremental sync with a custom key and unix format.
 *
 * Run 1 sends exactly four requests (no page-size parameter anywhere) and records one checkpoint,
 * under key "events" (none for /pages). Run 2 — a second run of the same mission on the same
 * database — starts from it: our `lastSync` reads the latest `checkpoint.advanced` of earlier runs
 * of the same mission, so its first request carries `updated_since=floor(T/1000)`. On every log
 * backend (test/support/temp-log.ts): the checkpoint is read back from either.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../engine/log/events.js';
import { backends } from '../support/temp-log.js';
import { builtCli, cliStore, missionFiles, openConformance, parseRunOutput, runCli, type Conformance } from './harness.js';

const RUN1 = ['GET /events?updated_since=0', 'GET /events?updated_since=0&after=c2', 'GET /pages?p=1', 'GET /pages?p=2'];
const EVENTS = { e1: { id: 'e1' }, e2: { id: 'e2' }, e3: { id: 'e3' } };
const PAGES = { '1': { id: 1 }, '2': { id: 2 }, '3': { id: 3 } };

let c: Conformance;

function checkpoints(events: StoredEvent[]): { key: string; syncedAt: number }[] {
  return events.filter((e) => e.type === 'checkpoint.advanced').map((e) => e.payload as { key: string; syncedAt: number });
}

describe.each(backends)('%s: H3 Incremental', (backend) => {
  beforeEach(async () => {
    c = await openConformance({ backend });
    c.api
      .on('GET /events?updated_since=0', { body: { data: [{ id: 'e1' }, { id: 'e2' }], meta: { next: 'c2' } } })
      .on('GET /events?updated_since=0&after=c2', { body: { data: [{ id: 'e3' }], meta: { next: null } } })
      .on('GET /pages?p=1', { body: { results: [{ id: 1 }, { id: 2 }] } })
      .on('GET /pages?p=2', { body: { results: [{ id: 3 }] } });
  });

  afterEach(async () => {
    await c.close();
  });

  it('run 1: four requests in order, both stores, one checkpoint "events"; run 2 starts from floor(T/1000)', async () => {
    const before = Date.now();
    const r1 = await c.start(missionFiles('h3'));
    const after = Date.now();
    expect(r1.status).toBe('completed');
    expect(r1.actionsRun).toEqual(['SyncEvents', 'SyncPages']);
    expect(c.api.lines()).toEqual(RUN1);
    expect(await c.store(r1.runId, 'events')).toEqual(EVENTS);
    expect(await c.store(r1.runId, 'pages')).toEqual(PAGES);

    const cps = checkpoints(await c.events(r1.runId));
    expect(cps.map((p) => p.key)).toEqual(['events']);
    const T = cps[0]!.syncedAt;
    // V2: the fetch's start time, i.e. within the run.
    expect(T).toBeGreaterThanOrEqual(before);
    expect(T).toBeLessThanOrEqual(after);
    await c.expectVerified(r1.runId);

    const since = Math.floor(T / 1000);
    c.api.requests.length = 0;
    c.api.on(`GET /events?updated_since=${since}`, { body: { data: [{ id: 'e4' }], meta: { next: null } } });
    const r2 = await c.start(missionFiles('h3'));
    expect(r2.status).toBe('completed');
    expect(c.api.lines()).toEqual([`GET /events?updated_since=${since}`, 'GET /pages?p=1', 'GET /pages?p=2']);
    // Memory stores are run-local: run 2 holds what run 2 fetched.
    expect(await c.store(r2.runId, 'events')).toEqual({ e4: { id: 'e4' } });
    const cps2 = checkpoints(await c.events(r2.runId));
    expect(cps2.map((p) => p.key)).toEqual(['events']);
    expect(cps2[0]!.syncedAt).toBeGreaterThanOrEqual(T);
    await c.expectVerified(r2.runId);
  });

  it('the built CLI: two runs on one database, the second sends updated_since from the first', async () => {
    const cli = await builtCli();
    const args = ['run', missionFiles('h3').entry, '--db', c.dbPath, '--source', `Api=${c.api.url}`, '--json', '--quiet'];
    const opts = { cwd: c.dir, env: { REQON_DATA_DIR: c.dataDir } };
    const first = await runCli(cli, args, opts);
    expect(first.code).toBe(0);
    const { runId } = parseRunOutput(first.stdout);
    expect(c.api.lines()).toEqual(RUN1);
    expect(await cliStore(cli, c, runId, 'events')).toEqual(EVENTS);
    expect(await cliStore(cli, c, runId, 'pages')).toEqual(PAGES);

    const T = checkpoints(await c.events(runId))[0]!.syncedAt;
    const since = Math.floor(T / 1000);
    c.api.requests.length = 0;
    c.api.on(`GET /events?updated_since=${since}`, { body: { data: [], meta: { next: null } } });
    const second = await runCli(cli, args, opts);
    expect(second.code).toBe(0);
    expect(c.api.lines()[0]).toBe(`GET /events?updated_since=${since}`);
    expect(parseRunOutput(second.stdout).result.status).toBe('completed');
  });
});
