/**
 * assets/language/until-last-page.vague against a FakeApi on 127.0.0.1: the page on which `until`
 * holds is the last page, and its items are kept. Upstream's examples stop Stripe's cursor with
 * `until: response.has_more == false`, whose last page holds data: reference §C.1.5 discarded that
 * page, losing its records (docs/language.md). An empty last page (`length(response.x) == 0`)
 * still adds nothing, and no page after the `until` page is asked for.
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
