/**
 * A page walk told a page size the API does not page by. Reference §C.1.5 never sends the size
 * (`page(page, 100)` only tests `items.length >= 100`), so against Django REST framework's default
 * of 20 the first page held 20 records, was taken for the last, and the run completed with them
 * alone — while the page said `"next": "…?page=2"` (GitHub says it in a `Link: <…>; rel="next"`
 * header, with a default of 30). Such a page now fails the fetch, saying what the API answered and
 * how to send the size; the contrasts: the size sent by name, or the API's own size, walk every page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeResult } from '../durability/support/cli-build.js';
import { openCliDir, syncMission, type CliDir } from './cli-sync.js';
import { json, startServer, type LocalServer } from './local-server.js';

let cli: CliDir;
let server: LocalServer;
const RECORDS = 45;

beforeAll(async () => {
  cli = openCliDir('reqon-api-page-size-');
  server = await startServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const page = Number(url.searchParams.get('page') ?? 1);
    if (url.pathname === '/repos') {
      // GitHub: a bare list, 30 a page unless per_page says otherwise (at most 100), the next page in Link.
      const size = Math.min(Number(url.searchParams.get('per_page') ?? 30), 100);
      const from = (page - 1) * size;
      if (from + size < RECORDS) res.setHeader('Link', `<${server.base}/repos?page=${page + 1}>; rel="next", <${server.base}/repos?page=2>; rel="last"`);
      return json(res, 200, Array.from({ length: Math.max(0, Math.min(size, RECORDS - from)) }, (_, i) => ({ id: from + i + 1 })));
    }
    if (url.pathname === '/events') {
      // An offset API that pages by 10 whatever the mission sends, unless `limit` names the size.
      const offset = Number(url.searchParams.get('offset') ?? 0);
      const size = Number(url.searchParams.get('limit') ?? 10);
      return json(res, 200, { data: Array.from({ length: Math.max(0, Math.min(size, RECORDS - offset)) }, (_, i) => ({ id: offset + i + 1 })) });
    }
    const size = Math.min(Number(url.searchParams.get('page_size') ?? 20), 50); // DRF: a default, and a cap
    const from = (page - 1) * size;
    if (from >= RECORDS) return json(res, 404, { detail: 'Invalid page.' });
    const results = Array.from({ length: Math.min(size, RECORDS - from) }, (_, i) => ({ id: from + i + 1 }));
    json(res, 200, { count: RECORDS, next: from + size < RECORDS ? `${server.base}/items?page=${page + 1}` : null, previous: null, results });
  });
  cli.write('unsent.vague', syncMission('Unsent', server.base, 'get "/items" { paginate: page(page, 100) }'));
  cli.write('sent.vague', syncMission('Sent', server.base, 'get "/items" { paginate: page(page, 25, page_size), allow: [404] }', 'items_sent'));
  cli.write('own.vague', syncMission('Own', server.base, 'get "/items" { paginate: page(page, 20), allow: [404] }', 'items_own'));
  cli.write('github.vague', syncMission('GitHub', server.base, 'get "/repos" { paginate: page(page, 100) }', 'repos'));
  cli.write('github-sized.vague', syncMission('GitHubSized', server.base, 'get "/repos" { paginate: page(page, 100, per_page) }', 'repos_sized'));
  cli.write('offset-long.vague', syncMission('OffsetLong', server.base, 'get "/events" { paginate: offset(offset, 5) }', 'events_long'));
  cli.write('offset-own.vague', syncMission('OffsetOwn', server.base, 'get "/events" { paginate: offset(offset, 10) }', 'events_own'));
  cli.write('offset-sent.vague', syncMission('OffsetSent', server.base, 'get "/events" { paginate: offset(offset, 5, limit) }', 'events_sent'));
}, 180_000);

afterAll(async () => {
  await server?.close();
  cli?.close();
});

describe('a page size the API does not page by', () => {
  it('fails the fetch at the short page that says more follow, saying how to send the size', async () => {
    const run = await cli.reqon(['run', 'unsent.vague']);
    expect(run.code, describeResult(run)).toBe(1);
    const said = run.stdout + run.stderr;
    expect(said).toContain(`page 1 (GET ${server.base}/items?page=1) holds 20 items, fewer than the page size 100, yet says more pages follow (next: "${server.base}/items?page=2")`);
    expect(said).toContain('page(page, 100, per_page)');
    const github = await cli.reqon(['run', 'github.vague']);
    expect(github.code, describeResult(github)).toBe(1);
    expect(github.stdout + github.stderr).toContain(`page 1 (GET ${server.base}/repos?page=1) holds 30 items, fewer than the page size 100, yet says more pages follow (its Link header: <${server.base}/repos?page=2>; rel="next")`);
  });

  it('walks every page where the size is sent by name, or is the API\'s own', async () => {
    for (const file of ['sent.vague', 'own.vague', 'github-sized.vague']) {
      const run = await cli.reqon(['run', file]);
      expect(run.code, describeResult(run)).toBe(0);
      const ids = (await cli.storedIds(run)) as number[];
      expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: RECORDS }, (_, i) => i + 1));
    }
  });
});

describe('an offset walk whose pages are longer than the size it steps by', () => {
  it('fails at the first such page instead of taking its records twice, saying how to send the size', async () => {
    const run = await cli.reqon(['run', 'offset-long.vague']);
    expect(run.code, describeResult(run)).toBe(1);
    expect(run.stdout + run.stderr).toContain(
      `page 1 (GET ${server.base}/events?offset=0) holds 10 items, more than the page size 5 the offset steps by (the mission sends no size): the API pages by a size of its own, so the next page (offset + 5) would hold 5 of these records again, taken twice.`,
    );
    expect(run.stdout + run.stderr).toContain('offset(offset, 5, limit)');
  });

  it('walks every record once where the size is the API\'s own, or sent by name', async () => {
    for (const file of ['offset-own.vague', 'offset-sent.vague']) {
      const run = await cli.reqon(['run', file]);
      expect(run.code, describeResult(run)).toBe(0);
      const ids = (await cli.storedIds(run)) as number[];
      expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: RECORDS }, (_, i) => i + 1));
    }
  });
});
