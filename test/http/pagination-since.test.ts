import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_PAGES, describeTruncation, hasMore, itemsOf, pageQuery, paginate, PaginationError, type PageInfo, type PaginationPlan } from '../../engine/http/pagination.js';
import { linkHeaderNext } from '../../engine/http/link-header.js';
import { checkpointKey, defaultSinceFormat, extractUpdateFrom, formatLastSync, sinceExprValue, sincePlacement } from '../../engine/http/since.js';

describe('pagination pure rules', () => {
  it('builds the query of page k for each strategy; size only when named', () => {
    const offset: PaginationPlan = { strategy: 'offset', param: 'offset', pageSize: 2 };
    expect([0, 1, 2].map((k) => pageQuery(offset, k))).toEqual([[['offset', '0']], [['offset', '2']], [['offset', '4']]]);
    const page: PaginationPlan = { strategy: 'page', param: 'p', pageSize: 2, sizeParam: 'per_page' };
    expect(pageQuery(page, 0)).toEqual([
      ['p', '1'],
      ['per_page', '2'],
    ]);
    const cursor: PaginationPlan = { strategy: 'cursor', param: 'after', pageSize: 50, cursorPath: 'meta.next' };
    expect(pageQuery(cursor, 0)).toEqual([]);
    expect(pageQuery(cursor, 1, 'c2')).toEqual([['after', 'c2']]);
  });
  it('finds items: itemsPath, a top-level array, else the first array property', () => {
    expect(itemsOf({ meta: {}, data: [1], other: [2] })).toEqual([1]);
    expect(itemsOf([1, 2])).toEqual([1, 2]);
    expect(itemsOf({ a: { b: [3] } }, 'a.b')).toEqual([3]);
    expect(itemsOf(null)).toEqual([]);
    expect(() => itemsOf({ a: 1 }, 'a')).toThrow(PaginationError);
  });
  it('refuses a page whose first list is empty while a later one holds items, instead of taking no records', () => {
    // `{ warnings: [], data: [...] }`: the first list is empty, so the fetch ended with 0 records
    // as if none were left, and a since checkpoint advanced past the ones under `data`.
    expect(() => itemsOf({ tags: [], data: [{ id: 1 }, { id: 2 }] })).toThrow(/"tags" is empty but "data" holds 2 items.*itemsPath: "data"/);
    expect(itemsOf({ tags: [], data: [{ id: 1 }] }, 'data')).toEqual([{ id: 1 }]);
    // A list of warnings or links is never the records, empty or not (helper 74: Spring HATEOAS's `links` came first).
    expect(itemsOf({ warnings: [], data: [{ id: 1 }] })).toEqual([{ id: 1 }]);
    expect(itemsOf({ links: [{ rel: 'self', href: '/people' }], content: [{ id: 1 }] })).toEqual([{ id: 1 }]);
    expect(itemsOf({ links: [{ rel: 'self', href: '/people' }], content: [] })).toEqual([]);
    // Alone, or without a relation, such a list is a resource's records (helper 76: a links API was paged as 0 records).
    expect(itemsOf({ links: [{ href: 'https://a.example', title: 'A' }] })).toEqual([{ href: 'https://a.example', title: 'A' }]);
    expect(itemsOf({ links: [{ href: 'https://a.example', title: 'A' }], tags: [] })).toEqual([{ href: 'https://a.example', title: 'A' }]);
    expect(itemsOf({ warnings: ['disk almost full'] })).toEqual(['disk almost full']);
    expect(itemsOf({ data: [], included: [] })).toEqual([]);
    expect(itemsOf({ data: [1], errors: [] })).toEqual([1]);
  });
  it('has-more rules', () => {
    const offset: PaginationPlan = { strategy: 'offset', param: 'o', pageSize: 2 };
    expect(hasMore(offset, {}, [1, 2])).toBe(true);
    expect(hasMore(offset, {}, [1])).toBe(false);
    const cursor: PaginationPlan = { strategy: 'cursor', param: 'c', pageSize: 2, cursorPath: 'next' };
    expect(hasMore(cursor, { next: 'x' }, [])).toBe(true);
    expect(hasMore(cursor, { next: '' }, [1, 2])).toBe(false);
    expect(hasMore(cursor, { next: null }, [1, 2])).toBe(false);
  });
});

