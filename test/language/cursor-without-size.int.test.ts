/**
 * assets/language/cursor-without-size.vague against a FakeApi on 127.0.0.1: `paginate: { type:
 * cursor, param, cursorPath }` with no `pageSize` (upstream's docs) follows the next cursor until
 * it is null — pages of uneven size included — and sends no size (issue 15; docs/language.md).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/cursor-without-size.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api
    .on('GET /events', { body: { items: [{ seq: 1 }, { seq: 2 }, { seq: 3 }], next: 'c2' } })
    .on('GET /events?cursor=c2', { body: { items: [{ seq: 4 }], next: 'c3' } })
    .on('GET /events?cursor=c3', { body: { items: [{ seq: 5 }, { seq: 6 }], next: null } });
});

afterEach(async () => {
  await c.close();
});

describe('a cursor pagination without a page size', () => {
  it('follows the next cursor until there is none', async () => {
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(c.api.lines()).toEqual(['GET /events', 'GET /events?cursor=c2', 'GET /events?cursor=c3']);
    expect(Object.keys(await c.store(result.runId, 'events')).sort()).toEqual(['1', '2', '3', '4', '5', '6']);
    await c.expectVerified(result.runId);
  });
});
