/**
 * An API that counts its pages from 0 (Spring Data's Pageable: `page=0` is the first page, and
 * each answer says `number`, `first`, `last`, `totalElements`). A page walk asked from page 1 and
 * skipped the first page's records in a run that completed (helper 62). Now its first answer's
 * `first: false` fails the fetch with the fix, and `paginate: { …, firstPage: 0 }` walks it whole.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { checkSource } from '../../engine/lang/loader.js';

const ALL = Array.from({ length: 25 }, (_, i) => ({ id: i }));

function spring(c: Conformance): void {
  c.api.on('GET /customers?*', (req) => {
    const q = new URL(req.url, 'http://x').searchParams;
    const page = Number(q.get('page') ?? 0);
    const size = Number(q.get('size') ?? 20);
    const content = ALL.slice(page * size, page * size + size);
    return { body: { content, number: page, size, totalElements: ALL.length, totalPages: Math.ceil(ALL.length / size), first: page === 0, last: (page + 1) * size >= ALL.length } };
  });
}

const MISSION = (paginate: string) => `mission Spring {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    get "/customers" { paginate: ${paginate} }
    store response -> out { key: .id }
  }
  run A
}
`;

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe('a page walk against an API that counts its pages from 0', () => {
  it('asked from page 1 fails on the first answer, saying how to start at 0', async () => {
    c = await openConformance();
    spring(c);
    const result = await c.start(c.mission('spring', MISSION('page(page, 10, size)')));
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error.message).toContain("says it is not the API's first page (first: false): the API counts its pages from 0, so the records of its first page were skipped");
    expect(result.error.message).toContain('paginate: { type: page, param: "page", pageSize: 10, sizeParam: "size", firstPage: 0 }');
    expect(c.api.lines()).toEqual(['GET /customers?page=1&size=10']);
  });

  it('with firstPage: 0 walks every page from 0, verified', async () => {
    c = await openConformance();
    spring(c);
    const result = await c.start(c.mission('spring', MISSION('{ type: page, param: "page", pageSize: 10, sizeParam: "size", firstPage: 0 }')));
    expect(result.status).toBe('completed');
    expect(c.api.lines()).toEqual(['GET /customers?page=0&size=10', 'GET /customers?page=1&size=10', 'GET /customers?page=2&size=10']);
    expect(Object.keys(await c.store(result.runId, 'out'))).toHaveLength(25);
    await c.expectVerified(result.runId);
  });

  it("Spring's PagedModel (no first flag, page.totalPages): asked from page 1, the walk's end one page short of the count fails the fetch", async () => {
    // Helper 63: { content, page: { number, size, totalElements, totalPages } } completed with 15 of 25 records.
    for (const [records, ending] of [[25, 'short'], [20, 'empty']] as const) {
      c = await openConformance();
      const all = ALL.slice(0, records);
      c.api.on('GET /customers?*', (req) => {
        const page = Number(new URL(req.url, 'http://x').searchParams.get('page'));
        return { body: { content: all.slice(page * 10, page * 10 + 10), page: { number: page, size: 10, totalElements: all.length, totalPages: Math.ceil(all.length / 10) } } };
      });
      const failed = await c.start(c.mission('spring', MISSION('page(page, 10, size)')));
      expect(failed.status, ending).toBe('failed');
      if (failed.status !== 'failed') return;
      expect(failed.error.message, ending).toMatch(/but the API counts \d pages \(page\.totalPages: \d\) and the walk asked for pages 1 to 2: the API counts its pages from 0/);
      const whole = await c.start(c.mission('spring', MISSION('{ type: page, param: "page", pageSize: 10, sizeParam: "size", firstPage: 0 }')));
      expect(whole.status, ending).toBe('completed');
      expect(Object.keys(await c.store(whole.runId, 'out')), ending).toHaveLength(records);
      await c.close();
      c = undefined;
    }
    // An API that counts from 1, ending short or on an empty page past the end: no alarm.
    for (const records of [25, 20]) {
      c = await openConformance();
      const all = ALL.slice(0, records);
      c.api.on('GET /customers?*', (req) => {
        const page = Number(new URL(req.url, 'http://x').searchParams.get('page'));
        return { body: { content: all.slice((page - 1) * 10, (page - 1) * 10 + 10), page: { number: page, totalPages: Math.ceil(all.length / 10) } } };
      });
      const result = await c.start(c.mission('spring', MISSION('page(page, 10, size)')));
      expect(result.status, String(records)).toBe('completed');
      expect(Object.keys(await c.store(result.runId, 'out'))).toHaveLength(records);
      await c.close();
      c = undefined;
    }
  });

  it('a short page saying last: false is no last page', async () => {
    c = await openConformance();
    // The API caps the size at 5 where 10 is asked: its first page says it is not the last.
    c.api.on('GET /customers?*', (req) => {
      const page = Number(new URL(req.url, 'http://x').searchParams.get('page'));
      return { body: { content: ALL.slice(page * 5, page * 5 + 5), first: page === 0, last: false } };
    });
    const result = await c.start(c.mission('spring', MISSION('{ type: page, param: "page", pageSize: 10, sizeParam: "size", firstPage: 0 }')));
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error.message).toContain('holds 5 items, fewer than the page size 10, yet says more pages follow (last: false)');
  });
});

describe('firstPage', () => {
  it('is a whole number, 0 or more, and only of a page walk', () => {
    const errors = (paginate: string) => checkSource(MISSION(paginate), 'm.vague').filter((d) => d.severity === 'error').map((d) => `${d.code} ${d.message}`);
    expect(errors('{ type: page, param: "page", pageSize: 10, firstPage: 0 }')).toEqual([]);
    expect(errors('{ type: page, param: "page", pageSize: 10, firstPage: -1 }')[0]).toMatch(/^E2008 Expected the number of the first page/);
    expect(errors('{ type: page, param: "page", pageSize: 10, firstPage: 1.5 }')[0]).toMatch(/^E2008 Expected the number of the first page/);
    expect(errors('{ type: offset, param: "offset", pageSize: 10, firstPage: 0 }')).toEqual(['E2008 Only `type: page` takes a `firstPage` (this is `type: offset`)']);
  });
});
