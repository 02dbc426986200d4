/**
 * assets/language/until-last-page.vague against a FakeApi on 127.0.0.1: the page on which `until`
 * holds is the last page, and its items are kept. Upstream's examples stop Stripe's cursor with
 * `until: response.has_more == false`, whose last page holds data: reference §C.1.5 discarded that
 * page, losing its records (docs/language.md). An empty last page (`length(response.x) == 0`)
 * still adds nothing, and no page after the `until` page is asked for.
 *
 * `until: length(response) == 0` (upstream's docs) counts the page itself: right for an API whose
 * pages are lists; on one that wraps them (`{ users: [...] }`) `length` of the object is 0, so it
 * held on the first, full page and the run completed with it alone (helper 93). Such a walk fails
 * naming the list to count, and its `since` checkpoint stays where it was.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/until-last-page.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api
    .on('GET /charges', { body: { data: [{ id: 'ch_1', amount: 100 }, { id: 'ch_2', amount: 200 }], has_more: true } })
    .on('GET /charges?starting_after=ch_2', { body: { data: [{ id: 'ch_3', amount: 300 }], has_more: false } })
    .on('GET /tickets?page=1', { body: { tickets: [{ id: 't1' }, { id: 't2' }] } })
    .on('GET /tickets?page=2', { body: { tickets: [] } });
});

afterEach(async () => {
  await c.close();
});

describe('until names the last page', () => {
  it('keeps the items of the page it holds on, and asks for no page after it', async () => {
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(c.api.lines()).toEqual(['GET /charges', 'GET /charges?starting_after=ch_2', 'GET /tickets?page=1', 'GET /tickets?page=2']);
    expect(Object.keys(await c.store(result.runId, 'charges'))).toEqual(['ch_1', 'ch_2', 'ch_3']);
    expect(Object.keys(await c.store(result.runId, 'tickets'))).toEqual(['t1', 't2']);
    expect(await c.store(result.runId, 'summary')).toEqual({ counts: { id: 'counts', charges: 3, tickets: 2 } });
    await c.expectVerified(result.runId);
  });
});

describe('until counting the page itself', () => {
  const mission = (until: string) => `mission Users {
  source Api { auth: none, base: "http://placeholder.test" }
  store users: memory("users")
  action Load {
    get "/users" { paginate: offset(offset, 2), until: ${until}, since: lastSync }
    store response -> users { key: .id }
  }
  run Load
}
`;
  const wrapped = (offset: number, users: { id: string }[]) => ({ users, total: 3, offset });
  /** A first sync asks for everything since the epoch. */
  const page = (offset: number) => `GET /users?since=1970-01-01T00%3A00%3A00.000Z&offset=${offset}`;

  it('on wrapped pages holding records: fails naming the list to count; no checkpoint advances', async () => {
    c.api.on(page(0), { body: wrapped(0, [{ id: 'u1' }, { id: 'u2' }]) });
    const result = await c.start(c.mission('wrapped', mission('length(response) == 0')));
    expect(result.status).toBe('failed');
    expect(JSON.stringify(result)).toContain('`until` holds on page 1, which holds 2 records and says more may follow, only because `length(response)` counts an object, which is 0');
    expect(JSON.stringify(result)).toContain('`length(response.users) == 0`');
    const events = await c.events(result.runId);
    expect(events.filter((e) => e.type === 'checkpoint.advanced')).toEqual([]);
  });

  it('on wrapped pages, counting their list: walks to the empty page', async () => {
    c.api
      .on(page(0), { body: wrapped(0, [{ id: 'u1' }, { id: 'u2' }]) })
      .on(page(2), { body: wrapped(2, [{ id: 'u3' }]) })
      .on(page(4), { body: wrapped(4, []) });
    const result = await c.start(c.mission('counted', mission('length(response.users) == 0')));
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(Object.keys(await c.store(result.runId, 'users'))).toEqual(['u1', 'u2', 'u3']);
  });

  it('on pages that are lists: length(response) counts them, and the walk ends on the empty one', async () => {
    c.api
      .on(page(0), { body: [{ id: 'u1' }, { id: 'u2' }] })
      .on(page(2), { body: [{ id: 'u3' }, { id: 'u4' }] })
      .on(page(4), { body: [] });
    const result = await c.start(c.mission('lists', mission('length(response) == 0')));
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(Object.keys(await c.store(result.runId, 'users'))).toEqual(['u1', 'u2', 'u3', 'u4']);
    await c.expectVerified(result.runId);
  });

  it('holding for another reason too, or on a short last page: ends the walk as meant (helper 95: it was refused)', async () => {
    c.api
      .on(page(0), { body: { ...wrapped(0, [{ id: 'u1' }, { id: 'u2' }]), has_more: true } })
      .on(page(2), { body: { ...wrapped(2, [{ id: 'u3' }]), has_more: false } });
    const result = await c.start(c.mission('flagged', mission('not response.has_more and count(response) < 1')));
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(Object.keys(await c.store(result.runId, 'users'))).toEqual(['u1', 'u2', 'u3']);
  });

  it('on a full page its API says is the last, holding by that: ends the walk as meant', async () => {
    c.api.on(page(0), { body: { ...wrapped(0, [{ id: 'u1' }, { id: 'u2' }]), has_more: false } });
    const full = await c.start(c.mission('full-last', mission('not response.has_more or length(response) == 0')));
    expect(full.status === 'completed' ? 'completed' : JSON.stringify(full)).toBe('completed');
  });

  it('on a wrapped empty page: ends the walk as meant', async () => {
    c.api.on(page(0), { body: wrapped(0, []) });
    const result = await c.start(c.mission('empty', mission('length(response) == 0')));
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(c.api.lines().filter((l) => l.startsWith('GET /users'))).toHaveLength(1);
  });
});
