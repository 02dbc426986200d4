/**
 * Log format 9's page-end rules (events.ts PAGE_END_RULES_FORMAT; helper 95) — the page walks'
 * against the rules of a run recorded before them, which keeps its own (walk(…, false)):
 * - a since fetch without `paginate` whose answer says more follow (`has_more`, a next link, a
 *   Link header, `total_count` above what it holds) advances no checkpoint, and says why;
 * - an empty page that says it failed (`success: false`) fails the walk instead of ending it;
 * - a cursor walk ends on a page that says it is the last (`has_more: false`), whatever cursor it
 *   carries (Dropbox's: the walk went on to the 10,000-page limit and failed there);
 * - a short page's next token (`nextPageToken`, `next_offset`, HubSpot's, Slack's, Airtable's
 *   text `offset`), its count of records left, Salesforce's `done: false` say more follow; a
 *   token of 0, Zendesk's `end_of_stream: true` or a bare `remaining` (a quota) do not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { paginate, PaginationError, type PaginationPlan } from '../../engine/http/pagination.js';
import { openConformance, type Conformance } from '../conformance/harness.js';

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

const sinceMission = `mission Pull {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store recs: memory("recs")
  action Sync {
    get "/recs" { since: lastSync("recs") }
    store response.data -> recs { key: .id }
  }
  run Sync
}
`;

describe('a since fetch without paginate whose answer says more follow', () => {
  const answers: [string, { body: unknown; headers?: Record<string, string> }][] = [
    ['has_more: true', { body: { data: [{ id: 1 }], has_more: true } }],
    ['next: "/recs?page=2"', { body: { data: [{ id: 1 }], next: '/recs?page=2' } }],
    ['total_count: 10', { body: { data: [{ id: 1 }], total_count: 10 } }],
    ['its Link header', { body: { data: [{ id: 1 }] }, headers: { link: '</recs?page=2>; rel="next"' } }],
    ['its X-Total-Count header', { body: { data: [{ id: 1 }] }, headers: { 'x-total-count': '10' } }],
    // Shapes of APIs users sync (helper 98): HubSpot, Salesforce, Airtable, Slack.
    ['paging.next.after', { body: { data: [{ id: 1 }], paging: { next: { after: '2', link: '/recs?after=2' } } } }],
    ['done: false', { body: { data: [{ id: 1 }], done: false, totalSize: 3, nextRecordsUrl: '/query/01g-2000' } }],
    ['offset: "itrX/rec2"', { body: { data: [{ id: 1 }], offset: 'itrX/rec2' } }],
    ['response_metadata.next_cursor', { body: { data: [{ id: 1 }], response_metadata: { next_cursor: 'dXNlcjpVMEc5V0ZYTlo=' } } }],
    // Helper 100: Zendesk's cursor export, Twitter v2, Square, Intercom.
    ['end_of_stream: false', { body: { data: [{ id: 1 }], after_cursor: 'MTU3NjYxMzUzOS4wfHw0Njd8', end_of_stream: false } }],
    ['meta.next_token', { body: { data: [{ id: 1 }], meta: { result_count: 1, next_token: 'b26v89c19zqg8o3fpzbkk' } } }],
    ['cursor: "CAISHAoN"', { body: { data: [{ id: 1 }], cursor: 'CAISHAoN' } }],
    ['pages.next', { body: { data: [{ id: 1 }], pages: { page: 1, total_pages: 4, next: 'https://api.example/contacts?page=2' } } }],
  ];
  it.each(answers)('(%s) advances no checkpoint and says why', async (marker, answer) => {
    c = await openConformance();
    c.api.on('GET /recs?*', answer);
    const lines: string[] = [];
    const run = await c.start(c.mission('pull', sinceMission), {}, { progress: (line: string) => lines.push(line) });
    expect(run.status).toBe('completed');
    const events = await c.events(run.runId);
    expect(events.filter((e) => e.type === 'checkpoint.advanced')).toEqual([]);
    expect(lines.join('\n')).toMatch(/the answer says more records follow \(.+\), but the fetch has no paginate: its since checkpoint does not advance/);
    expect(lines.join('\n'), marker).toContain(marker.startsWith('its ') ? marker : marker.split(':')[0]!);
    await c.expectVerified(run.runId);
  });

  const ends: [string, unknown][] = [
    ['has_more: false', { data: [{ id: 1 }], has_more: false, total_count: 1 }],
    // Zendesk's incremental export always names a next page; end_of_stream says there is none.
    ['end_of_stream: true', { data: [{ id: 1 }], next_page: '/recs?start_time=2', end_of_stream: true }],
    // Twitter's end of a walk.
    ['next_cursor: 0', { data: [{ id: 1 }], next_cursor: 0, next_cursor_str: '0' }],
    // A rate limit's quota, not records left.
    ['remaining: 4998', { data: [{ id: 1 }], remaining: 4998 }],
    ['offset: 0 (the page\'s own)', { data: [{ id: 1 }], offset: 0, limit: 100 }],
    // A cursor beside a flag that says this is the last page (Dropbox).
    ['cursor beside has_more: false', { data: [{ id: 1 }], cursor: 'AAGx2', has_more: false }],
  ];
  it.each(ends)('an answer that says nothing of the kind (%s) advances it', async (_, body) => {
    c = await openConformance();
    c.api.on('GET /recs?*', { body });
    const run = await c.start(c.mission('pull', sinceMission));
    expect((await c.events(run.runId)).filter((e) => e.type === 'checkpoint.advanced')).toHaveLength(1);
  });
});

/** Pages answered in turn; `pageEndRules` as a run of format 9 (true) or before (false). */
async function walk(plan: PaginationPlan, pages: unknown[], pageEndRules: boolean, headerTotal?: number): Promise<{ count: number; asked: number }> {
  let asked = 0;
  const result = await paginate(plan, { fetchPage: async (_query, index) => (asked++, pages[Math.min(index, pages.length - 1)]), pageEndRules, headerTotal: () => headerTotal });
  return { count: result.count, asked };
}