describe('paginate loop', () => {
  it('keeps the items of the page that satisfies until, and stops there', async () => {
    const pages = [{ data: [1, 2], has_more: true }, { data: [3], has_more: false }, { data: [4], has_more: false }];
    const seen: PageInfo[] = [];
    const r = await paginate(
      { strategy: 'cursor', param: 'after', pageSize: 2, cursorPath: 'data[-1]' },
      {
        fetchPage: async (_q, i) => pages[i],
        until: (body) => (body as { has_more: boolean }).has_more === false,
        onPage: (p) => {
          seen.push(p);
        },
      },
    );
    expect(r).toMatchObject({ items: [1, 2, 3], pages: 2, truncated: false, stoppedBy: 'until' });
    expect(seen.map((p) => [p.items, p.done, p.until ?? false])).toEqual([[[1, 2], false, false], [[3], true, true]]);
  });
  it('refuses the page until stops on when its first list is empty and a later one holds items', async () => {
    const pages = [{ items: [1, 2] }, { tags: [], items: [3], has_more: false }];
    const run = paginate(
      { strategy: 'offset', param: 'offset', pageSize: 2 },
      { fetchPage: async (_q, i) => pages[i], until: (body) => (body as { has_more?: boolean }).has_more === false },
    );
    await expect(run).rejects.toThrow(/"tags" is empty but "items" holds 1 item/);
  });
  it('says where a later list has a usual name for records and the first does not (facets before results)', async () => {
    const warned: string[] = [];
    const facets = [{ name: 'color', count: 3 }];
    const pages = [{ facets, results: [{ id: 1 }, { id: 2 }] }, { facets, results: [{ id: 3 }] }];
    const r = await paginate({ strategy: 'page', param: 'page', pageSize: 2 }, { fetchPage: async (_q, i) => pages[i], warn: (m) => warned.push(m), describe: (q) => `page=${q[0]![1]}` });
    // Taken as upstream takes it (the first list), but said once, with the way to say otherwise.
    expect(r.items).toEqual([facets[0]]);
    expect(warned).toEqual([
      'page 1 (page=1) holds several lists: its records were taken from "facets", the first, but "results" (2 items) looks like where they are; say which with itemsPath: "results" (itemsPath: "facets" silences this)',
    ]);
    // A first list with a usual name, an unusual name alone, or itemsPath: nothing to say.
    for (const [page, itemsPath] of [[{ data: [{ id: 1 }], included: [{ id: 'x' }] }], [{ users: [{ id: 1 }], tags: ['a'] }], [{ facets, results: [{ id: 1 }] }, 'facets']] as const) {
      const quiet: string[] = [];
      await paginate({ strategy: 'page', param: 'page', pageSize: 2, ...(itemsPath ? { itemsPath } : {}) }, { fetchPage: async () => page, warn: (m) => quiet.push(m) });
      expect(quiet, JSON.stringify(page)).toEqual([]);
    }
  });
  it('refuses a page whose list field, a list on the pages before, holds something else', async () => {
    // PHP encodes a list with gaps (after array_filter) as an object keyed "2", "5": the page had
    // no list, so pagination ended there as at the last page, and the pages after were never asked for.
    const pages = [{ items: [{ id: 1 }, { id: 2 }] }, { items: { '2': { id: 3 }, '5': { id: 4 } } }, { items: [{ id: 5 }] }];
    const run = paginate({ strategy: 'page', param: 'page', pageSize: 2 }, { fetchPage: async (_q, i) => pages[i] });
    await expect(run).rejects.toThrow(/page 2 has an object under "items", where the pages before it had their list/);
    // null, {} or a scalar there is still the end (an API that sends an empty list as null or {}).
    for (const last of [{ items: null }, { items: {} }, { items: 'none' }, null]) {
      const r = await paginate({ strategy: 'page', param: 'page', pageSize: 2 }, { fetchPage: async (_q, i) => [pages[0], last][i] });
      expect(r).toMatchObject({ count: 2, stoppedBy: 'exhausted' });
    }
  });
  it('refuses a page with no list whose field holds records keyed by index (PHP), on the first page too', async () => {
    // Helper 62: on page 1 no list field is known yet, so the gapped object was taken for an
    // empty page: the run completed with none of its records and its since checkpoint passed them.
    const walk = (first: unknown) => paginate({ strategy: 'page', param: 'page', pageSize: 2 }, { fetchPage: async (_q, i) => [first, { data: [] }][i] });
    await expect(walk({ data: { '0': { id: 'a' }, '2': { id: 'b' } } })).rejects.toThrow(
      'page 1 has no list of records, but an object of records keyed by index under "data" (how PHP sends a list with gaps): stopping instead of taking it for an empty page',
    );
    // A list anywhere on the page is its records; an object keyed by names, or of scalars, or empty, is no gapped list.
    // An empty list beside it is no list of records (helper 63: `{ errors: [], data: {…} }` was taken for an empty page).
    await expect(walk({ errors: [], data: { '0': { id: 'a' }, '2': { id: 'b' } } })).rejects.toThrow('page 1 has no list of records, but an object of records keyed by index under "data"');
    // A list with records is the page's; keys by name, years or ids, scalars, or nothing are no gapped list (helper 63: a histogram by year failed the fetch).
    for (const page of [{ data: { '0': { id: 'a' } }, items: [{ id: 'x' }] }, { data: { first: { id: 'a' } } }, { counts: { '0': 1, '1': 2 } }, { histogram: { '2023': { n: 1 }, '2024': { n: 2 } } }, { byId: { '918273': { id: 918273 } } }, { data: {} }, {}]) {
      expect(await walk(page), JSON.stringify(page)).toMatchObject({ stoppedBy: 'exhausted' });
    }
  });
  it('refuses a first page whose records are not in a list at its top: a gapped object behind another list, far-apart indices, records nested', async () => {
    // Helper 65: each completed with none of the page's records (Laravel's stored its `links` as records).
    const walk = (first: unknown) => paginate({ strategy: 'page', param: 'page', pageSize: 15 }, { fetchPage: async (_q, i) => [first, { data: [] }][i] });
    const links = [{ url: null, label: '&laquo; Previous', active: false }, { url: '/users?page=1', label: '1', active: true }];
    await expect(walk({ current_page: 1, data: { '0': { id: 1 }, '2': { id: 3 } }, links, total: 2 })).rejects.toThrow(
      'page 1 has no list of records, but an object of records keyed by index under "data" (how PHP sends a list with gaps)',
    );
    // Under a name records go by, indices far apart are a list filtered down too.
    await expect(walk({ data: { '57': { id: 58 }, '93': { id: 94 } }, meta: { page: 1 } })).rejects.toThrow('keyed by index under "data"');
    await expect(walk({ result: { items: [{ id: 1 }, { id: 2 }] } })).rejects.toThrow(
      'page 1 has no list at its top, but "result.items" holds 2 records: stopping instead of taking it for an empty page; say where the records are with itemsPath: "result.items"',
    );
    await expect(walk({ _embedded: { people: [{ id: 1 }] }, _links: { self: { href: '/people' } }, page: { number: 0 } })).rejects.toThrow('itemsPath: "_embedded.people"');
    // With itemsPath the mission has said where they are.
    const told = await paginate({ strategy: 'page', param: 'page', pageSize: 15, itemsPath: 'result.items' }, { fetchPage: async (_q, i) => [{ result: { items: [{ id: 1 }] } }][i] });
    expect(told).toMatchObject({ items: [{ id: 1 }], stoppedBy: 'exhausted' });
    // Still empty pages: a list at the top (empty), lists of no records, what describes the page (an error's details, its filters).
    for (const page of [{ data: [], result: { items: [{ id: 1 }] } }, { stats: { tags: ['a', 'b'] } }, { meta: { filters: [{ name: 'x' }] } }, { _links: { items: [{ href: '/a' }] } }, { byId: { '918273': { id: 1 } } }]) {
      expect(await walk(page), JSON.stringify(page)).toMatchObject({ stoppedBy: 'exhausted' });
    }
    // A first list with records under a usual name is the page's, whatever else it holds.
    expect(await walk({ data: [{ id: 1 }], extra: { '0': { id: 'x' }, '2': { id: 'y' } } })).toMatchObject({ count: 1 });
    // Helper 67: records deeper, or beside an empty `errors: []`, are found too.
    await expect(walk({ data: { viewer: { repositories: { nodes: [{ id: 'r1' }] } } } })).rejects.toThrow('itemsPath: "data.viewer.repositories.nodes"');
    await expect(walk({ errors: [], result: { items: [{ id: 'a' }] } })).rejects.toThrow('itemsPath: "result.items"');
    await expect(walk({ '@odata.count': 2, warnings: [], d: { results: [{ id: 'a' }] } })).rejects.toThrow('itemsPath: "d.results"');
  });
  it('an empty first page with lists of objects that are no records of it is an empty page (helper 67)', async () => {
    const walk = (first: unknown, until?: () => boolean) =>
      paginate({ strategy: 'page', param: 'page', pageSize: 15 }, { fetchPage: async (_q, i) => [first, { data: [] }][i], ...(until ? { until } : {}) });
    for (const page of [
      { summary: { by_status: [{ status: 'open', n: 0 }] } },
      { query: { filters: [{ field: 'a', op: 'eq' }] }, total: 0 },
      { user: { orgs: [{ id: 1 }] }, next: null },
      { _shards: { total: 2, failed: 1, failures: [{ shard: 0 }] }, hits: { total: { value: 0 }, hits: [] } },
      { data: { users: null }, extensions: { warnings: [{ message: 'deprecated' }] } },
      { columnHeader: { metricHeaderEntries: [{ name: 'ga:users' }] }, data: { totals: [{ values: ['0'] }] } },
      // Objects keyed by ids beside the page's list, or by years, are no gapped lists.
      { total: 0, data: { '2023': { n: 0 }, '2024': { n: 0 } } },
      { orders: [], items: { '100234': { sku: 'a' }, '100977': { sku: 'b' } } },
    ]) {
      expect(await walk(page), JSON.stringify(page)).toMatchObject({ stoppedBy: 'exhausted' });
    }
    expect(await walk({ products: [{ id: 'p1' }], values: { '17': { label: 'red' }, '942': { label: 'blue' } } })).toMatchObject({ count: 1 });
    // Helper 68: the page `until` ends on may hold its records below the top too; a bare `total: 0` may be a sum.
    await expect(walk({ result: { items: [{ id: 1 }] }, has_more: false }, () => true)).rejects.toThrow('itemsPath: "result.items"');
    await expect(walk({ total: 0, result: { entries: [{ id: 1 }] } })).rejects.toThrow('itemsPath: "result.entries"');
  });
  it('finds records below the top under the names they go by there (helper 73: each completed with none)', async () => {
    const walk = (first: unknown) => paginate({ strategy: 'cursor', param: 'after', cursorPath: 'next' }, { fetchPage: async () => first });
    await expect(walk({ kind: 'Listing', data: { after: null, children: [{ kind: 't3', data: { id: 'a' } }] } })).rejects.toThrow('itemsPath: "data.children"');
    await expect(walk({ responseHeader: { status: 0 }, response: { numFound: 2, start: 0, docs: [{ id: 'a' }, { id: 'b' }] } })).rejects.toThrow('itemsPath: "response.docs"');
    await expect(walk({ data: { orders: { edges: [{ cursor: 'c1', node: { id: 'o1' } }], pageInfo: { hasNextPage: false } } } })).rejects.toThrow('itemsPath: "data.orders.edges"');
    // At the top such a name is no records name: a tree node's children beside the page's records stay said, not refused.
    expect(await walk({ features: [{ id: 'f' }] })).toMatchObject({ count: 1 });
  });
  it('an empty list of records beside links or notices is an empty page; beside records it is refused (helper 73)', async () => {
    const walk = (first: unknown) => paginate({ strategy: 'page', param: 'page', pageSize: 10 }, { fetchPage: async () => first });
    // Mailchimp's empty members beside its _links; Jira's empty issues beside its warningMessages.
    const links = [{ rel: 'self', href: 'https://x.api.mailchimp.com/3.0/lists/1/members', method: 'GET' }];
    expect(await walk({ members: [], list_id: '1', total_items: 0, _links: links })).toMatchObject({ count: 0, stoppedBy: 'exhausted' });
    expect(await walk({ startAt: 0, maxResults: 50, total: 0, issues: [], warningMessages: ["The value 'X' does not exist for the field 'project'."] })).toMatchObject({ count: 0 });
    // Records under such a name (Slack's messages beside an empty pinned), or a links list that holds records, are refused as before.
    await expect(walk({ pinned: [], messages: [{ ts: '1', text: 'hi' }] })).rejects.toThrow('itemsPath: "messages"');
    // Text under errors or messages beside an empty list is an in-band error as often (helper 74: `{ data: [], errors: ["timed out"] }` ended a walk).
    for (const page of [{ data: [], errors: ['backend timed out'] }, { results: [], messages: ['Rate limit exceeded'] }, { issues: [], errorMessages: ['no such project'] }]) {
      await expect(walk(page), JSON.stringify(page)).rejects.toThrow('is empty but');
    }
    await expect(walk({ people: [], links: [{ id: 1, url: '/a' }] })).rejects.toThrow('itemsPath: "links"');
  });
  it('reads the ways real APIs say a short page is not the last (helper 74: each completed with the first page only)', async () => {
    const rows = (n: number) => Array.from({ length: n }, (_, id) => ({ id }));
    const first = (plan: PaginationPlan, body: unknown) => paginate(plan, { fetchPage: async () => body });
    const page = (size: number, sizeParam?: string): PaginationPlan => ({ strategy: 'page', param: 'page', pageSize: size, ...(sizeParam ? { sizeParam } : {}) });
    const offset = (size: number, sizeParam?: string, itemsPath?: string): PaginationPlan => ({ strategy: 'offset', param: 'offset', pageSize: size, ...(sizeParam ? { sizeParam } : {}), ...(itemsPath ? { itemsPath } : {}) });
    const cases: Array<[string, PaginationPlan, unknown, string]> = [
      // The size the mission sent, echoed lowered: Jira caps maxResults, Confluence limit.
      ['jira', offset(1000, 'maxResults', 'issues'), { startAt: 0, maxResults: 100, total: 350, issues: rows(100) }, 'maxResults: 100, the size it pages by'],
      ['confluence', offset(500, 'limit'), { results: rows(100), start: 0, limit: 100, size: 100, _links: { next: '/rest/api/content?limit=100&start=100' } }, '_links.next: "/rest/api/content'],
      ['odata', offset(1000, '$top'), { '@odata.context': 'x', value: rows(100), '@odata.nextLink': 'https://svc/People?$skip=100' }, '@odata.nextLink'],
      ['strapi', page(500, 'pageSize'), { data: rows(100), meta: { pagination: { page: 1, pageSize: 100, pageCount: 3, total: 240 } } }, 'meta.pagination.total: 240'],
      ['ogc', offset(1000, 'limit', 'features'), { type: 'FeatureCollection', features: rows(100), numberMatched: 250, links: [{ rel: 'self', href: '/items' }, { rel: 'next', href: '/items?offset=100' }] }, 'a link with rel "next"'],
      ['arcgis', offset(2000, 'resultRecordCount', 'features'), { features: rows(1000), exceededTransferLimit: true }, 'exceededTransferLimit: true'],
      ['solr', offset(100, undefined, 'response.docs'), { response: { numFound: 300, start: 0, docs: rows(10) } }, 'response.numFound: 300'],
      ['elasticsearch', offset(100, undefined, 'hits.hits'), { hits: { total: { value: 300, relation: 'eq' }, hits: rows(10) } }, 'hits.total.value: 300'],
      ['typesense', page(100, undefined), { found: 300, page: 1, hits: rows(10) }, 'found: 300'],
      ['meilisearch', offset(100), { hits: rows(20), offset: 0, limit: 20, estimatedTotalHits: 300 }, 'estimatedTotalHits: 300'],
    ];
    for (const [name, plan, body, shown] of cases) {
      await expect(first(plan, body), name).rejects.toThrow(`yet says more pages follow (${shown}`);
    }
    // An empty page in the middle whose list of links names the next page is no end either.
    const mid = paginate(page(20), { fetchPage: async (_q, i) => [{ items: rows(20), links: [{ rel: 'self', href: '/p1' }] }, { items: [], links: [{ rel: 'self', href: '/p2' }, { rel: 'next', href: '/p3' }] }][i] });
    await expect(mid).rejects.toThrow('page 2 holds no items, yet says more pages follow (a link with rel "next"');
    // Their last pages end the walk: a size echoed as sent, a short page with no next.
    expect(await first(offset(100, 'maxResults', 'issues'), { startAt: 0, maxResults: 100, total: 40, issues: rows(40) })).toMatchObject({ count: 40, stoppedBy: 'exhausted' });
    // An API that echoes as `limit` what it returned, with a count that says the page is all there is.
    expect(await first(offset(100, 'limit'), { items: rows(7), limit: 7, total: 7 })).toMatchObject({ count: 7, stoppedBy: 'exhausted' });
    expect(await first(offset(1000, 'limit', 'features'), { features: rows(5), numberMatched: 5, links: [{ rel: 'self', href: '/items' }] })).toMatchObject({ count: 5 });
  });
  it('a 1-based API paging by a smaller size than asked is told the size, not to start at page 0 (helper 74)', async () => {
    const rows = (n: number) => Array.from({ length: n }, (_, id) => ({ id }));
    const first = (plan: PaginationPlan, body: unknown) => paginate(plan, { fetchPage: async () => body });
    // DRF with total_pages, reqres.in, Meilisearch's page mode: two pages by the API's size.
    await expect(first({ strategy: 'page', param: 'page', pageSize: 100, sizeParam: 'page_size' }, { count: 80, total_pages: 2, next: 'https://x/?page=2', results: rows(50) })).rejects.toThrow('page(page, 50, page_size)');
    await expect(first({ strategy: 'page', param: 'page', pageSize: 20 }, { page: 1, per_page: 6, total: 12, total_pages: 2, data: rows(6) })).rejects.toThrow('page(page, 6)');
    await expect(first({ strategy: 'page', param: 'page', pageSize: 100 }, { hits: rows(20), hitsPerPage: 20, page: 1, totalPages: 2, totalHits: 30 })).rejects.toThrow('page(page, 20)');
    // A page's own `count` is no count of all the records (helper 77: a 0-based walk from page 1 completed with 15 of 25).
    const own = (page: number) => ({ results: rows(25).slice(page * 10, page * 10 + 10), count: Math.min(10, 25 - page * 10), total_pages: 3 });
    await expect(paginate({ strategy: 'page', param: 'page', pageSize: 10 }, { fetchPage: async (q) => own(Number(q[0]![1])) })).rejects.toThrow('the API counts its pages from 0');
  });
  it('an Algolia walk from page 1 of an API that counts from 0 is refused by its nbPages', async () => {
    const hits = Array.from({ length: 25 }, (_, id) => ({ id }));
    const algolia = (page: number) => ({ hits: hits.slice(page * 20, page * 20 + 20), nbHits: 25, page, nbPages: 2, hitsPerPage: 20 });
    const walk = (firstPage?: number) =>
      paginate({ strategy: 'page', param: 'page', pageSize: 20, sizeParam: 'hitsPerPage', ...(firstPage !== undefined ? { firstPage } : {}) }, { fetchPage: async (q) => algolia(Number(q[0]![1])) });
    await expect(walk()).rejects.toThrow('the API counts 2 pages (nbPages: 2) and the walk asked for pages 1 to 1: the API counts its pages from 0');
    expect(await walk(0)).toMatchObject({ count: 25, stoppedBy: 'exhausted' });
  });
  it('an empty API that counts one page is empty, not one that starts at 0; an empty page with a total names no page size', async () => {
    // Helper 65: will_paginate keeps total_pages at least 1; the empty first page was refused
    // with "counts its pages from 0", whose page=0 such APIs reject.
    const plan: PaginationPlan = { strategy: 'page', param: 'page', pageSize: 10 };
    for (const page of [{ items: [], total_entries: 0, total_pages: 1 }, { items: [], total_pages: 1 }]) {
      expect(await paginate(plan, { fetchPage: async () => page }), JSON.stringify(page)).toMatchObject({ count: 0, stoppedBy: 'exhausted' });
    }
    // A count of records the walk did not see: page 0 was skipped (a bare `total` or `count` counts here too).
    await expect(paginate(plan, { fetchPage: async () => ({ content: [], totalElements: 3, totalPages: 1 }) })).rejects.toThrow('but the API counts 1 pages (totalPages: 1) and the walk asked for pages 1 to 1: the API counts its pages from 0');
    await expect(paginate(plan, { fetchPage: async () => ({ items: [], total_pages: 1, total: 3 }) })).rejects.toThrow('the API counts its pages from 0');
    await expect(paginate(plan, { fetchPage: async () => ({ items: [], meta: { total_pages: 1, count: 3 } }) })).rejects.toThrow('the API counts its pages from 0');
    // An empty page in the middle of a walk is not said to be in the wrong place.
    const middle = paginate(plan, { fetchPage: async (_q, i) => [{ items: Array.from({ length: 10 }, (_, k) => ({ id: k })) }, { items: [], next_page: 3 }][i] });
    await expect(middle).rejects.toThrow('page 2 holds no items, yet says more pages follow (next_page: 3): stopping instead of ending the walk with the rest missing. The pages before it held records');
    // And no `page(page, 0, …)` is suggested for it.
    await expect(paginate(plan, { fetchPage: async () => ({ data: [], total_count: 2 }) })).rejects.toThrow(
      'page 1 holds no items, yet says more pages follow (total_count: 2): stopping instead of ending the walk with the rest missing. The records are not where the fetch looks',
    );
  });
  it('warns when a full first page of a cursor pagination has nothing at the cursor path (misspelt), and only then', async () => {
    const plan: PaginationPlan = { strategy: 'cursor', param: 'after', pageSize: 2, cursorPath: 'meta.nxt' };
    const warnings = async (pages: unknown[], p: PaginationPlan = plan) => {
      const said: string[] = [];
      await paginate(p, { fetchPage: async (_q, i) => pages[i], warn: (m) => said.push(m), describe: () => 'GET /items' });
      return said;
    };
    const full = { items: [1, 2], meta: { next: 'c2', count: 9 } };
    expect(await warnings([full])).toEqual([
      'page 1 (GET /items) is full (2 items) but has nothing at the cursor path "meta.nxt", so it was taken for the last page; "meta" has: next, count. ' +
        'If the path is misspelt, correct it in cursor(after, 2, "…"); if the API leaves the cursor out of a full last page, nothing is wrong',
    ]);
    expect((await warnings([{ items: [1, 2] }]))[0]).toContain('the page has: items.');
    // Present but null or empty: a clear end. A short page: the end. A cursor seen on an earlier page: the path is right.
    expect(await warnings([{ items: [1, 2], meta: { nxt: null } }])).toEqual([]);
    expect(await warnings([{ items: [1, 2], meta: { nxt: '' } }])).toEqual([]);
    expect(await warnings([{ items: [1], meta: {} }])).toEqual([]);
    expect(await warnings([{ items: [1, 2], meta: { nxt: 'c2' } }, { items: [3, 4], meta: {} }])).toEqual([]);
    // No size, no "full".
    expect(await warnings([{ items: [1, 2] }], { strategy: 'cursor', param: 'after', cursorPath: 'meta.nxt' })).toEqual([]);
  });
  it('refuses any page answered with an in-band error and no list but the error\'s, the first and an until page too', async () => {
    const plan: PaginationPlan = { strategy: 'page', param: 'page', pageSize: 2 };
    const first = (body: unknown, more: Partial<PaginationPlan> = {}, until?: () => boolean) =>
      paginate({ ...plan, ...more }, { fetchPage: async () => body, describe: () => 'GET /items?page=1', ...(until ? { until } : {}) });
    await expect(first({ error: 'rate limited' })).rejects.toThrow('page 1 (GET /items?page=1) answered with an error under "error" and no list: {"error":"rate limited"}');
    // Its errors were taken for the page's records.
    await expect(first({ errors: [{ message: 'throttled' }] })).rejects.toThrow('under "errors" and no list');
    await expect(first({ data: null, errors: [{ message: 'x' }] }, { itemsPath: 'data' })).rejects.toThrow('under "errors"');
    // `until: length(response.items) == 0` holds on it, and would without the error: still refused
    // (a rate-limit answer is no end). An until that holds only by the error names it the end.
    await expect(first({ fault: { faultstring: 'quota' } }, {}, () => true)).rejects.toThrow('under "fault"');
    const byError = (body: unknown) => (body as { error?: unknown }).error !== undefined;
    expect(await paginate(plan, { fetchPage: async (_q, i) => [{ items: [1, 2] }, { error: 'invalid page' }][i], until: byError })).toMatchObject({ items: [1, 2], stoppedBy: 'until' });
    // The message says how to name such an end, and how to take a resource named errors as records.
    await expect(first({ error: 'invalid page' })).rejects.toThrow('say so with `until: exists(response.error)`');
    await expect(first({ errors: [{ id: 1, title: 'TypeError' }] })).rejects.toThrow('with `itemsPath: "errors"`');
    expect(await first({ errors: [{ id: 1 }] }, { itemsPath: 'errors' })).toMatchObject({ items: [{ id: 1 }] });
    // A list beside the error (GraphQL's partial data), or an error that is empty, is a page.
    expect(await first({ data: [1], errors: [{ message: 'partial' }] })).toMatchObject({ items: [1] });
    expect(await first({ items: [], errors: [] })).toMatchObject({ items: [] });
    expect(await first({ items: [1], error: null })).toMatchObject({ items: [1] });
    expect(await first({ total: 0 })).toMatchObject({ items: [] });
  });
  it('refuses an in-band error after full pages; a page with no list and no error is an empty page, the end', async () => {
    // `{ "error": "rate limited" }` with 200 on page 3 of 5 held no items: the pagination ended
    // there as at the last page, and the run completed without pages 3 to 5.
    const full = { items: [{ id: 1 }, { id: 2 }] };
    const next = { items: [{ id: 3 }, { id: 4 }] };
    const plan: PaginationPlan = { strategy: 'page', param: 'page', pageSize: 2 };
    const walk = (last: unknown, more: Partial<PaginationPlan> = {}, pages: unknown[] = [full, next]) =>
      paginate({ ...plan, ...more }, { fetchPage: async (_q, i) => [...pages, last][i], describe: (q) => `GET /items?${new URLSearchParams(q)}` });
    await expect(walk({ error: 'rate limited' })).rejects.toThrow('page 3 (GET /items?page=3) answered with an error under "error" and no list');
    await expect(walk({ ok: false, error: 'ratelimited' })).rejects.toThrow('under "error"'); // Slack
    await expect(walk({ error: 'rate limited' }, {}, [[1, 2]])).rejects.toThrow('page 2 (GET /items?page=2) answered with an error');
    // The empty shapes real APIs answer past an exactly full last page (their row count a
    // multiple of the page size): `{}`, proto3 and Spring HAL leaving the empty list out, a null
    // list, PHP's empty map as `[]`, a message. Refused for a while on 2026-12-02; the end again.
    for (const [last, more] of [
      [{}, {}],
      [{ kind: 'drive#fileList' }, {}],
      [{ _links: { self: {} }, page: { totalElements: 4 } }, { itemsPath: '_embedded.orders' }],
      [{ data: null }, { itemsPath: 'data.items' }],
      [{ data: [] }, { itemsPath: 'data.items' }],
      [{ message: 'page out of range' }, {}],
      [{ done: true }, {}],
    ] as const) {
      const pages = more.itemsPath === '_embedded.orders' ? [{ _embedded: { orders: [1, 2] } }, { _embedded: { orders: [3, 4] } }] : more.itemsPath === 'data.items' ? [{ data: { items: [1, 2] } }, { data: { items: [3, 4] } }] : [full, next];
      expect(await walk(last, more, pages), JSON.stringify(last)).toMatchObject({ count: 4, pages: 3, stoppedBy: 'exhausted' });
    }
  });
  it('refuses a short page that says more follow: the API pages by a size of its own', async () => {
    // DRF's default page size of 20 where the mission says 100 and sends none: page 1 held 20
    // records, was taken for the last page, and the run completed with them alone.
    const drf = { count: 120, next: 'https://api.test/items?page=2', previous: null, results: [1, 2, 3] };
    const plan: PaginationPlan = { strategy: 'page', param: 'page', pageSize: 100 };
    const walk = (pages: unknown[], more: Partial<PaginationPlan> = {}) =>
      paginate({ ...plan, ...more }, { fetchPage: async (_q, i) => pages[i], describe: (q) => `GET /items?${new URLSearchParams(q)}` });
    await expect(walk([drf])).rejects.toThrow(
      'page 1 (GET /items?page=1) holds 3 items, fewer than the page size 100, yet says more pages follow (next: "https://api.test/items?page=2")',
    );
    await expect(walk([drf])).rejects.toThrow('page(page, 100, per_page) or limit, page_size… — or set the page size to the API\'s: page(page, 3)');
    // Jira caps maxResults at 50 where 100 is asked: the size was sent, the API answered fewer.
    await expect(walk([{ issues: [1, 2], isLast: false, has_more: true }], { strategy: 'offset', param: 'startAt', sizeParam: 'maxResults' })).rejects.toThrow(
      /holds 2 items, fewer than the page size 100, yet says more pages follow \(has_more: true\): the API pages by a size of its own \(it was sent as maxResults=100 and the API answered 2\).*offset\(startAt, 2, maxResults\)/,
    );
    await expect(walk([{ data: [1], links: { next: '/items?page[number]=2' } }])).rejects.toThrow('(links.next: "/items?page[number]=2")');
    await expect(walk([{ data: [1], meta: { has_more: true } }])).rejects.toThrow('(meta.has_more: true)');
    // A first page that says how many records (or pages) there are in all, and holds fewer.
    await expect(walk([{ items: [1, 2], total_count: 95 }])).rejects.toThrow('holds 2 items, fewer than the page size 100, yet says more pages follow (total_count: 95)');
    await expect(walk([{ data: [1], meta: { total_pages: 4 } }])).rejects.toThrow('(meta.total_pages: 4)');
    await expect(walk([{ data: [1], pagination: { total: 3 } }])).rejects.toThrow('(pagination.total: 3)');
    // A later short page below a total read on page 1 (a record deleted meanwhile) is the end, as
    // is a first page that holds its total; a bare total or count may be a sum, and is not read.
    const fullPage = { items: Array.from({ length: 100 }, (_, i) => i), total_count: 150 };
    expect(await walk([fullPage, { items: [100, 101], total_count: 150 }])).toMatchObject({ count: 102, stoppedBy: 'exhausted' });
    for (const last of [{ items: [1, 2], total_count: 2 }, { items: [1], total_pages: 1 }, { items: [1, 2], total: 1520 }, { items: [1], count: 7 }, { items: [1], total_count: '95' }]) {
      expect(await walk([last]), JSON.stringify(last)).toMatchObject({ pages: 1, stoppedBy: 'exhausted' });
    }
    // A short last page that says no more follow — or says nothing — ends the walk, as ever.
    for (const last of [{ ...drf, next: null }, { data: [1], has_more: false }, { data: [1], next_page: '' }, { data: [1], links: { next: null } }, { data: [1] }, [1, 2]]) {
      expect(await walk([last]), JSON.stringify(last)).toMatchObject({ pages: 1, stoppedBy: 'exhausted' });
    }
    // GitHub says it in a Link header (the caller reads it: linkedNext).
    const linked = paginate(plan, { fetchPage: async () => [1, 2], linkedNext: () => 'https://api.github.com/x?page=2' });
    await expect(linked).rejects.toThrow('holds 2 items, fewer than the page size 100, yet says more pages follow (its Link header: <https://api.github.com/x?page=2>; rel="next")');
    // A cursor walk follows its cursor; `until` ends a walk where it holds.
    expect(await walk([{ data: [1], has_more: true }], { strategy: 'cursor', param: 'after', cursorPath: 'nope' })).toMatchObject({ pages: 1 });
    expect(await paginate(plan, { fetchPage: async () => drf, until: () => true })).toMatchObject({ stoppedBy: 'until' });
  });
  it('reads the next page of a Link header (RFC 8288)', () => {
    expect(linkHeaderNext('<https://a.test/x?page=2>; rel="next", <https://a.test/x?page=9>; rel="last"')).toBe('https://a.test/x?page=2');
    expect(linkHeaderNext('<https://a.test/x?page=1>; rel="prev first", <https://a.test/x?a=1,2&page=3>; rel=next')).toBe('https://a.test/x?a=1,2&page=3');
    expect(linkHeaderNext('<https://a.test/x?page=1>; rel="prev"')).toBeUndefined();
    expect(linkHeaderNext(undefined)).toBeUndefined();
  });
  it('walks on past a page with no items that names the next one (proto3 leaves an empty list out)', async () => {
    const pages = [{ files: [1, 2], nextPageToken: 't2' }, { kind: 'drive#fileList', nextPageToken: 't3' }, { files: [3, 4] }];
    const r = await paginate({ strategy: 'cursor', param: 'pageToken', pageSize: 2, cursorPath: 'nextPageToken' }, { fetchPage: async (_q, i) => pages[i] });
    expect(r).toMatchObject({ items: [1, 2, 3, 4], pages: 3 });
  });
  it('stops at an empty until page, keeping nothing from it', async () => {
    const pages = [{ items: [1, 2] }, { items: [] }];
    const queries: string[] = [];
    const r = await paginate(
      { strategy: 'offset', param: 'offset', pageSize: 2 },
      {
        fetchPage: async (q, i) => {
          queries.push(new URLSearchParams(q).toString());
          return pages[i];
        },
        until: (body) => (body as { items: unknown[] }).items.length === 0,
      },
    );
    expect(queries).toEqual(['offset=0', 'offset=2']);
    expect(r).toMatchObject({ items: [1, 2], pages: 2, truncated: false, stoppedBy: 'until' });
  });
  it('marks truncation at maxPages and maxItems', async () => {
    const full = async (_q: unknown, index: number) => ({ items: [2 * index + 1, 2 * index + 2] });
    const byPages = await paginate({ strategy: 'page', param: 'p', pageSize: 2, maxPages: 3 }, { fetchPage: full });
    expect(byPages).toMatchObject({ pages: 3, truncated: true, stoppedBy: 'max-pages' });
    expect(byPages.items).toHaveLength(6);
    const byItems = await paginate({ strategy: 'page', param: 'p', pageSize: 2, maxItems: 3 }, { fetchPage: full });
    expect(byItems).toMatchObject({ items: [1, 2, 3], pages: 2, truncated: true, stoppedBy: 'max-items' });
  });
  it('stops on a full page equal to the one before: an API that does not read the page parameter', async () => {
    // Before: every page answered with the first, up to the default 10,000 pages, then "completed".
    const seen: number[] = [];
    const same = async () => [{ id: 1 }, { id: 2 }];
    await expect(paginate({ strategy: 'page', param: 'pg', pageSize: 2 }, { fetchPage: same, onPage: (p) => void seen.push(p.index) })).rejects.toThrow(
      /the API answered page 2 \(pg=2\) with the same 2 items as page 1; it does not seem to read "pg"/,
    );
    expect(seen).toEqual([0]);
    await expect(paginate({ strategy: 'offset', param: 'skip', pageSize: 2 }, { fetchPage: same })).rejects.toThrow(/page 2 \(skip=2\) with the same 2 items/);
    // Pages that differ, and a short last page equal in its items to nothing before, go on as ever.
    const pages = [[{ id: 1 }, { id: 2 }], [{ id: 3 }, { id: 2 }], [{ id: 3 }]];
    const r = await paginate({ strategy: 'page', param: 'pg', pageSize: 2 }, { fetchPage: async (_q, i) => pages[i] });
    expect(r).toMatchObject({ count: 5, pages: 3, stoppedBy: 'exhausted' });
  });
  it('fails at the default page limit with pages left, rather than end "completed" cut off; a limit the mission set truncates', async () => {
    // An API whose pages differ but never run out (helper 42: ids repeated, one field changing).
    let n = 0;
    const endless = async () => [{ id: 1, n: ++n }, { id: 2, n }];
    await expect(paginate({ strategy: 'page', param: 'page', pageSize: 2 }, { fetchPage: endless, collect: false })).rejects.toThrow(
      new PaginationError(`stopped at the default limit of ${DEFAULT_MAX_PAGES} pages with more left: the API may page without end, or hold more than that — set maxPages to fetch further (or to say where the fetch may stop)`),
    );
    expect(n).toBe(DEFAULT_MAX_PAGES);
    const set = await paginate({ strategy: 'page', param: 'page', pageSize: 2, maxPages: 3 }, { fetchPage: endless });
    expect(set).toMatchObject({ pages: 3, truncated: true, stoppedBy: 'max-pages' });
  });

  it('counts the pages and items taken as recorded before a resumed walk against maxPages and maxItems', async () => {
    const page = async (_q: unknown, i: number) => [{ id: 2 * i }, { id: 2 * i + 1 }];
    // Two pages (four items) were taken as recorded: of maxPages 3, one page is left to walk.
    const resumed = await paginate({ strategy: 'page', param: 'page', pageSize: 2, maxPages: 3 }, { fetchPage: page }, { index: 2, pagesBefore: 2, itemsBefore: 4 });
    expect(resumed).toMatchObject({ pages: 1, count: 2, truncated: true, stoppedBy: 'max-pages' });
    const items = await paginate({ strategy: 'page', param: 'page', pageSize: 2, maxItems: 5 }, { fetchPage: page }, { index: 2, pagesBefore: 2, itemsBefore: 4 });
    expect(items).toMatchObject({ pages: 1, count: 1, truncated: true, stoppedBy: 'max-items' });
  });

  it('says which limit truncated a fetch', () => {
    expect(describeTruncation('max-pages', { maxPages: 3 }, true)).toBe('truncated at maxPages 3; the since checkpoint does not advance');
    expect(describeTruncation('max-items', { maxItems: 7 }, false)).toBe('truncated at maxItems 7');
  });
  it('reports each kept page and stops on a repeated cursor', async () => {
    const seen: number[] = [];
    await expect(
      paginate(
        { strategy: 'cursor', param: 'c', pageSize: 1, cursorPath: 'next' },
        { fetchPage: async () => ({ data: [1], next: 'same' }), onPage: (p) => void seen.push(p.index) },
      ),
    ).rejects.toThrow(/cursor "same" again/);
    expect(seen).toEqual([0]);
  });
  it('rejects a page size <= 0 and a cursor without a path', async () => {
    await expect(paginate({ strategy: 'offset', param: 'o', pageSize: 0 }, { fetchPage: async () => ({}) })).rejects.toThrow(/positive integer/);
    await expect(paginate({ strategy: 'cursor', param: 'c', pageSize: 5 }, { fetchPage: async () => ({}) })).rejects.toThrow(/path of the next cursor/);
  });
});

