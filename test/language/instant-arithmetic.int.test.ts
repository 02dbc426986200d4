/**
 * assets/language/instant-arithmetic.vague against a FakeApi on 127.0.0.1: `instant - ms` and
 * `instant - instant` on ISO strings (what `now()` and APIs give), used in a `where` filter, in
 * record fields and against `now()`; a numeric string still subtracts as a number.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/instant-arithmetic.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /items', {
    body: {
      asOf: '2026-03-01T00:00:00Z',
      items: [
        { id: 'a', created_at: '2026-01-01T00:00:00Z' },
        { id: 'b', created_at: '2026-02-20' },
        { id: 'c', created_at: '2026-01-30T00:00:00+01:00' },
        { id: 'd', created_at: 'not a date' },
      ],
    },
  });
});

afterEach(async () => {
  await c.close();
});

describe('instant arithmetic', () => {
  it('subtracts durations from ISO instants and instants from each other, and replays clean', async () => {
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    // Cutoff 2026-01-30T00:00Z: "a" is older, "c" (23:00Z the day before) too, "b" is not; "d" is no instant.
    expect(await c.store(result.runId, 'old')).toEqual({
      a: { id: 'a', age_days: 59 },
      c: { id: 'c', age_days: 30 + 1 / 24 },
    });
    expect(await c.store(result.runId, 'facts')).toEqual({
      facts: {
        id: 'facts',
        cutoff: '2026-01-30T00:00:00.000Z',
        hour_before: '2026-02-28T23:00:00.000Z',
        span: 86_400_000,
        recent: true,
        numeric: 9,
      },
    });
    await c.expectVerified(result.runId);
  });
});
