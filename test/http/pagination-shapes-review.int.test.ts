/**
 * Review of the pagination page checks (engine/http/page-checks.ts) against API shapes we did not
 * design for, pinning what is right today:
 *
 * - where the record count is an exact multiple of the page size, so one page past the last full
 *   one is asked for, the shapes real APIs answer it with end the fetch with every record and
 *   exit 0: `{ "data": null }`, `{ "data": [], "meta": {…} }` (Laravel, JSON:API), `[]` (GitHub),
 *   Stripe's `starting_after` = `data[-1].id` without `until`, Slack's page that holds no members
 *   but still a next cursor (the list is there, empty), Zendesk's `end_of_stream` with `until`;
 * - on a resume after a crash in the middle of a streamed sync, the first page asked for live is
 *   checked as in a fresh run: an in-band answer there (`{ "error": "upstream timeout" }` with
 *   200) fails the run instead of being taken for the last page (the run completing with the
 *   records of the pages before it only).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeResult, runIdOf, type CliResult } from '../durability/support/cli-build.js';
import { openCliDir, syncMission, type CliDir } from './cli-sync.js';
import { json, startServer, type LocalServer } from './local-server.js';

let cli: CliDir;
let server: LocalServer;
/** While set, /flaky answers every page from this one on with an in-band message (200). */
let flakyFrom: number | undefined;

const rows = (n: number, from: number) => Array.from({ length: n }, (_, i) => ({ id: from + i }));
const STRIPE = rows(4, 1).map((r) => ({ id: `cus_${r.id}` }));


beforeAll(async () => {
  cli = openCliDir('reqon-shapes-review-');
  server = await startServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const q = url.searchParams;
    const page = Number(q.get('page') ?? 1);
    switch (url.pathname) {
      case '/null-data':
        return json(res, 200, page <= 2 ? { data: rows(2, page * 10) } : { data: null });
      case '/meta':
        return json(res, 200, { data: page <= 2 ? rows(2, page * 10) : [], meta: { total: 4, page } });
      case '/github':
        return json(res, 200, page <= 2 ? rows(2, page * 10) : []);
      case '/stripe': {
        const after = q.get('starting_after');
        const start = after === null ? 0 : STRIPE.findIndex((c) => c.id === after) + 1;
        const data = STRIPE.slice(start, start + Number(q.get('limit')));
        return json(res, 200, { object: 'list', data, has_more: start + data.length < STRIPE.length });
      }
      case '/slack': {
        const cursor = q.get('cursor');
        if (cursor === null) return json(res, 200, { ok: true, members: rows(2, 1), response_metadata: { next_cursor: 'c2' } });
        if (cursor === 'c2') return json(res, 200, { ok: true, members: [], response_metadata: { next_cursor: 'c3' } });
        return json(res, 200, { ok: true, members: rows(1, 3), response_metadata: { next_cursor: '' } });
      }
      case '/zendesk': {
        const cursor = q.get('cursor');
        if (cursor === null) return json(res, 200, { tickets: rows(2, 1), after_cursor: 'z2', end_of_stream: false });
        return json(res, 200, { tickets: rows(2, 3), after_cursor: 'z3', end_of_stream: true });
      }
      case '/flaky':
        if (flakyFrom !== undefined && page >= flakyFrom) return json(res, 200, { error: 'upstream timeout, try again' });
        return json(res, 200, { data: page <= 6 ? rows(2, page * 10) : [] });
    }
    json(res, 404, { error: 'no route' });
  });
  const write = (file: string, name: string, fetch: string) => cli.write(file, syncMission(name, server.base, fetch));
  write('null-data.vague', 'NullData', 'get "/null-data" { paginate: page(page, 2) }');
  write('meta.vague', 'Meta', 'get "/meta" { paginate: page(page, 2) }');
  write('github.vague', 'GitHub', 'get "/github" { paginate: page(page, 2, per_page) }');
  write('stripe.vague', 'Stripe', 'get "/stripe" { paginate: cursor(starting_after, 2, "data[-1].id", limit) }');
  write('slack.vague', 'Slack', 'get "/slack" { paginate: cursor(cursor, 2, "response_metadata.next_cursor", limit) }');
  write('zendesk.vague', 'Zendesk', 'get "/zendesk" { paginate: cursor(cursor, 2, "after_cursor"), until: response.end_of_stream == true }');
  write('flaky.vague', 'Flaky', 'get "/flaky" { paginate: page(page, 2) }');
}, 180_000);

afterAll(async () => {
  await server?.close();
  cli?.close();
});

const reqon = (db: string, ...args: string[]) => cli.reqon(args, db);
const stored = (db: string, run: string) => cli.storedIds(run, 'items', db);

describe('a page past an exactly full last page, as real APIs answer it', () => {
  it.each([
    ['null-data.vague', '{ "data": null }', [10, 11, 20, 21]],
    ['meta.vague', '{ "data": [], "meta": {…} }', [10, 11, 20, 21]],
    ['github.vague', 'a top-level []', [10, 11, 20, 21]],
    ['stripe.vague', "Stripe's data[-1].id cursor, has_more false, no until", ['cus_1', 'cus_2', 'cus_3', 'cus_4']],
    ['slack.vague', "Slack's empty page that still has a next cursor", [1, 2, 3]],
    ['zendesk.vague', "Zendesk's end_of_stream with until", [1, 2, 3, 4]],
  ])('%s (%s) completes with every record, verified', async (file, _shape, ids) => {
    const run = await reqon('shapes.db', 'run', file);
    expect(run.code, describeResult(run)).toBe(0);
    const id = runIdOf(run);
    expect(await stored('shapes.db', id)).toEqual(ids);
    const verify = await reqon('shapes.db', 'verify', id);
    expect(verify.code, describeResult(verify)).toBe(0);
  });
});

describe('a resume after a crash in the middle of a streamed paginated sync', () => {
  it('checks the first page it asks for live as a fresh run does: an in-band answer fails the run', async () => {
    flakyFrom = undefined;
    const crashed: CliResult = await reqon('resume.db', 'run', 'flaky.vague', '--crash-at', 'mid-store:3');
    expect(crashed.signal, describeResult(crashed)).toBe('SIGKILL');
    const id = runIdOf(crashed);
    const before: unknown[] = await stored('resume.db', id);
    expect(before.length, `records committed before the crash: ${JSON.stringify(before)}`).toBeLessThan(12);
    // The API now answers every page not yet recorded (whichever is walked live first) with an in-band message.
    flakyFrom = 2;
    try {
      const resumed = await reqon('resume.db', 'resume', id);
      expect(resumed.code, describeResult(resumed)).toBe(1);
      expect(resumed.stdout + resumed.stderr).toMatch(/page \d+ \(GET \S+\/flaky\?page=\d+\) answered with an error under "error" and no list/);
      expect(((await stored('resume.db', id)) as unknown[]).length).toBeLessThan(12);
    } finally {
      flakyFrom = undefined;
    }
  });
});
