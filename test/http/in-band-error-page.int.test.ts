/**
 * A page in the middle of a paginated fetch that answers 200 with an in-band error
 * (`{ "error": "rate limited" }`) held no items, so the pagination ended there as at the last
 * page: the run completed (exit 0) with the records of the pages before it, and those after it
 * were never asked for. A page answered 2xx with an error and no other list now fails the fetch,
 * naming the page, its URL and the body's start, on any page, the first too (its errors were
 * stored as records). An empty list, a 204, a page with no list and no error (`{}`, a message:
 * what APIs answer past an exactly full last page) or an `until` that names the end still end it —
 * the contrast that shows the test tells them apart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeResult, type CliResult } from '../durability/support/cli-build.js';
import { openCliDir, syncMission, type CliDir } from './cli-sync.js';
import { json, startServer, type LocalServer } from './local-server.js';

let cli: CliDir;
let server: LocalServer;
/** What page 3 of /items answers. */
let third: { status: number; body: unknown } = { status: 200, body: { error: 'rate limited' } };


const rows = (from: number) => [{ id: from }, { id: from + 1 }];

beforeAll(async () => {
  cli = openCliDir('reqon-in-band-');
  server = await startServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const page = Number(url.searchParams.get('page') ?? 0);
    const offset = Number(url.searchParams.get('offset') ?? 0);
    switch (url.pathname) {
      case '/items':
        if (page === 3) return json(res, third.status, third.body);
        return json(res, 200, { items: page <= 5 ? rows(page * 10) : [] });
      case '/wrapped':
        if (offset === 2) return json(res, 200, { error: 'temporarily unavailable' });
        return json(res, 200, { data: { rows: offset < 6 ? rows(offset + 100) : [] } });
      case '/cursored': {
        const after = url.searchParams.get('after');
        if (after === null) return json(res, 200, { items: rows(200), next: 'c2' });
        if (after === 'c2') return json(res, 200, { error: { code: 429, message: 'rate limited' } });
        return json(res, 200, { items: rows(300), next: null });
      }
      case '/first':
        return json(res, 200, { errors: [{ code: 'throttled', message: 'rate limited' }] });
      case '/ended':
        if (page === 2) return json(res, 200, { done: true });
        return json(res, 200, { items: rows(400) });
    }
    json(res, 404, { error: 'no route' });
  });
  const write = (file: string, name: string, fetch: string) => cli.write(file, syncMission(name, server.base, fetch));
  write('pages.vague', 'Pages', 'get "/items" { paginate: page(page, 2) }');
  write('wrapped.vague', 'Wrapped', 'get "/wrapped" { paginate: offset(offset, 2), itemsPath: "data.rows" }');
  write('cursored.vague', 'Cursored', 'get "/cursored" { paginate: cursor(after, 2, "next") }');
  write('first.vague', 'First', 'get "/first" { paginate: page(page, 2), since: lastSync("first") }');
  write('ended.vague', 'Ended', 'get "/ended" { paginate: page(page, 2), until: response.done == true }');
}, 180_000);

afterAll(async () => {
  await server?.close();
  cli?.close();
});

const reqon = (...args: string[]) => cli.reqon(args);
const since = (from: number) => server.requests.slice(from).map((r) => r.url);
const stored = (run: CliResult) => cli.storedIds(run);

describe('an in-band error page in the middle of a paginated fetch', () => {
  it('fails the run, naming the page, its URL, the list expected and the fields the page had', async () => {
    const from = server.requests.length;
    const run = await reqon('run', 'pages.vague');
    expect(run.code, describeResult(run)).toBe(1);
    const said = run.stdout + run.stderr;
    expect(said).toContain(`page 3 (GET ${server.base}/items?page=3) answered with an error under "error" and no list: {"error":"rate limited"}`);
    expect(since(from)).toEqual(['/items?page=1', '/items?page=2', '/items?page=3']);
  });

  it('fails the same way where itemsPath points, and in a cursor pagination', async () => {
    const wrapped = await reqon('run', 'wrapped.vague');
    expect(wrapped.code, describeResult(wrapped)).toBe(1);
    expect(wrapped.stdout + wrapped.stderr).toContain(`page 2 (GET ${server.base}/wrapped?offset=2) answered with an error under "error" and no list`);
    const cursored = await reqon('run', 'cursored.vague');
    expect(cursored.code, describeResult(cursored)).toBe(1);
    expect(cursored.stdout + cursored.stderr).toContain(`page 2 (GET ${server.base}/cursored?after=c2) answered with an error under "error" and no list`);
  });

  it('fails on an in-band error on the first page too, rather than storing its errors as records', async () => {
    const run = await reqon('run', 'first.vague');
    expect(run.code, describeResult(run)).toBe(1);
    expect(run.stdout + run.stderr).toContain(
      `page 1 (GET ${server.base}/first?since=1970-01-01T00%3A00%3A00.000Z&page=1) answered with an error under "errors" and no list: {"errors":[{"code":"throttled","message":"rate limited"}]}`,
    );
  });

  it('still ends at an empty list, a 204 with no body, a page with no list and no error, or the page until names the end', async () => {
    for (const end of [{ status: 200, body: { items: [] } }, { status: 204, body: undefined }, { status: 200, body: {} }, { status: 200, body: { message: 'page out of range' } }]) {
      third = end;
      const run = await reqon('run', 'pages.vague');
      expect(run.code, describeResult(run)).toBe(0);
      expect(await stored(run)).toEqual([10, 11, 20, 21]);
    }
    const ended = await reqon('run', 'ended.vague');
    expect(ended.code, describeResult(ended)).toBe(0);
    expect(await stored(ended)).toEqual([400, 401]);
  });
});
