/**
 * assets/language/shared-checkpoint-loop.vague: the same fetch in a loop over accounts, with
 * `params: { account: a.id }` and a bare lastSync: one checkpoint for every account. An account
 * the API gains after a first run was asked `since=<that run>` and its older orders were never
 * fetched, in a run that completed. Now the second account's fetch is refused, saying to key each
 * (`lastSync(concat(…, a.id))`, an expression evaluated per request); keyed, a new account
 * starts from the beginning.
 *
 * assets/language/shared-checkpoint.vague: two `since: lastSync` fetches of GET /orders, one with
 * `params: { status: "open" }`, one with `{ status: "closed" }`. A bare lastSync keys its
 * checkpoint by source and path without the query (`Api:/orders`), so the second fetch read the
 * checkpoint the first had just advanced: it asked `?status=closed&since=<a moment ago>`, the
 * closed orders (older than that) were never fetched, and the run completed with none stored.
 * Now the second fetch fails, saying the two share a checkpoint and how to key each.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/shared-checkpoint.vague');
const TEXT = fs.readFileSync(ENTRY, 'utf8');
const LOOP_ENTRY = path.join(REPO, 'assets/language/shared-checkpoint-loop.vague');
const LOOP_TEXT = fs.readFileSync(LOOP_ENTRY, 'utf8');
const ORDERS = [
  { id: 'o1', status: 'open', account: 'A', updatedAt: '2020-01-01T00:00:00.000Z' },
  { id: 'c1', status: 'closed', account: 'B', updatedAt: '2020-01-02T00:00:00.000Z' },
];
/** The accounts GET /accounts lists: a test adds one between runs. */
let accounts: string[];

let c: Conformance;
let server: http.Server;
let api: string;
/** Each request the API was asked, as `/path?query`. */
let served: string[];

beforeEach(async () => {
  c = await openConformance();
  served = [];
  accounts = ['A'];
  // An API that filters by status or account and since, as a real one would, whatever since it is given.
  server = http.createServer((req, res) => {
    served.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    res.writeHead(200, { 'content-type': 'application/json' });
    if (url.pathname === '/accounts') return void res.end(JSON.stringify(accounts.map((id) => ({ id }))));
    const since = url.searchParams.get('since') ?? '';
    const status = url.searchParams.get('status');
    const account = url.searchParams.get('account');
    res.end(JSON.stringify(ORDERS.filter((o) => (status === null || o.status === status) && (account === null || o.account === account) && o.updatedAt > since)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  await c.close();
});

describe('two syncs of one path with different queries', () => {
  it('refuse to share the checkpoint of a bare lastSync', async () => {
    const result = await c.start({ entry: ENTRY, files: [{ path: ENTRY, text: TEXT }] }, { sources: { Api: api } });
    // Before: completed, closed = {} — the closed sync asked since the open sync's checkpoint.
    expect(result.status).toBe('failed');
    // The closed sync was refused before it was sent.
    expect(served).toEqual([`/orders?status=open&since=${encodeURIComponent('1970-01-01T00:00:00.000Z')}`]);
    expect(result.status === 'failed' ? result.error.message : '').toMatch(/^checkpoint "Api:\/orders" .*\/orders\?status=open .*\/orders\?status=closed .*lastSync\("/);
    expect(await c.store(result.runId, 'open')).toEqual({ o1: ORDERS[0] });
    await c.expectVerified(result.runId);

    // Keyed each its own, both syncs fetch from the start and store their orders.
    const keyed = c.mission(
      'keyed',
      TEXT.replace('params: { status: "open" }, since: lastSync', 'params: { status: "open" }, since: lastSync("open-orders")').replace(
        'params: { status: "closed" }, since: lastSync',
        'params: { status: "closed" }, since: lastSync("closed-orders")',
      ),
    );
    const again = await c.start(keyed, { sources: { Api: api } });
    expect(again.status).toBe('completed');
    expect(await c.store(again.runId, 'closed')).toEqual({ c1: ORDERS[1] });
  });
});

describe('one sync per account in a loop', () => {
  it('refuses one checkpoint for every account, and keeps one per account when keyed so', async () => {
    const files = { entry: LOOP_ENTRY, files: [{ path: LOOP_ENTRY, text: LOOP_TEXT }] };
    // One account: nothing to tell apart yet.
    expect((await c.start(files, { sources: { Api: api } })).status).toBe('completed');
    // The API gains account B, whose order predates the first run's checkpoint. Before: B was
    // asked since that checkpoint, its order never fetched, and the run completed.
    accounts = ['A', 'B'];
    served = [];
    const shared = await c.start(files, { sources: { Api: api } });
    expect(shared.tolerated.map((t) => t.message)).toEqual([expect.stringMatching(/^checkpoint "Api:\/orders" .* every request of step Sync\/1\/0.*\/orders\?account=A.*\/orders\?account=B.*lastSync\(concat\(/)]);
    expect(served.some((u) => u.startsWith('/orders?account=B'))).toBe(false);
    expect(await c.store(shared.runId, 'orders')).toEqual({});
    await c.expectVerified(shared.runId);

    // Keyed per account: the first keyed run fetches each from the start; in the next, each
    // account asks since its own checkpoint, and an account added later starts from the start.
    const keyed = c.mission('keyed-loop', LOOP_TEXT.replace('since: lastSync }', 'since: lastSync(concat("orders:", account.id)) }'));
    const first = await c.start(keyed, { sources: { Api: api } });
    expect(first.status).toBe('completed');
    expect(first.tolerated).toEqual([]);
    expect(await c.store(first.runId, 'orders')).toEqual({ o1: ORDERS[0], c1: ORDERS[1] });
    accounts = ['A', 'B', 'C'];
    served = [];
    const next = await c.start(keyed, { sources: { Api: api } });
    expect(next.status).toBe('completed');
    const sinceOf = (account: string) => new URL(served.find((u) => u.startsWith(`/orders?account=${account}&`))!, 'http://x').searchParams.get('since');
    expect(sinceOf('A')).not.toBe('1970-01-01T00:00:00.000Z');
    expect(sinceOf('B')).not.toBe('1970-01-01T00:00:00.000Z');
    expect(sinceOf('C')).toBe('1970-01-01T00:00:00.000Z');
    await c.expectVerified(next.runId);
  });

  it('fails a request whose lastSync key is not a string', async () => {
    const keyed = c.mission('bad-key', LOOP_TEXT.replace('since: lastSync }', 'since: lastSync(account.missing) }'));
    const result = await c.start(keyed, { sources: { Api: api } });
    expect(result.tolerated.map((t) => t.message)).toEqual(['the checkpoint key of lastSync(…) must be a non-empty string, got absent (no value)']);
    expect(served.filter((u) => u.startsWith('/orders'))).toEqual([]);
  });
});
