import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openPostgrestStore, type PostgrestStore } from '../../engine/stores/postgrest-store.js';
import { StoreError } from '../../engine/stores/store-error.js';
import { TransportError } from '../../engine/env/env.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../../engine/http/client.js';
import { fetchTransport } from './helpers/fetch-transport.js';
import { startFakePostgrest, type FakePostgrest } from './helpers/fake-postgrest.js';

const API_KEY = 'test-anon-key';
let server: FakePostgrest;
let store: PostgrestStore;

beforeEach(async () => {
  server = await startFakePostgrest({ table: 'orders', apiKey: API_KEY });
  store = openPostgrestStore({ url: `${server.url}/`, apiKey: API_KEY, table: 'orders' }, fetchTransport, 5_000);
});
afterEach(async () => {
  await server.close();
});

async function storeError(promise: Promise<unknown>): Promise<StoreError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(StoreError);
    return error as StoreError;
  }
  throw new Error('expected a StoreError');
}

describe('postgrest store: requests', () => {
  it('upsert of a new row reads it, then sends POST ?on_conflict with merge-duplicates, the key column and both auth headers', async () => {
    const out = await store.write([{ key: 'o1', record: { total: 5, status: 'new' }, op: 'upsert' }]);
    expect(out).toStrictEqual([{ key: 'o1', record: { total: 5, status: 'new', id: 'o1' } }]);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toStrictEqual(['GET /orders?id=eq.o1', 'POST /orders?on_conflict=id']);
    const req = server.requests[1];
    expect(req!.method).toBe('POST');
    expect(req!.url).toBe('/orders?on_conflict=id');
    expect(req!.headers['prefer']).toBe('resolution=merge-duplicates,return=representation');
    expect(req!.headers['apikey']).toBe(API_KEY);
    expect(req!.headers['authorization']).toBe(`Bearer ${API_KEY}`);
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['accept']).toBe('application/json');
    expect(req!.body).toStrictEqual({ total: 5, status: 'new', id: 'o1' });
  });

  it('set sends PUT ?<key>=eq.<key> (URL-encoded) with the full record and replaces the row', async () => {
    await store.write([{ key: 'a b&c', record: { total: 5, status: 'new' }, op: 'upsert' }]);
    const out = await store.write([{ key: 'a b&c', record: { status: 'void' }, op: 'set' }]);
    const put = server.requests[2]!;
    expect(put.method).toBe('PUT');
    expect(put.url).toBe('/orders?id=eq.a%20b%26c');
    expect(put.headers['prefer']).toBe('return=representation');
    expect(put.body).toStrictEqual({ status: 'void', id: 'a b&c' });
    expect(out).toStrictEqual([{ key: 'a b&c', record: { status: 'void', id: 'a b&c' } }]);
    expect(server.rows.get('a b&c')).toStrictEqual({ status: 'void', id: 'a b&c' });
  });

  it('upsert keeps the columns the record does not mention', async () => {
    await store.write([{ key: 'o1', record: { total: 5, status: 'new' }, op: 'set' }]);
    const [merged] = await store.write([{ key: 'o1', record: { status: 'paid' }, op: 'upsert' }]);
    expect(merged!.record).toStrictEqual({ total: 5, status: 'paid', id: 'o1' });
  });

  it('upsert of an existing row is a JSON Merge Patch: json columns merged key by key, arrays replaced, null deletes; then PUT', async () => {
    await store.write([{ key: 'o1', record: { meta: { a: 1, b: { c: 2, d: 3 } }, tags: ['x'], note: 'n', total: 1 }, op: 'set' }]);
    const [merged] = await store.write([{ key: 'o1', record: { meta: { b: { d: 4 } }, tags: ['y'], note: null }, op: 'upsert' }]);
    expect(merged!.record).toStrictEqual({ meta: { a: 1, b: { c: 2, d: 4 } }, tags: ['y'], total: 1, id: 'o1' });
    expect(server.requests.slice(1).map((r) => `${r.method} ${r.url}`)).toStrictEqual(['GET /orders?id=eq.o1', 'PUT /orders?id=eq.o1']);
  });

  it('is idempotent: replaying a batch leaves the same rows', async () => {
    const batch = [
      { key: 'o1', record: { total: 1 }, op: 'upsert' as const },
      { key: 'o2', record: { total: 2 }, op: 'set' as const },
      { key: 'o1', record: { paid: true }, op: 'upsert' as const },
    ];
    const first = await store.write(batch);
    const after = structuredClone([...server.rows.entries()]);
    const second = await store.write(batch);
    // The state is the same; an intermediate result may already show later fields of its key.
    expect(second[1]).toStrictEqual(first[1]);
    expect(second[2]).toStrictEqual(first[2]);
    expect(second[0]).toStrictEqual({ key: 'o1', record: { total: 1, id: 'o1', paid: true } });
    expect([...server.rows.entries()]).toStrictEqual(after);
    expect(await store.list()).toStrictEqual([
      { key: 'o1', record: { total: 1, id: 'o1', paid: true } },
      { key: 'o2', record: { total: 2, id: 'o2' } },
    ]);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toStrictEqual([
      'GET /orders?id=eq.o1',
      'POST /orders?on_conflict=id',
      'PUT /orders?id=eq.o2',
      'GET /orders?id=eq.o1',
      'PUT /orders?id=eq.o1',
      'GET /orders?id=eq.o1',
      'PUT /orders?id=eq.o1',
      'PUT /orders?id=eq.o2',
      'GET /orders?id=eq.o1',
      'PUT /orders?id=eq.o1',
      'GET /orders?order=id',
    ]);
  });

  it('keeps a numeric key column numeric and lists in plain string key order', async () => {
    await store.write([
      { key: '10', record: { id: 10, n: 'ten' }, op: 'upsert' },
      { key: '9', record: { id: 9, n: 'nine' }, op: 'upsert' },
    ]);
    expect((server.requests[1]!.body as { id: unknown }).id).toBe(10);
    expect((await store.list()).map((r) => r.key)).toStrictEqual(['10', '9']);
    expect(await store.get('9')).toStrictEqual({ id: 9, n: 'nine' });
    expect(server.requests.at(-1)!.url).toBe('/orders?id=eq.9');
    expect(await store.get('404')).toBeUndefined();
  });

  it('lists every row of a table PostgREST answers a page at a time (db-max-rows), asking on from the last key it got', async () => {
    server.maxRows = 3;
    const writes = Array.from({ length: 10 }, (_, i) => ({ key: `o${i}`, record: { n: i }, op: 'set' as const }));
    await store.write(writes);
    const before = server.requests.length;
    expect((await store.list()).map((r) => r.key)).toStrictEqual(writes.map((w) => w.key));
    expect(server.requests.slice(before).map((r) => r.url)).toStrictEqual(['/orders?order=id', '/orders?order=id&id=gt.o2', '/orders?order=id&id=gt.o5', '/orders?order=id&id=gt.o8']);
    expect(server.requests.at(-1)!.headers['prefer']).toBe('count=exact');
  });

  it('reads each row once while the table changes between pages, and fails on a server that gives a row again', async () => {
    server.maxRows = 3;
    await store.write(Array.from({ length: 7 }, (_, i) => ({ key: `p${i + 1}`, record: { n: i }, op: 'set' as const })));
    // Between the first and second page: a row inserted behind the last key read, one deleted ahead
    // of it. With offsets, p3 came twice and p4 never (the insert), or p4 was skipped (the delete).
    let gets = 0;
    server.afterGet = () => {
      if (++gets !== 1) return;
      server.rows.set('p0', { n: -1, id: 'p0' });
      server.rows.delete('p5');
    };
    expect((await store.list()).map((r) => r.key)).toStrictEqual(['p1', 'p2', 'p3', 'p4', 'p6', 'p7']);
    expect(gets).toBe(2);

    // A server that ignores the filter answers the first page again: refused, not looped or doubled.
    const ignoring = await startFakePostgrest({ table: 'orders' });
    try {
      ignoring.maxRows = 2;
      const other = openPostgrestStore({ url: ignoring.url, table: 'orders' }, fetchTransport, 5_000);
      await other.write([{ key: 'a', record: {}, op: 'set' }, { key: 'b', record: {}, op: 'set' }, { key: 'c', record: {}, op: 'set' }]);
      ignoring.ignoreFilters = true;
      const error = await storeError(other.list());
      expect(error.message).toBe('PostgREST list of "orders": row "a" came twice (asked for the rows after "b"); the store cannot be read whole');
    } finally {
      await ignoring.close();
    }
  });

  it('without Content-Range (a proxy dropped it) asks on from the last key until a page is empty, or a filter-ignoring server answers all again', async () => {
    server.maxRows = 3;
    server.noContentRange = true;
    const writes = Array.from({ length: 7 }, (_, i) => ({ key: `o${i}`, record: { n: i }, op: 'set' as const }));
    await store.write(writes);
    let before = server.requests.length;
    expect((await store.list()).map((r) => r.key)).toStrictEqual(writes.map((w) => w.key));
    expect(server.requests.slice(before).map((r) => r.url)).toStrictEqual(['/orders?order=id', '/orders?order=id&id=gt.o2', '/orders?order=id&id=gt.o5', '/orders?order=id&id=gt.o6']);

    // No paging and no filters (not PostgREST at all): the second answer is the first again, so the first was whole.
    server.maxRows = undefined;
    server.ignoreFilters = true;
    before = server.requests.length;
    expect((await store.list()).map((r) => r.key)).toStrictEqual(writes.map((w) => w.key));
    expect(server.requests.slice(before).map((r) => r.url)).toStrictEqual(['/orders?order=id', '/orders?order=id&id=gt.o6']);
  });

  it('uses a configured key column', async () => {
    const skuServer = await startFakePostgrest({ table: 'items', keyColumn: 'sku' });
    try {
      const items = openPostgrestStore({ url: skuServer.url, table: 'items', keyColumn: 'sku' }, fetchTransport, 5_000);
      await items.write([{ key: 'X-1', record: { qty: 3 }, op: 'upsert' }]);
      await items.write([{ key: 'X-1', record: { qty: 4 }, op: 'set' }]);
      expect(skuServer.requests.map((r) => `${r.method} ${r.url}`)).toStrictEqual(['GET /items?sku=eq.X-1', 'POST /items?on_conflict=sku', 'PUT /items?sku=eq.X-1']);
      expect(skuServer.requests[1]!.headers['apikey']).toBeUndefined(); // no key configured, none sent
      expect(skuServer.requests[1]!.headers['authorization']).toBeUndefined();
      expect(await items.list()).toStrictEqual([{ key: 'X-1', record: { qty: 4, sku: 'X-1' } }]);
    } finally {
      await skuServer.close();
    }
  });

  it('reads the row back when the server ignores return=representation', async () => {
    server.noRepresentation = true;
    const out = await store.write([{ key: 'o1', record: { total: 5 }, op: 'upsert' }]);
    expect(out).toStrictEqual([{ key: 'o1', record: { total: 5, id: 'o1' } }]);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toStrictEqual(['GET /orders?id=eq.o1', 'POST /orders?on_conflict=id', 'GET /orders?id=eq.o1']);
  });
});

