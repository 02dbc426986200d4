/**
 * A page after the first answered with a non-2xx status the fetch lets through is no end of the
 * walk where the API did not say so:
 *
 * - a 304 to a since fetch (If-Modified-Since) on page 2 said only that page 2's URL is unchanged
 *   (servers answer the header per URL): it ended the walk as an empty page, the run completed
 *   without page 3's changed records, and the checkpoint advanced past them — lost for good;
 * - an allowed 404 to the page a cursor named (`allow: [404]`) came after the API said more pages
 *   follow: the same silent end.
 *
 * Both now fail the fetch, naming the page, and the checkpoint stays. The contrasts: a 304 on the
 * first page is the whole fetch's "nothing changed", and an allowed 404 past a full page of a
 * page-number walk (Django's "Invalid page.") is the end, as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeResult, runIdOf } from '../durability/support/cli-build.js';
import { openCliDir, syncMission, type CliDir } from './cli-sync.js';
import { json, startServer, type LocalServer } from './local-server.js';

let cli: CliDir;
let server: LocalServer;
/** The If-Modified-Since of a first run: everything has changed since the epoch. */
const EPOCH = new Date(0).toUTCString();
/** Whether page 1 of /orders is unchanged too on a later run (then the whole fetch is a 304). */
let firstPageUnchanged = false;

beforeAll(async () => {
  cli = openCliDir('reqon-non-2xx-mid-walk-');
  server = await startServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const page = Number(url.searchParams.get('page') ?? 0);
    switch (url.pathname) {
      case '/orders': {
        const later = req.headers['if-modified-since'] !== EPOCH;
        // On a later run page 1 and page 3 hold changes, page 2 is unchanged.
        if (later && (page === 2 || firstPageUnchanged)) return json(res, 304, undefined);
        const n = later ? 100 : 0;
        return json(res, 200, page <= 2 ? [{ id: n + page * 10 }, { id: n + page * 10 + 1 }] : page === 3 ? [{ id: n + 30 }] : []);
      }
      case '/events': {
        const after = url.searchParams.get('after');
        if (after === null) return json(res, 200, { items: [{ id: 1 }, { id: 2 }], next: 'c2' });
        return json(res, 404, { detail: 'Not found.' });
      }
      case '/django':
        if (page >= 3) return json(res, 404, { detail: 'Invalid page.' });
        return json(res, 200, { results: [{ id: page * 10 }, { id: page * 10 + 1 }] });
    }
    json(res, 404, { error: 'no route' });
  });
  const write = (name: string, fetch: string) => cli.write(`${name.toLowerCase()}.vague`, syncMission(name, server.base, fetch, `items_${name.toLowerCase()}`));
  write('Orders', 'get "/orders" { paginate: page(page, 2), since: lastSync("orders") { header: "If-Modified-Since" } }');
  write('Events', 'get "/events" { paginate: cursor(after, 2, "next"), allow: [404], since: lastSync("events") }');
  write('Django', 'get "/django" { paginate: page(page, 2), allow: [404] }');
}, 180_000);

afterAll(async () => {
  await server?.close();
  cli?.close();
});

const reqon = (...args: string[]) => cli.reqon(args);
const stored = (run: Parameters<CliDir['storedIds']>[0]) => cli.storedIds(run);
const askedSince = (from: number) => [...new Set(server.requests.slice(from).map((r) => r.headers['if-modified-since']))];

describe('a non-2xx page after the first', () => {
  it('a 304 on page 2 of a since fetch fails the fetch, and its checkpoint stays', async () => {
    const first = await reqon('run', 'orders.vague');
    expect(first.code, describeResult(first)).toBe(0);
    expect(await stored(first)).toEqual([10, 11, 20, 21, 30]);

    let from = server.requests.length;
    const second = await reqon('run', 'orders.vague');
    expect(second.code, describeResult(second)).toBe(1);
    expect(second.stdout + second.stderr).toContain(`page 2 (GET ${server.base}/orders?page=2) answered 304 Not Modified after the pages before it answered with records`);
    const asked = askedSince(from);
    expect(asked).toHaveLength(1);
    expect(asked[0]).not.toBe(EPOCH);

    // The checkpoint did not move: the next run asks from the same instant, and (page 2 now
    // answering too) gets page 3's changes that the failed run never reached.
    from = server.requests.length;
    firstPageUnchanged = true;
    const third = await reqon('run', 'orders.vague');
    firstPageUnchanged = false;
    expect(askedSince(from)).toEqual(asked);
    // A 304 on the first page is the whole fetch's "nothing changed since": an empty result.
    expect(third.code, describeResult(third)).toBe(0);
  });

  it('an allowed 404 to the page a cursor named fails the fetch; one past a full numbered page ends it', async () => {
    const events = await reqon('run', 'events.vague');
    expect(events.code, describeResult(events)).toBe(1);
    expect(events.stdout + events.stderr).toContain(`page 2 (GET ${server.base}/events?since=`);
    expect(events.stdout + events.stderr).toContain('answered 404, which the request allows, although the page before it gave a cursor to it');
    // Its checkpoint did not move past the pages never read.
    const log = (await reqon('events', runIdOf(events), '--json')).stdout.trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type);
    expect(log).toContain('step.failed');
    expect(log).not.toContain('checkpoint.advanced');
    const django = await reqon('run', 'django.vague');
    expect(django.code, describeResult(django)).toBe(0);
    expect(await stored(django)).toEqual([10, 11, 20, 21]);
  });
});
