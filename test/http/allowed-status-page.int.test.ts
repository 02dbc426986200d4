/**
 * A page of a paginated fetch answered with a status the mission allows but that is not 2xx
 * (`allow: [404]`) holds no records: its error body's list (`{ "errors": [ … ] }`, the first
 * array of the page) was taken as the page's items and stored as records, in a run that
 * completed. Pagination ends at such a page, as at an empty one, and `match` sees its status.
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
  run Missing then Sync
}
`;

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-allowed-page-'));
  server = await startServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const page = Number(url.searchParams.get('page'));
    if (url.pathname === '/items' && page === 1) return json(res, 200, { items: [{ id: 1 }, { id: 2 }] });
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
    expect(server.requests.map((r) => r.url)).toEqual(['/missing?page=1', '/items?page=1', '/items?page=2']);
  });
});
