/**
 * assets/language/ids-and-checkpoints.vague against a FakeApi on 127.0.0.1, twice on one
 * database: `generateId()` gives ids derived from the run, the step and a per-step count (the
 * same on replay, others in another run); `store … -> sync_state { key }` sets a checkpoint at
 * the end of the action, and the next run's `sync_state.get` reads it (recorded, replayed) — both
 * scoped to the URL the run's --source points at, as `since: lastSync` checkpoints are.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';
import { derivedId } from '../../engine/journal/derived-id.js';
import { FakeApi } from '../support/fake-api.js';

const ENTRY = path.join(REPO, 'assets/language/ids-and-checkpoints.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /changes', { body: { changes: [{ name: 'a' }, { name: 'b' }] } });
});

afterEach(async () => {
  await c.close();
});

describe('generateId and sync_state', () => {
  it('derives ids from the run and step, and reads the checkpoint the last run set', async () => {
    const first = await c.start(files());
    expect(first.status === 'completed' ? 'completed' : JSON.stringify(first)).toBe('completed');
    const out1 = await c.store(first.runId, 'out');
    expect(out1['seen']).toEqual({ id: 'seen', since: 'never' });
    const ids = (Object.values(out1).filter((r) => (r as { name?: string }).name) as { id: string; first: string; name: string }[]).sort((a, b) =>
      a.name.localeCompare(b.name),
    );
    // Per iteration path, the first call gets count 0 and the second count 1.
    expect(ids).toEqual([
      { id: derivedId(first.runId, 'Sync/2[0]/0', 0), first: `chg_${derivedId(first.runId, 'Sync/2[0]/0', 1)}`, name: 'a' },
      { id: derivedId(first.runId, 'Sync/2[1]/0', 0), first: `chg_${derivedId(first.runId, 'Sync/2[1]/0', 1)}`, name: 'b' },
    ]);
    expect(ids[0]!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const advanced = (await c.events(first.runId)).filter((e) => e.type === 'checkpoint.advanced').map((e) => e.payload);
    // The run's source points away from its base (at the fake API): the checkpoint is that URL's,
    // as a since fetch's would be, never the one a run against the real API reads.
    expect(advanced).toEqual([{ key: 'changes_last_sync', syncedAt: Date.parse('2024-05-01T12:00:00Z'), api: c.api.url }]);
    await c.expectVerified(first.runId);

    const second = await c.start(files());
    expect(second.status).toBe('completed');
    const out2 = await c.store(second.runId, 'out');
    expect(out2['seen']).toEqual({ id: 'seen', since: '2024-05-01T12:00:00.000Z' });
    expect(Object.keys(out2).filter((k) => k !== 'seen')).not.toEqual(Object.keys(out1).filter((k) => k !== 'seen'));
    const reads = (await c.events(second.runId)).filter((e) => e.type === 'value.recorded' && (e.payload as { source: string }).source === 'last-sync');
    expect(reads.map((e) => [e.stepPath, (e.payload as { value: unknown }).value])).toEqual([
      ['Sync/0', { key: 'changes_last_sync', at: Date.parse('2024-05-01T12:00:00Z') }],
    ]);
    await c.expectVerified(second.runId);

    // A run pointed at another URL (a trial against a test server) neither reads nor moves the
    // checkpoints the runs against the first one set.
    const other = await new FakeApi().on('GET /changes', { body: { changes: [{ name: 'c' }] } }).start();
    try {
      const trial = await c.start(files(), { sources: { Api: other.url } });
      expect(trial.status).toBe('completed');
      expect((await c.store(trial.runId, 'out'))['seen']).toEqual({ id: 'seen', since: 'never' });
      const moved = (await c.events(trial.runId)).filter((e) => e.type === 'checkpoint.advanced').map((e) => (e.payload as { api: string }).api);
      expect(moved).toEqual([other.url]);
    } finally {
      await other.stop();
    }
    const third = await c.start(files());
    expect((await c.store(third.runId, 'out'))['seen']).toEqual({ id: 'seen', since: '2024-05-01T12:00:00.000Z' });
  });
});

describe('a checkpoint set by hand in sync_state after a loop that tolerated a failure (probe 110 K7)', () => {
  it('is held back, as the fetch checkpoint beside it is: the next run reads the checkpoint from before', async () => {
    c.api.on('GET /orders?*', { body: { items: [{ id: 'a', amount: 10 }, { id: 'b', amount: null }, { id: 'c', amount: 5 }] } });
    const text = `mission Synced {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store out: memory("out")
  action A {
    store { id: "seen", at: sync_state.get("orders_synced") } -> out { key: .id }
    get "/orders" { since: lastSync("orders") }
    for o in response.items {
      store { id: o.id, cents: o.amount * 100 } -> out { key: .id }
    }
    store { "orders_synced": now() } -> sync_state { key: "orders_synced" }
  }
  run A
}
`;
    const mission = c.mission('synced', text);
    const lines: string[] = [];
    const first = await c.start(mission, {}, { progress: (line: string) => lines.push(line) });
    expect(first.status).toBe('completed');
    expect(first.tolerated.map((t) => t.stepPath)).toEqual(['A/2[1]']);
    // Before: "orders" was held back, "orders_synced" advanced past the failed record.
    expect((await c.events(first.runId)).filter((e) => e.type === 'checkpoint.advanced')).toEqual([]);
    expect(lines.join('\n')).toContain('checkpoint "orders_synced" held back: a loop of its action tolerated a failure');
    const second = await c.start(mission);
    expect((await c.store(second.runId, 'out'))['seen']).toEqual({ id: 'seen', at: null });
    await c.expectVerified(first.runId);
  });
});
