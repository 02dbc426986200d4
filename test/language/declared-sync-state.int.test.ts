/**
 * assets/language/declared-sync-state.vague: a mission that declares `store sync_state: sql(…)`
 * (upstream's single-file reconciliation example does) writes its checkpoints into that store as
 * ordinary records, and `sync_state.get("k")` reads that store: the record's one value, null when
 * there is none. Before, `get` read the engine's checkpoints, which such a mission never sets, so
 * every run saw null and fetched everything again.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/declared-sync-state.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
});

afterEach(async () => {
  await c.close();
});

describe('a declared sync_state store', () => {
  it('is what sync_state.get reads: within the run, and on the next run', async () => {
    const first = await c.start(files());
    expect(first.status === 'completed' ? 'completed' : JSON.stringify(first)).toBe('completed');
    expect(await c.store(first.runId, 'seen')).toEqual({
      read: { id: 'read', at: null },
      after: { id: 'after', at: '2024-05-01T00:00:00.000Z', missing: null },
    });
    expect(await c.store(first.runId, 'sync_state')).toEqual({ items_last: { items_last: '2024-05-01T00:00:00.000Z' } });
    await c.expectVerified(first.runId);

    const second = await c.start(files());
    expect(second.status === 'completed' ? 'completed' : JSON.stringify(second)).toBe('completed');
    expect((await c.store(second.runId, 'seen'))['read']).toEqual({ id: 'read', at: '2024-05-01T00:00:00.000Z' });
    await c.expectVerified(second.runId);
  });
});
