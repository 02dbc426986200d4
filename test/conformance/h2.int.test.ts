/**
 * §H2 — offset pagination, until, retry on 5xx, bearer auth, source headers, `store each`, upsert.
 *
 * Decision (ours, not the reference's): `memory` stores are run-local state, folded from the run's
 * own log, so a test cannot pre-seed one. H2 therefore runs a copy of h2.vague whose `items` is a
 * `sql("items")` store, seeded with `"a": {sku:"a", old:true}` by an earlier run of a tiny seed
 * mission in the same database: the upsert merge under test is the same. The circuit breaker's
 * `resetTimeout: 1` is 1 ms in our engine (it never opens here: one 503 is below the threshold).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  builtCli,
  cliStore,
  missionFiles,
  openConformance,
  parseRunOutput,
  recordsOf,
  runCli,
  writeAuthFile,
  type Conformance,
} from './harness.js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MissionFiles } from '../../engine/log/log.js';

const SEED = `mission Seed {
  source Api { auth: none, base: "http://fake.test" }
  store items: sql("items")
  action Seed {
    store { sku: "a", old: true } -> items { key: .sku }
  }
  run Seed
}
`;

const EXPECTED = {
  a: { sku: 'a', old: true, n: 1 },
  b: { sku: 'b', n: 2 },
  c: { sku: 'c', n: 3 },
};

let c: Conformance;
let h2: MissionFiles;
let seed: MissionFiles;
let auth: string;

beforeEach(async () => {
  c = await openConformance();
  h2 = missionFiles('h2', (t) => t.replace('store items: memory("items")', 'store items: sql("items")'), c.dir);
  const seedPath = path.join(c.dir, 'seed.vague');
  fs.writeFileSync(seedPath, SEED);
  seed = { entry: seedPath, files: [{ path: seedPath, text: SEED }] };
  auth = writeAuthFile(c.dir, { Api: { type: 'bearer', token: 't0k' } });
  c.api
    .on('GET /items?offset=0', { body: { items: [{ sku: 'a', n: 1 }, { sku: 'b', n: 2 }] } })
    .on('GET /items?offset=2', [{ status: 503, body: {} }, { body: { items: [{ sku: 'c', n: 3 }] } }]);
});

afterEach(async () => {
  await c.close();
});

function expectRequests(): void {
  // No offset=4: the second page had 1 < 2 items.
  expect(c.api.lines()).toEqual(['GET /items?offset=0', 'GET /items?offset=2', 'GET /items?offset=2']);
  for (const r of c.api.requests) {
    expect(r.headers.authorization).toBe('Bearer t0k');
    // V2 sends source headers (V1 never did; LANGUAGE.md decision 4).
    expect(r.headers['x-client']).toBe('conformance');
    expect(r.headers.accept).toBe('application/json');
  }
}

describe('H2 Paged', () => {
  it('pages by offset, retries the 503 once, sends bearer + X-Client, and upserts into the seeded store', async () => {
    const seeded = await c.start(seed);
    expect(seeded.status).toBe('completed');
    expect(await c.log.readTable('sql', 'items')).toEqual([{ key: 'a', record: { sku: 'a', old: true } }]);
    expect(c.api.lines()).toEqual([]);

    const result = await c.start(h2, { authFile: auth });
    expect(result.status).toBe('completed');
    expect(result.actionsRun).toEqual(['Fetch']);
    expect(result.tolerated).toEqual([]);
    expectRequests();
    expect(c.api.requests[1]!.headers.authorization).toBe('Bearer t0k');

    expect(recordsOf(await c.log.readTable('sql', 'items'))).toEqual(EXPECTED);
    // The run's own writes, as stored (after the merge): `store each` over the flat array of 3 items.
    expect(await c.store(result.runId, 'items')).toEqual(EXPECTED);
    const events = await c.events(result.runId);
    expect(events.filter((e) => e.type === 'store.write')).toHaveLength(3);
    const verdicts = events.filter((e) => e.type === 'http.response').map((e) => (e.payload as { response: { status: number } }).response.status);
    expect(verdicts).toEqual([200, 503, 200]);
    // The token never reaches the log.
    expect(JSON.stringify(events)).not.toContain('t0k');
    await c.expectVerified(seeded.runId);
    await c.expectVerified(result.runId);
  });

  it('the built CLI runs the seed and H2 with --auth, and `reqon store` shows the merged records', async () => {
    const cli = await builtCli();
    const opts = { cwd: c.dir, env: { REQON_DATA_DIR: c.dataDir } };
    const s = await runCli(cli, ['run', seed.entry, '--db', c.dbPath, '--json', '--quiet'], opts);
    expect(s.code).toBe(0);
    const run = await runCli(cli, ['run', h2.entry, '--db', c.dbPath, '--source', `Api=${c.api.url}`, '--auth', auth, '--json', '--quiet'], opts);
    // H2's token (`t0k`) is too short to be told apart from data: the CLI says so, and nothing else.
    expect(run.stderr).toBe('warning: a credential of source "Api" is shorter than 8 characters, too short to be told apart from data; it is redacted in headers and query parameters only\n');
    expect(run.code).toBe(0);
    const { runId, result } = parseRunOutput(run.stdout);
    expect(result.status).toBe('completed');
    expectRequests();
    expect(await cliStore(cli, c, runId, 'items')).toEqual(EXPECTED);
    expect(recordsOf(await c.log.readTable('sql', 'items'))).toEqual(EXPECTED);
    await c.expectVerified(runId);
  });
});
