/**
 * Log format 10's page signal forms (events.ts PAGE_SIGNAL_FORMS_FORMAT; probe 110 K4 and K10),
 * against the rules of a run recorded before them, which keeps its own (walk(…, false)):
 * - a page answered 2xx with an error in another form than `error`/`errors`/`fault` — JSend's
 *   `status: "error"`, AWS's `Error`, `errcode`/`error_code` other than 0, a `statusCode` or numeric
 *   `code` of 400 or more — and no list fails the walk: it was taken for an empty last page, the
 *   run completed with the pages before it and its since checkpoint moved past the rest;
 * - a flag or count sent as text (`"has_more": "true"`, `"total_count": "5"`, `"last": "false"`,
 *   `"ok": "false"`) or a flag as 1 or 0 says what it says: a short first page saying
 *   `"has_more": "true"` ended the walk with 2 records of 5.
 * A page that says nothing of the kind still ends a walk as before.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { paginate, type PaginationPlan } from '../../engine/http/pagination.js';
import { openConformance, type Conformance } from '../conformance/harness.js';

async function walk(plan: PaginationPlan, pages: unknown[], signalForms: boolean): Promise<{ count: number; asked: number }> {
  let asked = 0;
  const result = await paginate(plan, { fetchPage: async (_query, index) => (asked++, pages[Math.min(index, pages.length - 1)]), pageEndRules: true, signalForms });
  return { count: result.count, asked };
}

const pagePlan: PaginationPlan = { strategy: 'page', param: 'p', pageSize: 2 };
const full = { items: [{ id: 1 }, { id: 2 }] };

describe('an in-band error in another form, mid-walk', () => {
  const errors: [string, unknown][] = [
    ['status', { status: 'error', message: 'Internal error' }],
    ['status', { status: 'fail', data: { page: 'too large' } }],
    ['Error', { Error: { Code: 'Throttling', Message: 'Rate exceeded' } }],
    ['errcode', { errcode: 45009, errmsg: 'api freq out of limit' }],
    ['error_code', { error_code: 'rate_limited', error_description: 'slow down' }],
    ['statusCode', { statusCode: 500, message: 'Internal server error' }],
    ['code', { code: 429, message: 'Too many requests' }],
    ['code', { code: '503', message: 'unavailable' }],
  ];
  it.each(errors)('(%s) fails the walk, not ends it; a run recorded before ends it as it did', async (field, page) => {
    await expect(walk(pagePlan, [full, page], true)).rejects.toThrow(new RegExp(`page 2 answered with an error under "${field}" and no list`));
    expect(await walk(pagePlan, [full, page], false)).toEqual({ count: 2, asked: 2 });
  });

  it('pages that only look like one are pages: a list beside the field, a status that is no error, a code below 400', async () => {
    for (const page of [
      { status: 'error', items: [{ id: 3 }] },
      { status: 'ok' },
      { code: 200, items: [] },
      { errcode: 0, errmsg: 'ok' },
      { errcode: 'OK' },
      { error_code: 'none' },
      { error_code: null },
      { statusCode: 204 },
    ]) {
      await expect(walk(pagePlan, [full, page], true), JSON.stringify(page)).resolves.toMatchObject({ asked: 2 });
    }
  });

  it('`ok` and `success` sent as the text "false" on an empty page fail it', async () => {
    await expect(walk(pagePlan, [full, { items: [], ok: 'false' }], true)).rejects.toThrow(/page 2 holds no records and says it failed \(ok: "false"\)/);
    await expect(walk(pagePlan, [full, { items: [], success: 'FALSE' }], true)).rejects.toThrow(/says it failed \(success: "FALSE"\)/);
    expect(await walk(pagePlan, [full, { items: [], ok: 'false' }], false)).toEqual({ count: 2, asked: 2 });
  });
});

describe('flags and counts sent as text, or as 1 and 0', () => {
  const short = (more: Record<string, unknown>) => ({ items: [{ id: 1 }], ...more });
  const says: [string, Record<string, unknown>][] = [
    ['has_more: "true"', { has_more: 'true' }],
    ['has_more: 1', { has_more: 1 }],
    ['last: "false"', { last: 'false' }],
    ['total_count: "5"', { total_count: '5' }],
    ['total_pages: "3"', { total_pages: '3' }],
  ];
  it.each(says)('a short first page saying %s says more follow: the walk fails, not ends with the rest missing', async (_name, more) => {
    await expect(walk(pagePlan, [short(more)], true)).rejects.toThrow(/fewer than the page size 2, yet says more pages follow/);
    expect(await walk(pagePlan, [short(more)], false)).toEqual({ count: 1, asked: 1 });
  });

  it('a 1 or 0 under a name that is as often a count or a page number is no flag (helper 106)', async () => {
    // A bulk report with nothing new (`succeeded: 0`), 0-based page numbers (`page.last: 0`), a count of done items.
    expect(await walk(pagePlan, [full, { items: [], succeeded: 0, failed: 0 }], true)).toEqual({ count: 2, asked: 2 });
    expect(await walk(pagePlan, [short({ page: { first: 0, last: 0 }, done: 0 })], true)).toEqual({ count: 1, asked: 1 });
    expect(await walk(pagePlan, [full, { items: [], ok: 0 }], true)).toEqual({ count: 2, asked: 2 });
  });

  it('as text, a flag that says the last page ends a cursor walk; "false" or 0 of a more-flag is no more', async () => {
    const cursorPlan: PaginationPlan = { strategy: 'cursor', param: 'cursor', pageSize: 2, cursorPath: 'cursor', maxPages: 50 };
    const pages = Array.from({ length: 60 }, (_, i) => ({ entries: [{ id: i }], cursor: `c${i + 1}`, has_more: i < 1 ? 'true' : 'false' }));
    expect(await walk(cursorPlan, pages, true)).toEqual({ count: 2, asked: 2 });
    expect(await walk(pagePlan, [short({ has_more: 'false', total_count: '1' })], true)).toEqual({ count: 1, asked: 1 });
    expect(await walk(pagePlan, [short({ has_more: 0 })], true)).toEqual({ count: 1, asked: 1 });
  });
});

describe('a since sync against an API answering so (the whole run)', () => {
  let c: Conformance | undefined;
  afterEach(async () => {
    await c?.close();
    c = undefined;
  });

  it('fails at the JSend error mid-walk, its checkpoint not advanced, and verifies as it ran', async () => {
    c = await openConformance();
    c.api.on('GET /recs?*', (req) => {
      const page = Number(new URL(req.url, 'http://x').searchParams.get('page') ?? '1');
      return page === 1 ? { body: { data: [{ id: 'a' }, { id: 'b' }] } } : { body: { status: 'error', message: 'upstream timeout' } };
    });
    const run = await c.start(
      c.mission(
        'pull',
        `mission Pull {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store recs: memory("recs")
  action Sync {
    get "/recs" { paginate: page(page, 2), since: lastSync("recs") }
    store response -> recs { key: .id }
  }
  run Sync
}
`,
      ),
    );
    expect(run.status === 'failed' && run.error.message).toMatch(/page 2 \(.*\) answered with an error under "status" and no list/);
    expect((await c.events(run.runId)).filter((e) => e.type === 'checkpoint.advanced')).toEqual([]);
    await c.expectVerified(run.runId);
  });
});
