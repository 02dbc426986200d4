/**
 * assets/language/paginated-envelope.vague against a FakeApi on 127.0.0.1: after a paginated
 * fetch, `response.rows` (the field each page's items sat under) is the flat array of all pages'
 * items — in `store`, `for`, a `match` guard, a schema arm and `length` — while `response` itself stays that flat
 * array and any other envelope field (`response.next`) is absent, as one page's would not be.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/paginated-envelope.vague');
const files = (edit: (text: string) => string = (t) => t) => {
  const text = edit(fs.readFileSync(ENTRY, 'utf8'));
  return { entry: ENTRY, files: [{ path: ENTRY, text }] };
};

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api
    .on('GET /rows', { body: { rows: [{ code: 'c', qty: 1 }, { code: 'a', qty: 5 }], next: 'p2' } })
    .on('GET /rows?after=p2', { body: { rows: [{ code: 'b', qty: 2 }, { code: 'd', qty: 1 }], next: 'p3' } })
    .on('GET /rows?after=p3', { body: { rows: [{ code: 'e', qty: 9 }], next: null } });
});

afterEach(async () => {
  await c.close();
});

describe('the envelope field of a paginated fetch', () => {
  it('names the flat array of every page, in store, for, match and length; other fields stay absent', async () => {
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(c.api.lines()).toEqual(['GET /rows', 'GET /rows?after=p2', 'GET /rows?after=p3']);
    const codes = ['c', 'a', 'b', 'd', 'e'];
    expect((await c.log.readTable('sql', 'env_rows')).map((r) => r.key)).toEqual(codes);
    expect(Object.keys(await c.store(result.runId, 'flat')).sort()).toEqual([...codes].sort());
    expect(await c.store(result.runId, 'summary')).toEqual({
      a: { code: 'a', big: true },
      b: { code: 'b', big: true },
      e: { code: 'e', big: true },
      shape: { id: 'shape', page: true },
      counts: { id: 'counts', all: 5, flat: 5, other: 'none' },
    });
    await c.expectVerified(result.runId);
  });

  it('is no alias when the pages put their items under different fields', async () => {
    c.api.on('GET /rows?after=p2', { body: { items: [{ code: 'z', qty: 2 }], next: null } });
    const result = await c.start(files((t) => t.replace('store response.rows -> rows { key: .code }', '')));
    // `response.rows` names nothing: absent, so `.rows != null` is false and the mission's own abort arm says so.
    expect(result.status).toBe('failed');
    expect(await c.store(result.runId, 'summary')).toEqual({});
    expect(result.status === 'failed' && result.error.message).toBe('the envelope field should name the items');
  });

  it('follows a cursor at an index counted from the end of the page (`rows[-1].code`, as Stripe pages)', async () => {
    c.api
      .on('GET /rows', { body: { rows: [{ code: 'c', qty: 1 }, { code: 'a', qty: 5 }], more: true } })
      .on('GET /rows?after=a', { body: { rows: [{ code: 'b', qty: 2 }, { code: 'd', qty: 1 }], more: true } })
      .on('GET /rows?after=d', { body: { rows: [], more: false } });
    const result = await c.start(files((t) => t.replace('cursor(after, 2, "next")', 'cursor(after, 2, "rows[-1].code")')));
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(c.api.lines()).toEqual(['GET /rows', 'GET /rows?after=a', 'GET /rows?after=d']);
    expect((await c.log.readTable('sql', 'env_rows')).map((r) => r.key)).toEqual(['c', 'a', 'b', 'd']);
    await c.expectVerified(result.runId);
  });
});
