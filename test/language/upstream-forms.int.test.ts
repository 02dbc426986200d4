/**
 * assets/language/upstream-forms.vague runs against a FakeApi on 127.0.0.1: quoted enums, the
 * flat sinceParam/sinceFormat, `jump Refresh then retry` to an action outside the pipeline, a
 * `skip` step inside a match arm block in a loop, `where` filters, a guard match, infix
 * `contains`, parseDecimal/parseDate/exists and durations — checked by what the stores hold.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/upstream-forms.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

const ITEMS = [
  { id: 'a', name: 'Lamp', price: '120.50', tags: ['new'], seen: '2024-03-01T10:00:00+02:00' },
  { id: 'b', name: 'Mug', price: '4.99', tags: ['sale'], seen: '2024-03-02' },
  { id: 'c', price: '1', tags: [], seen: 'never' },
  { id: 'd', name: 'Desk', price: '45', tags: ['sale', 'new'], seen: 'soon' },
];

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api
    .on('GET /items?changed_after=0', [{ body: { error: 'token expired', code: 'expired' } }, { body: { items: ITEMS } }])
    .on('POST /token', { body: { token: 't-2' } });
});

afterEach(async () => {
  await c.close();
});

describe('upstream forms, run', () => {
  it('detours through Refresh, retries Load, and stores what each form computes', async () => {
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    // sinceParam/sinceFormat: the checkpoint (none yet: 0) goes out as `changed_after` in unix seconds.
    // Refresh is no stage of the pipeline: `jump Refresh then retry` ran it between the attempts.
    expect(c.api.lines()).toEqual(['GET /items?changed_after=0', 'POST /token', 'GET /items?changed_after=0']);
    expect(await c.store(result.runId, 'tokens')).toEqual({ current: { id: 'current', token: 't-2' } });
    expect(await c.store(result.runId, 'items')).toEqual({
      a: { id: 'a', name: 'Lamp', price: 120.5, band: 'high', sale: false, seen: '2024-03-01T08:00:00.000Z' },
      b: { id: 'b', name: 'Mug', price: 4.99, band: 'low', sale: true, seen: '2024-03-02T00:00:00.000Z' },
      d: { id: 'd', name: 'Desk', price: 45, band: 'mid', sale: true, seen: null },
    });
    // `c` has no name: its arm stored the reason and `skip` ended that iteration only.
    expect(await c.store(result.runId, 'summary')).toEqual({
      c: { id: 'c', reason: 'no name' },
      totals: { id: 'totals', cheap: 2, on_sale: 2, week_ms: 604_800_000, hour_ms: 3_600_000 },
    });
    await c.expectVerified(result.runId);
  });
});
