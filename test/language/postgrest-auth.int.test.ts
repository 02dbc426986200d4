/**
 * assets/language/postgrest-auth.vague: an --auth file with a source's credentials and the
 * postgrest endpoints under "stores" side by side, as postgrest-store.ts documents it. The
 * credentials reader used to take "stores" for a source and refuse the file ("unknown credential
 * type"). The store is written through a PostgREST look-alike on 127.0.0.1 and read back in key order.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, writeAuthFile, type Conformance } from '../conformance/harness.js';
import { startFakePostgrest, type FakePostgrest } from '../stores/helpers/fake-postgrest.js';

const ENTRY = path.join(REPO, 'assets/language/postgrest-auth.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });
const TOKEN = 'api-token-0123456789';
const PG_KEY = 'pg-key-0123456789';

let c: Conformance;
let pg: FakePostgrest;

beforeEach(async () => {
  c = await openConformance();
  pg = await startFakePostgrest({ table: 'people', apiKey: PG_KEY });
  c.api
    .on('GET /people', { body: { people: [{ id: 'p2', active: true }, { id: 'p10', active: false }, { id: 'p1', active: true }] } })
    .on('POST /greet', { body: { ok: true } });
});

afterEach(async () => {
  await pg.close();
  await c.close();
});

describe('an auth file with credentials and postgrest stores', () => {
  it('authenticates the source, writes and reads the postgrest store, and replays clean', async () => {
    const authFile = writeAuthFile(c.dir, { Api: { type: 'bearer', token: TOKEN }, stores: { people: { url: pg.url, apiKey: PG_KEY } } });
    const result = await c.start(files(), { authFile });
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(c.api.requests.every((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect([...pg.rows.keys()].sort()).toEqual(['p1', 'p10', 'p2']);
    expect(pg.requests.every((r) => r.headers.apikey === PG_KEY)).toBe(true);
    expect(c.api.requests.filter((r) => r.url === '/greet').map((r) => r.body)).toEqual([{ id: 'p1' }, { id: 'p2' }]);
    await c.expectVerified(result.runId);
  });
});