describe('postgrest store: delete S[k]', () => {
  it('sends DELETE ?<key>=eq.<key> (URL-encoded), removes only that row, and says whether there was one', async () => {
    await store.write([
      { key: 'a b&c', record: { total: 5 }, op: 'set' },
      { key: 'o2', record: { total: 7 }, op: 'set' },
    ]);
    server.requests.length = 0;
    const out = await store.write([{ key: 'a b&c', record: {}, op: 'delete' }]);
    expect(out).toStrictEqual([{ key: 'a b&c', record: null, removed: true }]);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toStrictEqual(['DELETE /orders?id=eq.a%20b%26c']);
    expect(server.requests[0]!.headers['prefer']).toBe('return=representation');
    expect(server.requests[0]!.headers['apikey']).toBe(API_KEY);
    expect([...server.rows.keys()]).toStrictEqual(['o2']);
  });

  it('is idempotent: deleting an absent key (or the same key again) is no error and removes nothing', async () => {
    await store.write([{ key: 'o1', record: { total: 5 }, op: 'set' }]);
    const batch = [{ key: 'o1', record: {}, op: 'delete' as const }, { key: 'o1', record: {}, op: 'delete' as const }, { key: 'zz', record: {}, op: 'delete' as const }];
    expect(await store.write(batch)).toStrictEqual([
      { key: 'o1', record: null, removed: true },
      { key: 'o1', record: null, removed: false },
      { key: 'zz', record: null, removed: false },
    ]);
    expect(server.rows.size).toBe(0);
  });

  it('without return=representation it reads the key back: gone, with `removed` unknown; still there is an error', async () => {
    await store.write([{ key: 'o1', record: { total: 5 }, op: 'set' }]);
    server.noRepresentation = true;
    expect(await store.write([{ key: 'o1', record: {}, op: 'delete' }])).toStrictEqual([{ key: 'o1', record: null }]);
    // A server that answers 204 yet keeps the row (row-level security without a DELETE policy).
    await store.write([{ key: 'o1', record: { total: 5 }, op: 'set' }]);
    server.keepOnDelete = true;
    const error = await storeError(store.write([{ key: 'o1', record: {}, op: 'delete' }]));
    expect(error.message).toMatch(/DELETE of "o1" from "orders" succeeded but the row is still there; check the table's row-level security for DELETE/);
  });
});

describe('postgrest store: failures', () => {
  it('a rejected API key is an error with the status and the body', async () => {
    const wrong = openPostgrestStore({ url: server.url, apiKey: 'nope', table: 'orders' }, fetchTransport, 5_000);
    const err = await storeError(wrong.write([{ key: 'o1', record: {}, op: 'upsert' }]));
    expect(err.code).toBe('store.http');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain(`PostgREST GET ${server.url}/orders?id=eq.o1 answered 401`);
    expect(err.message).toContain('Invalid API key');
    expect(err.message).not.toContain('nope');
    expect(server.rows.size).toBe(0);
  });

  it('5xx is retryable and long bodies are cut', async () => {
    server.failWith = { status: 503, body: `{"message":"${'overloaded '.repeat(100)}"}` };
    const err = await storeError(store.list());
    expect(err.code).toBe('store.http');
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/answered 503: \{"message":"overloaded/);
    expect(err.message.length).toBeLessThan(450);
  });

  it('an unknown table is a 404 error naming the relation', async () => {
    const other = openPostgrestStore({ url: server.url, apiKey: API_KEY, table: 'missing' }, fetchTransport, 5_000);
    const err = await storeError(other.get('x'));
    expect(err.message).toMatch(/answered 404: .*relation \\"public\.missing\\" does not exist/);
  });

  it('a record whose key column disagrees with its key is refused before any request', async () => {
    const err = await storeError(store.write([{ key: 'sku-1', record: { id: 7 }, op: 'upsert' }]));
    expect(err.code).toBe('store.bad-key');
    expect(err.message).toContain(`the record's "id" is number (7) but its store key is "sku-1"`);
    expect(server.requests).toHaveLength(0);
  });

  it('a body that is not JSON or not rows is an error', async () => {
    server.failWith = { status: 200, body: '<html>proxy</html>' };
    expect((await storeError(store.list())).message).toMatch(/answered 200 with a body that is not JSON: <html>proxy<\/html>/);
    server.failWith = { status: 200, body: '{"rows": 1}' };
    expect((await storeError(store.list())).message).toMatch(/returned object \(\{"rows":1\}\) where an array of rows was expected/);
    server.failWith = { status: 200, body: '[{"name": "no key"}]' };
    expect((await storeError(store.list())).message).toMatch(/row #0 has no "id"/);
  });

  it('rows nested deeper than a run takes, or holding a number beyond a float, are refused, not stored or crashed on later', async () => {
    // Helper 42: a 3000-level row was taken (and `reqon store` then overflowed the stack); 1e400 became null.
    server.failWith = { status: 200, body: `[{"id":"a","deep":${'['.repeat(300)}${']'.repeat(300)}}]` };
    expect((await storeError(store.list())).message).toMatch(/answered 200 with rows the run cannot take: the JSON is nested deeper than 256 levels/);
    server.failWith = { status: 200, body: '[{"id":"a","n":1e400}]' };
    expect((await storeError(store.list())).message).toMatch(/rows the run cannot take: .*holds Infinity at \$\[0\]\.n/);
  });

  it('reads at most the bytes a source answer may have, and says so rather than retry', async () => {
    const asked: (number | undefined)[] = [];
    const capped = openPostgrestStore({ url: server.url, apiKey: API_KEY, table: 'orders' }, {
      send(request) {
        asked.push(request.maxResponseBytes);
        return Promise.reject(new TransportError(`${request.method} ${request.url} failed: the response body is larger than ${request.maxResponseBytes} bytes`, 'too-large'));
      },
    }, 5_000);
    const err = await storeError(capped.list());
    expect(asked).toEqual([DEFAULT_MAX_RESPONSE_BYTES]);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain(`larger than ${DEFAULT_MAX_RESPONSE_BYTES} bytes (a PostgREST table is read whole; at most ${DEFAULT_MAX_RESPONSE_BYTES} bytes of rows a read)`);
  });

  it('an unreachable endpoint is a retryable transport error', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const gone = openPostgrestStore({ url: `http://127.0.0.1:${port}`, table: 'orders' }, fetchTransport, 2_000);
    const err = await storeError(gone.list());
    expect(err.code).toBe('store.transport');
    expect(err.retryable).toBe(true);
    expect(err.message).toContain(`PostgREST GET http://127.0.0.1:${port}/orders?order=id failed`);
  });

  it('rejects table and column names that are not identifiers', () => {
    expect(() => openPostgrestStore({ url: server.url, table: 'orders?select=*' }, fetchTransport, 1_000)).toThrow(
      'postgrest table "orders?select=*" must be a plain identifier (letters, digits, _)',
    );
    expect(() => openPostgrestStore({ url: server.url, table: 'orders', keyColumn: 'id;drop' }, fetchTransport, 1_000)).toThrow(
      /postgrest key column "id;drop" must be a plain identifier/,
    );
  });
});
