/**
 * An incremental fetch that sends its lastSync as `If-Modified-Since` and is answered
 * `304 Not Modified` ("nothing changed since then") failed the run unless the mission allowed 304
 * itself. A 304 to a `since` fetch is now an empty result: `response` is an empty list, so
 * `store response -> S` stores nothing; `match` sees 304; the checkpoint stays where it was (the
 * run saw nothing, so the next run asks from the same instant); the run completes, and replays
 * (verify) as it ran. A fetch without `since` still fails on a 304 it did not allow — the contrast
 * that shows the test can tell the two apart.
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

/** What a first run sends: the epoch as an HTTP date (RFC 9110 IMF-fixdate), the only form the header takes. */
const EPOCH = new Date(0).toUTCString();
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

const mission = (base: string) => `mission NotModified {
  source Api { auth: none, base: "${base}" }
  store orders: sql("orders")
  store paged: sql("paged")
  store seen: sql("seen")
  action Whole {
    get "/orders" { since: lastSync("orders") { header: "If-Modified-Since" } }
    match response {
      304 -> { store { id: "orders", status: 304, n: length(response) } -> seen }
      _ -> continue
    }
    store response -> orders { key: .id }
  }
  action Paged {
    get "/paged" { paginate: page(page, 2), since: lastSync("paged") { header: "If-Modified-Since" } }
    store response -> paged { key: .id }
  }
  run Whole then Paged
}
`;

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-not-modified-'));
  server = await startServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    // Nothing changed since any instant but the epoch (what a first run sends).
    if (url.pathname === '/changes') return json(res, url.searchParams.has('blank') ? 200 : 204, undefined);
    if (req.headers['if-modified-since'] !== EPOCH) return json(res, 304, undefined);
    if (url.pathname === '/orders') return json(res, 200, [{ id: 1 }, { id: 2 }]);
    const page = Number(url.searchParams.get('page'));
    json(res, 200, { items: page === 1 ? [{ id: 10 }, { id: 11 }] : [{ id: 12 }] });
  });
  fs.writeFileSync(path.join(dir, 'm.vague'), mission(server.base));
  fs.writeFileSync(
    path.join(dir, 'empty.vague'),
    `mission Empty {\n  source Api { auth: none, base: "${server.base}" }\n  store changes: sql("changes")\n  action A {\n    get "/changes" { since: lastSync }\n    store response -> changes { key: .id }\n    for c in response { store c -> changes { key: .id } }\n    get "/changes?blank=1" { since: lastSync("blank") }\n    store response -> changes { key: .id }\n  }\n  run A\n}\n`,
  );
  fs.writeFileSync(
    path.join(dir, 'plain.vague'),
    `mission Plain {\n  source Api { auth: none, base: "${server.base}" }\n  action A {\n    get "/orders" { headers: { "If-Modified-Since": "Thu, 01 Jan 2026 00:00:00 GMT" } }\n  }\n  run A\n}\n`,
  );
}, 180_000);

afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'reqon.db')], { cwd: dir });
const ims = (from: number) => server.requests.slice(from).map((r) => `${new URL(r.url, 'http://x').pathname} ${r.headers['if-modified-since']}`);
const records = async (run: CliResult, store: string) => JSON.parse((await reqon('store', runIdOf(run), store, '--json')).stdout).map((r: { record: unknown }) => r.record);

describe('204 No Content (or a 200 with no body) to a since fetch', () => {
  it('is an empty result, as LANGUAGE.md says: no records, the run completes', async () => {
    const run = await reqon('run', 'empty.vague');
    expect(run.code, describeResult(run)).toBe(0);
    expect(await records(run, 'changes')).toEqual([]);
  });
});

describe('304 Not Modified to a since fetch', () => {
  it('is an empty result: the run completes, match sees 304, the checkpoint stays, and verify replays it', async () => {
    const first = await reqon('run', 'm.vague');
    expect(first.code, describeResult(first)).toBe(0);
    expect(await records(first, 'orders')).toEqual([{ id: 1 }, { id: 2 }]);
    expect(await records(first, 'paged')).toEqual([{ id: 10 }, { id: 11 }, { id: 12 }]);

    let from = server.requests.length;
    const second = await reqon('run', 'm.vague');
    expect(second.code, describeResult(second)).toBe(0);
    const asked = ims(from);
    expect(asked).toHaveLength(2);
    expect(asked.every((line) => !line.endsWith(EPOCH))).toBe(true);
    // An HTTP date, never an ISO instant, which a server must ignore in If-Modified-Since.
    for (const line of asked) expect(line.slice(line.indexOf(' ') + 1)).toMatch(HTTP_DATE);
    expect(await records(second, 'seen')).toEqual([{ id: 'orders', status: 304, n: 0 }]);
    const verify = await reqon('verify', runIdOf(second));
    expect(verify.code, describeResult(verify)).toBe(0);

    // The 304s advanced nothing: the third run asks from the same instants as the second.
    from = server.requests.length;
    const third = await reqon('run', 'm.vague');
    expect(third.code, describeResult(third)).toBe(0);
    expect(ims(from)).toEqual(asked);
  });

  it('still fails a fetch without since that did not allow it', async () => {
    const run = await reqon('run', 'plain.vague');
    expect(run.code, describeResult(run)).toBe(1);
    expect(run.stdout + run.stderr).toContain('failed with 304');
  });
});
