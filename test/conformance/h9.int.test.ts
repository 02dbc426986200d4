/**
 * §H9 — CRUD verbs, file/sql/nosql/postgrest stores, a second source, a since-expression, a
 * schedule that a normal run ignores.
 *
 * By our rules (LANGUAGE.md decision 4), not the reference's: `sql(...)`/`nosql(...)` stores are
 * real tables in the run's database, never JSON files in development mode — `audit_log` and
 * `archive` are read with log.readTable and no `audit_log.json`/`archive.json` appears; `tasks`
 * is a file store (`<dataDir>/tasks.json`); the postgrest store `remote` talks to a real (fake)
 * PostgREST endpoint served here, configured through REQON_STORE_REMOTE_URL in the Env vars
 * (the reference injected a memory adapter instead). Legacy declares `auth: basic` with no
 * credentials: a warning, and no Authorization header.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeApi, type RecordedRequest } from '../support/fake-api.js';
import { builtCli, missionFiles, openConformance, parseRunOutput, recordsOf, runCli, type Conformance } from './harness.js';

const CHANGE = { id: 'c1', op: 'delete' };

let c: Conformance;
let legacy: FakeApi;
let postgrest: FakeApi;
let remoteRows: Map<string, Record<string, unknown>>;

/** A PostgREST table `remote` keyed by `id`: single-row PUT upsert, GET by key, ordered list. */
function servePostgrest(api: FakeApi, rows: Map<string, Record<string, unknown>>): void {
  const put = (req: RecordedRequest) => {
    const row = req.body as Record<string, unknown>;
    rows.set(String(row.id), row);
    return { body: [row] };
  };
  api.on('PUT /remote?id=eq.c1', put);
  api.on('POST /remote?on_conflict=id', (req) => {
    const row = { ...(rows.get(String((req.body as { id: unknown }).id)) ?? {}), ...(req.body as Record<string, unknown>) };
    rows.set(String(row.id), row);
    return { body: [row] };
  });
  api.on('GET /remote?id=eq.c1', () => ({ body: rows.has('c1') ? [rows.get('c1')] : [] }));
  api.on('GET /remote?order=id', () => ({ body: [...rows.values()] }));
}

beforeEach(async () => {
  legacy = await new FakeApi().start();
  postgrest = await new FakeApi().start();
  remoteRows = new Map();
  servePostgrest(postgrest, remoteRows);
  c = await openConformance({ vars: { REQON_STORE_REMOTE_URL: postgrest.url } });
  c.api
    .on('POST /tasks', { body: { id: 7, title: 'A' } })
    .on('PUT /tasks/7', { body: { id: 7, title: 'B' } })
    .on('PATCH /tasks/7', { body: { id: 7, done: true } })
    .on('GET /changes?since=2024-01-01', { body: { changes: [CHANGE] } });
  legacy.on('DELETE /tasks/2', { body: {} });
});

afterEach(async () => {
  await c.close();
  await legacy.stop();
  await postgrest.stop();
});

function expectRequests(): void {
  expect(c.api.lines()).toEqual(['POST /tasks', 'PUT /tasks/7', 'PATCH /tasks/7', 'GET /changes?since=2024-01-01']);
  const post = c.api.requests[0]!.body as Record<string, unknown>;
  expect(Object.keys(post)).toEqual(['title', 'tags', 'createdAt']);
  expect(post.title).toBe('A');
  expect(post.tags).toEqual(['x', 'y']);
  expect(post.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  expect(c.api.requests[1]!.body).toEqual({ title: 'B' });
  expect(c.api.requests[2]!.body).toEqual({ done: true });
  for (const r of c.api.requests.slice(0, 3)) expect(typeof r.headers['idempotency-key']).toBe('string');

  expect(legacy.lines()).toEqual(['DELETE /tasks/2']);
  expect(legacy.requests[0]!.headers.authorization).toBeUndefined();
  expect(typeof legacy.requests[0]!.headers['idempotency-key']).toBe('string');
}

async function expectStores(dataDir: string, runId: string): Promise<void> {
  expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'tasks.json'), 'utf8'))).toEqual({ '7': { id: 7, title: 'A' } });
  expect(recordsOf(await c.log.readTable('sql', 'audit_log'))).toEqual({ c1: CHANGE });
  expect(recordsOf(await c.log.readTable('nosql', 'archive'))).toEqual({ c1: CHANGE });
  // No silent JSON-file fallback for sql/nosql.
  expect(fs.existsSync(path.join(dataDir, 'audit_log.json'))).toBe(false);
  expect(fs.existsSync(path.join(dataDir, 'archive.json'))).toBe(false);
  expect(Object.fromEntries(remoteRows)).toEqual({ c1: CHANGE });
  expect(postgrest.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.url}`)).toEqual(['PUT /remote?id=eq.c1']);

  const events = await c.events(runId);
  const checkpoints = events.filter((e) => e.type === 'checkpoint.advanced').map((e) => (e.payload as { key: string }).key);
  expect(checkpoints).toEqual(['Api:/changes']);
}

describe('H9 Crud', () => {
  it('runs Create, then Touch ‖ Remove, then Changes across two sources and four store kinds', async () => {
    const progress: string[] = [];
    const result = await c.start(missionFiles('h9'), { sources: { Api: c.api.url, Legacy: legacy.url } }, { progress: (l) => progress.push(l) });
    expect(result.status).toBe('completed');
    expect(result.tolerated).toEqual([]);
    expect(result.actionsRun[0]).toBe('Create');
    expect([...result.actionsRun.slice(1, 3)].sort()).toEqual(['Remove', 'Touch']);
    expect(result.actionsRun[3]).toBe('Changes');
    expect(result.actionsRun).toHaveLength(4);
    expect(progress.some((l) => /warning: source "Legacy" declares auth: basic but no credentials/.test(l))).toBe(true);
    expectRequests();
    await expectStores(c.dataDir, result.runId);
    await c.expectVerified(result.runId);
  });

  it('the built CLI runs it with two --source overrides and the PostgREST endpoint from the environment', async () => {
    const cli = await builtCli();
    const run = await runCli(
      cli,
      ['run', missionFiles('h9').entry, '--db', c.dbPath, '--source', `Api=${c.api.url}`, '--source', `Legacy=${legacy.url}`, '--json'],
      { cwd: c.dir, env: { REQON_DATA_DIR: c.dataDir, REQON_STORE_REMOTE_URL: postgrest.url } },
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/warning: source "Legacy" declares auth: basic/);
    const { runId, result } = parseRunOutput(run.stdout);
    expect(result.status).toBe('completed');
    expectRequests();
    await expectStores(c.dataDir, runId);
    await c.expectVerified(runId);
  });
});
