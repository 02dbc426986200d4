/**
 * assets/language/queue-subject.vague against a FakeApi on 127.0.0.1: a `queue` step queues what
 * its block is about. Before, it queued the current `response` wherever it stood, so
 * `for p in response.payments { validate p { … } or { queue rejected } }` queued the whole
 * GET answer once per failing item, all under one content key: one record in `rejected` for
 * three rejected payments, none of them findable. Now the validated value in a validate's
 * fallback, the matched value in an arm's block — unless a step of the block set `response`
 * (a `map`), whose result is then queued, as before.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/queue-subject.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

const PAYMENTS = [
  { id: 'ok', amount: 10 },
  { id: 'text', amount: '12.50' },
  { id: 'negative', amount: -3 },
  { id: 'missing' },
  { id: 'risky', amount: 5, risk: 'high' },
  { id: 'old', amount: 7, risk: 'legacy' },
];

let c: Conformance;
beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /payments', { body: { payments: PAYMENTS } });
});
afterEach(async () => {
  await c.close();
});

describe('queue as a step', () => {
  it('queues the validated value in a validate fallback, the matched value in an arm block, a mapped value after a map', async () => {
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(await c.store(result.runId, 'rejected')).toEqual({
      text: { id: 'text', amount: '12.50' },
      negative: { id: 'negative', amount: -3 },
      missing: { id: 'missing' },
    });
    expect(await c.store(result.runId, 'flagged')).toEqual({ risky: { id: 'risky', amount: 5, risk: 'high' } });
    expect(await c.store(result.runId, 'remapped')).toEqual({ old: { id: 'old', cents: 700 } });
    // A queue ends the iteration: only the payment that passed every check, and the flagged
    // one's note written before its queue, reach `accepted`.
    expect(await c.store(result.runId, 'accepted')).toEqual({ ok: { id: 'ok', amount: 10 }, risky: { id: 'risky', note: 'flagged' } });
    await c.expectVerified(result.runId);
  });
});
