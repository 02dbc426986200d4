/**
 * The status a paginated fetch leaves for a following `match` (and for its since checkpoint) was
 * its LAST page's. An API that answers the page past the end with an allowed 404 (Django REST
 * framework's `{ "detail": "Invalid page." }`) or a 204 then made a whole, successful fetch look
 * like "not found": `match response { 404 -> skip }`, written for an account that is gone, took
 * the arm after pages of records, so none was stored, in a run that completed; and its since
 * checkpoint never advanced (the status was no 2xx), so every run fetched everything again. The
 * fetch's status is now its first page's: whether the resource answered at all. A first page
 * answered 404 still takes the arm — the contrast that shows the test can tell them apart.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli, runIdOf, type CliResult } from '../durability/support/cli-build.js';
import { json, startServer, type LocalServer } from './local-server.js';

let cli: string;
let dir: string;
let server: LocalServer;
/** Accounts the API knows; any other answers its first page 404. */
const known = new Set(['a', 'b']);

const mission = (base: string) => `mission PagedStatus {
  source Api { auth: none, base: "${base}" }
  store results: sql("results")
  store gone: sql("gone")
  action Sync {
    for account in ["a", "b", "x"] {
      get "/accounts/{account}/results" { paginate: page(page, 2), allow: [404], since: lastSync(concat("results:", account)) }
      match response {
        404 -> { store { id: account } -> gone }
        204 -> skip
        _ -> continue
      }
      store response -> results { key: .id }
    }
  }
  run Sync
}
`;

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-paged-status-'));
  server = await startServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const account = url.pathname.split('/')[2]!;
    const page = Number(url.searchParams.get('page'));
    if (!known.has(account)) return json(res, 404, { detail: 'Not found.' });
    if (page <= 2) return json(res, 200, { results: [{ id: `${account}${page * 2 - 1}` }, { id: `${account}${page * 2}` }] });
    // Past the last page: Django answers 404; another API, 204.
    if (account === 'a') return json(res, 404, { detail: 'Invalid page.' });
    res.writeHead(204).end();
  });
  fs.writeFileSync(path.join(dir, 'm.vague'), mission(server.base));
}, 180_000);

afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'reqon.db')], { cwd: dir });
const keys = async (run: CliResult, store: string) =>
  JSON.parse((await reqon('store', runIdOf(run), store, '--json')).stdout).map((r: { record: { id: string } }) => r.record.id);
const sinceOf = (url: string) => new URL(url, 'http://x').searchParams.get('since');

describe('the status of a paginated fetch', () => {
  it('is its first page\'s: pages ending in an allowed 404 or a 204 are stored, and their checkpoints advance', async () => {
    const first = await reqon('run', 'm.vague');
    expect(first.code, describeResult(first)).toBe(0);
    expect(await keys(first, 'results')).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'b3', 'b4']);
    expect(await keys(first, 'gone')).toEqual(['x']);

    const from = server.requests.length;
    const never = sinceOf(server.requests[0]!.url);
    const second = await reqon('run', 'm.vague');
    expect(second.code, describeResult(second)).toBe(0);
    const firstPages = server.requests.slice(from).filter((r) => r.url.includes('page=1'));
    expect(firstPages.map((r) => [r.url.split('?')[0], sinceOf(r.url) !== never])).toEqual([
      ['/accounts/a/results', true],
      ['/accounts/b/results', true],
      ['/accounts/x/results', false],
    ]);
  });
});