describe('since', () => {
  const t = Date.parse('2025-03-04T05:06:07.890Z');
  it('formats lastSync in the four formats (UTC)', () => {
    expect(formatLastSync(t, 'iso')).toBe('2025-03-04T05:06:07.890Z');
    expect(formatLastSync(t, 'unix')).toBe(String(Math.floor(t / 1000)));
    expect(formatLastSync(t, 'unix-ms')).toBe(String(t));
    expect(formatLastSync(t, 'date-only')).toBe('2025-03-04');
    expect(formatLastSync(0, 'unix')).toBe('0');
    expect(formatLastSync(t, 'http-date')).toBe('Tue, 04 Mar 2025 05:06:07 GMT');
    expect(formatLastSync(0, 'http-date')).toBe('Thu, 01 Jan 1970 00:00:00 GMT');
    expect(() => formatLastSync(-1, 'http-date')).toThrow(/has no HTTP date/);
    expect(() => formatLastSync(Date.UTC(10000, 0, 1), 'http-date')).toThrow(/has no HTTP date/);
  });
  it('sends an HTTP date in a conditional header unless the mission names a format, ISO elsewhere', () => {
    expect(defaultSinceFormat('If-Modified-Since')).toBe('http-date');
    expect(defaultSinceFormat('if-unmodified-since')).toBe('http-date');
    expect(defaultSinceFormat('X-Updated-Since')).toBe('iso');
    expect(defaultSinceFormat(undefined)).toBe('iso');
  });
  it('derives checkpoint keys', () => {
    expect(checkpointKey({ explicitKey: 'events', source: 'Api', path: '/e' })).toBe('events');
    expect(checkpointKey({ source: 'Store', operationId: 'listPets' })).toBe('Store:listPets');
    expect(checkpointKey({ source: 'Api', path: '/users/42//?x=1' })).toBe('Api:/users/42');
  });
  it('places the value in a query parameter or a header', () => {
    expect(sincePlacement({}, 'v')).toEqual({ query: [['since', 'v']], headers: {} });
    expect(sincePlacement({ param: 'updated_since' }, 'v').query).toEqual([['updated_since', 'v']]);
    expect(sincePlacement({ header: 'If-Modified-Since', param: 'x' }, 'v')).toEqual({ query: [], headers: { 'If-Modified-Since': 'v' } });
    expect(sinceExprValue(5)).toBe('5');
    expect(() => sinceExprValue(null)).toThrow(/since expression/);
  });
  it('extracts updateFrom instants', () => {
    expect(extractUpdateFrom({ meta: { at: '2025-03-04T05:06:07.890Z' } }, 'meta.at')).toBe(t);
    expect(extractUpdateFrom({ at: 1_700_000_000 }, 'at')).toBe(1_700_000_000_000);
    expect(extractUpdateFrom({ at: 1_700_000_000_123 }, 'at')).toBe(1_700_000_000_123);
    expect(extractUpdateFrom({ at: 'yesterday-ish' }, 'at')).toBeUndefined();
    expect(extractUpdateFrom({}, 'at')).toBeUndefined();
  });
  it("reads an updateFrom, a sync_state value and a date built-in's text without a zone as UTC, whatever the machine's zone", async () => {
    // Helper 79: on a New York host "2024-03-07T10:00:00" became 15:00Z, and the next sync asked
    // from 5 hours later: what changed in between was never fetched. Date text like "March 7, 2024
    // 23:30" was March 8 there, so `year(...)` differed and a run verified elsewhere diverged.
    const { dateStringToMs } = await import('../../engine/eval/iso-dates.js');
    const saved = process.env.TZ;
    try {
      for (const zone of ['America/New_York', 'Asia/Kolkata', 'UTC']) {
        process.env.TZ = zone;
        expect(extractUpdateFrom({ at: '2024-03-07T10:00:00' }, 'at'), zone).toBe(Date.UTC(2024, 2, 7, 10));
        expect(extractUpdateFrom({ at: '2024-03-07 10:00:00' }, 'at'), zone).toBe(Date.UTC(2024, 2, 7, 10));
        expect(dateStringToMs('March 7, 2024 23:30'), zone).toBe(Date.UTC(2024, 2, 7, 23, 30));
        expect(dateStringToMs('Dec 31, 2024 22:00'), zone).toBe(Date.UTC(2024, 11, 31, 22));
        expect(dateStringToMs('7-Mar-2024'), zone).toBe(Date.UTC(2024, 2, 7));
        // A zone written in the text is the text's.
        expect(dateStringToMs('Thu, 07 Mar 2024 23:30:00 +0100'), zone).toBe(Date.UTC(2024, 2, 7, 22, 30));
        expect(dateStringToMs('Mar 7 2024 10:00 EST'), zone).toBe(Date.UTC(2024, 2, 7, 15));
        expect(dateStringToMs('Thu, 07 Mar 2024 23:30:00 GMT'), zone).toBe(Date.UTC(2024, 2, 7, 23, 30));
        expect(extractUpdateFrom({ at: 'Thu, 07 Mar 2024 23:30:00 GMT' }, 'at'), zone).toBe(Date.UTC(2024, 2, 7, 23, 30));
        // Ruby's and Go's instants, their zone after a space (helper 81: refused once read by the ISO rules).
        expect(extractUpdateFrom({ at: '2024-03-07 23:30:00 UTC' }, 'at'), zone).toBe(Date.UTC(2024, 2, 7, 23, 30));
        expect(extractUpdateFrom({ at: '2024-03-07 23:30:00 +0000' }, 'at'), zone).toBe(Date.UTC(2024, 2, 7, 23, 30));
        expect(extractUpdateFrom({ at: '2024-03-07 23:30:00.123456789 +0000 UTC' }, 'at'), zone).toBe(Date.UTC(2024, 2, 7, 23, 30, 0, 123));
        expect(extractUpdateFrom({ at: '2024-03-07 23:30:00 -0500' }, 'at'), zone).toBe(Date.UTC(2024, 2, 8, 4, 30));
        // Go names the zone after its offset; the offset decides (helper 82).
        expect(extractUpdateFrom({ at: '2024-03-07 10:00:00.123456789 -0500 EST' }, 'at'), zone).toBe(Date.UTC(2024, 2, 7, 15, 0, 0, 123));
        expect(extractUpdateFrom({ at: '2024-03-07 10:00:00 -0300 -03' }, 'at'), zone).toBe(Date.UTC(2024, 2, 7, 13));
        expect(dateStringToMs('2024-02-31 10:00:00 UTC'), zone).toBeUndefined();
        // A zone word before the day is none V8 honours: still UTC, never the machine's zone.
        expect(dateStringToMs('UTC Mar 7 2024 10:00'), zone).toBe(Date.UTC(2024, 2, 7, 10));
        expect(dateStringToMs('Thu UTC Mar 07 2024 10:00:00'), zone).toBe(Date.UTC(2024, 2, 7, 10));
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });
  it('reads updateFrom in micro- and nanoseconds, and takes no instant a date cannot hold', () => {
    // 1.7e15 µs was read as ms, year 55,000: every later sync asked for changes since then and got
    // none, in runs that completed. 1e17 became the checkpoint, and every later run failed "Invalid time value".
    expect(extractUpdateFrom({ at: 1_700_000_000_123_456 }, 'at')).toBe(1_700_000_000_123);
    expect(extractUpdateFrom({ at: '1700000000123456789' }, 'at')).toBe(1_700_000_000_123);
    expect(extractUpdateFrom({ at: 1e22 }, 'at')).toBeUndefined();
    expect(extractUpdateFrom({ at: '+275760-09-13T00:00:00.001Z' }, 'at')).toBeUndefined();
    expect(() => formatLastSync(1e17)).toThrow(/100000000000000000 is no instant a date can hold/);
  });
});
