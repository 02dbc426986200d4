/**
 * A page of a paginated fetch answered with a status the mission allows but that is not 2xx
 * (`allow: [404]`) holds no records: its error body's list (`{ "errors": [ … ] }`, the first
 * array of the page) was taken as the page's items and stored as records, in a run that
 * completed. Pagination ends at such a page, as at an empty one, and `match` sees its status.
 *
 * Such a page, or any page that holds no items, names no envelope field either: after pages of
 * `{ "results": [...] }` ending in a 404 `{ "detail": "Invalid page." }` (Django REST framework,
 * past the last page), `response.results` was absent and `for r in response.results` failed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, runCli, runIdOf } from '../durability/support/cli-build.js';
import { json, startServer, type LocalServer } from './local-server.js';

let cli: string;
let dir: string;
let server: LocalServer;

const mission = (base: string) => `mission AllowedPage {
  source Api { auth: none, base: "${base}" }
  store items: sql("items")
  store seen: memory("seen")
  store results: sql("results")
  action Missing {
    get "/missing" { paginate: page(page, 2), allow: [404] }
    match response {
      404 -> { store { id: "missing", n: length(response) } -> seen }
      _ -> continue
    }
  }
  action Sync {
    get "/items" { paginate: page(page, 2), allow: [404] }
    store response -> items
  }
  action Results {
    get "/results" { paginate: page(page, 2), allow: [404] }
    for r in response.results {
      store r -> results { key: .id }
    }
  }
  run Missing then Sync then Results
}
`;

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-allowed-page-'));
  server = await startServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const page = Number(url.searchParams.get('page'));
    if (url.pathname === '/items' && page === 1) return json(res, 200, { items: [{ id: 1 }, { id: 2 }] });
    if (url.pathname === '/results' && page <= 2) return json(res, 200, { count: 4, results: [{ id: page * 2 - 1 }, { id: page * 2 }] });
    if (url.pathname === '/results') return json(res, 404, { detail: 'Invalid page.' });
    json(res, 404, { errors: [{ code: 'not_found', message: 'Not Found' }] });
  });
  fs.writeFileSync(path.join(dir, 'm.vague'), mission(server.base));
}, 180_000);

afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'reqon.db')], { cwd: dir });

describe('an allowed non-2xx page of a paginated fetch', () => {
  it('holds no records: its error body is neither stored nor counted, and match sees its status', async () => {
    const run = await reqon('run', 'm.vague');
    expect(run.code).toBe(0);
    const id = runIdOf(run);
    const items = await reqon('store', id, 'items', '--json');
    expect(JSON.parse(items.stdout).map((r: { record: unknown }) => r.record)).toEqual([{ id: 1 }, { id: 2 }]);
    const seen = await reqon('store', id, 'seen', '--json');
    expect(JSON.parse(seen.stdout).map((r: { record: unknown }) => r.record)).toEqual([{ id: 'missing', n: 0 }]);
    expect(server.requests.map((r) => r.url).slice(0, 3)).toEqual(['/missing?page=1', '/items?page=1', '/items?page=2']);
  });
  it('names no envelope field: response.results is every page\'s results', async () => {
    const run = await reqon('run', 'm.vague');
    expect(run.code).toBe(0);
    const results = await reqon('store', runIdOf(run), 'results', '--json');
    expect(JSON.parse(results.stdout).map((r: { record: unknown }) => r.record)).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }]);
  });
});