describe('page walks under the rules of format 9, and before', () => {
  const pagePlan: PaginationPlan = { strategy: 'page', param: 'p', pageSize: 2 };

  it('an empty page that says it failed fails the walk; before, it ended it', async () => {
    const pages = [{ items: [{ id: 1 }, { id: 2 }] }, { items: [], success: false, message: 'backend timeout' }];
    await expect(walk(pagePlan, pages, true)).rejects.toThrow(/page 2 holds no records and says it failed \(success: false\)/);
    expect(await walk(pagePlan, pages, false)).toEqual({ count: 2, asked: 2 });
    // An empty page that says nothing of the kind still ends it.
    expect(await walk(pagePlan, [pages[0], { items: [], success: true }], true)).toEqual({ count: 2, asked: 2 });
  });

  it('a cursor walk ends on a page that says it is the last, whatever cursor it carries', async () => {
    const cursorPlan: PaginationPlan = { strategy: 'cursor', param: 'cursor', pageSize: 2, cursorPath: 'cursor', maxPages: 50 };
    const pages = Array.from({ length: 60 }, (_, i) => ({ entries: [{ id: i }], cursor: `c${i + 1}`, has_more: i < 1 }));
    expect(await walk(cursorPlan, pages, true)).toEqual({ count: 2, asked: 2 });
    // Before: on to the limit the mission set.
    expect(await walk(cursorPlan, pages, false)).toEqual({ count: 50, asked: 50 });
  });

  it("a short page's next token or count of what is left says more follow", async () => {
    const offsetPlan: PaginationPlan = { strategy: 'offset', param: 'offset', pageSize: 5, sizeParam: 'limit' };
    for (const extra of [{ nextPageToken: 'abc' }, { next_offset: 4 }, { remaining_count: 6 }]) {
      const page = { items: [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }], ...extra };
      const refused = walk(offsetPlan, [page], true);
      await expect(refused).rejects.toThrow(PaginationError);
      await expect(refused).rejects.toThrow(/holds 4 items, fewer than the page size 5, yet says more pages follow/);
      expect(await walk(offsetPlan, [page], false)).toEqual({ count: 4, asked: 1 });
    }
    // A first page's X-Total-Count header above what it holds, likewise; one that counts it all does not.
    const short = { items: [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }] };
    await expect(walk(offsetPlan, [short], true, 10)).rejects.toThrow(/yet says more pages follow \(its X-Total-Count header: 10\)/);
    expect(await walk(offsetPlan, [short], false, 10)).toEqual({ count: 4, asked: 1 });
    expect(await walk(offsetPlan, [short], true, 4)).toEqual({ count: 4, asked: 1 });
    // None left, or a bare `remaining` (as often a rate limit's quota), says nothing more follows.
    expect(await walk(offsetPlan, [{ items: [{ id: 1 }], remaining_count: 0 }], true)).toEqual({ count: 1, asked: 1 });
    expect(await walk(offsetPlan, [{ items: [{ id: 1 }], remaining: 4998 }], true)).toEqual({ count: 1, asked: 1 });
  });
});
