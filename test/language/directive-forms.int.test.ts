/**
 * assets/language/directive-forms.vague against a FakeApi on 127.0.0.1 (issue 15; upstream's
 * docs, error-handling/flow-control): `queue S { item: …, key: … }` queues the record `item`
 * gives (default: the matched value) under `key` (default: its `id`, as a plain `queue S`) and
 * ends the iteration as `queue S` does — as an arm body and as a step in an arm block.
 * `retry { delay: N }` waits a constant N ms between attempts, past the default 30 s cap too.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';
import { backoffDelay, resolveRetryPolicy } from '../../engine/http/retry-policy.js';

const ENTRY = path.join(REPO, 'assets/language/directive-forms.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api
    .on('GET /items', { body: { items: [{ id: 'a' }, { id: 'b' }, { id: 'c' }, { id: 'd' }] } })
    .on('GET /items/a', { body: { id: 'a', status: 'ok' } })
    .on('GET /items/b', { body: { error: 'boom' } })
    .on('GET /items/c', { body: { id: 'c', status: 'rejected', reason: 'stale' } })
    .on('GET /items/d', { body: { id: 'd', status: 'odd' } })
    .on('GET /flaky', [{ body: { status: 'busy' } }, { body: { id: 'f', status: 'ok' } }]);
});

afterEach(async () => {
  await c.close();
});

describe('queue S { item, key } and retry { delay }', () => {
  it('queues the item under its key, ends the iteration, and retries after the fixed delay', async () => {
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(await c.store(result.runId, 'failed')).toEqual({
      'item-b': { id: 'b', error: 'boom' },
      c: { id: 'c', reason: 'stale' },
      d: { id: 'd', status: 'odd' },
    });
    expect(Object.keys(await c.store(result.runId, 'done')).sort()).toEqual(['a', 'f']);
    const retrying = JSON.stringify(await c.log.read(result.runId)).match(/"delayMs":\d+/g);
    expect(retrying).toEqual(['"delayMs":300']);
    expect(c.api.lines().filter((l) => l === 'GET /flaky')).toHaveLength(2);
    await c.expectVerified(result.runId);
  });

  it('a fixed delay is constant and not capped by the default maxDelay', () => {
    const policy = resolveRetryPolicy({ delay: 60_000 });
    expect([1, 2, 3].map((n) => backoffDelay(policy, n, 0.5))).toEqual([60_000, 60_000, 60_000]);
  });
});
