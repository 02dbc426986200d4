/**
 * assets/language/absent-record.vague against a FakeApi on 127.0.0.1: an order whose contact is
 * missing is treated as one whose contact is null — `.email`, `.vip`, `.type` of it are absent —
 * in a validate, a match guard, a loop filter and a transform's guard. Reference §D.2 read them
 * from the response when there was no record, so the missing contact passed validation on the
 * shop's email, took the vip arm, and was taken for a business (helper 60).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/absent-record.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /orders', {
    body: {
      email: 'ops@shop.example',
      vip: true,
      type: 'b2b',
      orders: [{ id: 'with', contact: { email: 'a@example.com', vip: false, type: 'b2c' } }, { id: 'null', contact: null }, { id: 'missing' }],
    },
  });
});

afterEach(async () => {
  await c.close();
});

describe('a missing record reads as a null one', () => {
  it('has no fields in a validate, a match guard, a loop filter or a transform guard', async () => {
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    const keys = Object.keys(await c.store(result.runId, 'seen')).sort();
    expect(keys).toEqual(
      ['mailable-with', 'regular-with', 'kind-with', 'no-email-null', 'regular-null', 'kind-null', 'no-email-missing', 'regular-missing', 'kind-missing'].sort(),
    );
    const kinds = await c.store(result.runId, 'seen');
    expect([kinds['kind-with'], kinds['kind-null'], kinds['kind-missing']]).toEqual([
      { id: 'with', kind: 'guest' },
      { id: 'null', kind: 'guest' },
      { id: 'missing', kind: 'guest' },
    ]);
    await c.expectVerified(result.runId);
  });
});
