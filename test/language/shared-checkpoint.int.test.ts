/**
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
const ORDERS = [
  { id: 'o1', status: 'open', updatedAt: '2020-01-01T00:00:00.000Z' },
  { id: 'c1', status: 'closed', updatedAt: '2020-01-02T00:00:00.000Z' },
];

let c: Conformance;
let server: http.Server;
let api: string;
/** Each request the API was asked, as `/path?query`. */
let served: string[];

beforeEach(async () => {
  c = await openConformance();
  served = [];
  // An API that filters by status and since, as a real one would, whatever since it is given.
  server = http.createServer((req, res) => {
    served.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    const since = url.searchParams.get('since') ?? '';
    const status = url.searchParams.get('status');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ORDERS.filter((o) => o.status === status && o.updatedAt > since)));
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
