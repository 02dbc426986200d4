/**
 * A replayed write into a table store is checked against its recorded `store.write` event: on
 * SQLite a resume accepts one whose stored text is exactly the text the write would record without
 * parsing it (store-step.ts recordedAsPlanned), and anything else goes through the field checks —
 * so an edited record or key is still a divergence, and an edit that changes only the order of a
 * record's fields still replays as a match, as it did before. On every log backend, against an
 * edited mission (walked in full) and under --crash-at.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NondeterminismError } from '../../engine/journal/nondeterminism-error.js';
import type { MissionFiles } from '../../engine/log/log.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const MISSION = `mission Writes {
  store out: sql("replayed_writes")
  action Load {
    for i in range(0, 6) {
      store { id: i, name: "item", tags: ["a", "\\"b\\""] } -> out { key: .id }
    }
    pause { resumeOn: webhook "/writes/go" }
  }
  run Load
}
`;

let h: Conformance;

function files(text = MISSION): MissionFiles {
  const entry = `${h.dir}/writes.vague`;
  return { entry, files: [{ path: entry, text }] };
}

async function suspended(): Promise<string> {
  const first = await h.start(files());
  expect(first.status).toBe('suspended');
  return first.runId;
}

const go = { payload: { go: true }, by: 'api' as const };

describe.each(backends)('%s: replayed table writes are checked against the log', (backend) => {
  beforeEach(async () => {
    h = await openConformance({ backend });
  });

  afterEach(async () => {
    await h.close();
  });

  it('an edited record is a divergence at its first write, and the log is left as it was', async () => {
    const runId = await suspended();
    const before = await h.log.read(runId);
    const resumed = h.resume(runId, { ...go, missionFiles: files(MISSION.replace('name: "item"', 'name: "other"')) });
    await expect(resumed).rejects.toThrow(NondeterminismError);
    await expect(resumed).rejects.toThrow(/Load\/0\[0\]\/0[\s\S]*record/);
    expect((await h.log.read(runId)).length).toBe(before.length);
  });

  it('an edited key is a divergence at its first write', async () => {
    const runId = await suspended();
    const resumed = h.resume(runId, { ...go, missionFiles: files(MISSION.replace('{ key: .id }', '{ key: .name }')) });
    await expect(resumed).rejects.toThrow(NondeterminismError);
    await expect(resumed).rejects.toThrow(/key "0"[\s\S]*key "item"/);
  });

  it('a store moved to another store name is a divergence', async () => {
    const runId = await suspended();
    const moved = MISSION.replace('store out: sql("replayed_writes")', 'store out: sql("replayed_writes")\n  store other: sql("replayed_other")').replace('-> out {', '-> other {');
    await expect(h.resume(runId, { ...go, missionFiles: files(moved) })).rejects.toThrow(NondeterminismError);
  });

  it("a record whose fields only changed order replays as a match (the field checks, not the text's), and the run completes", async () => {
    const runId = await suspended();
    const reordered = MISSION.replace('{ id: i, name: "item", tags: ["a", "\\"b\\""] }', '{ name: "item", tags: ["a", "\\"b\\""], id: i }');
    const resumed = await h.resume(runId, { ...go, missionFiles: files(reordered) });
    expect(resumed.status, resumed.status === 'failed' ? resumed.error.message : '').toBe('completed');
    const rows = await h.log.readTable('sql', 'replayed_writes');
    expect(rows.map((r) => r.key).sort()).toEqual(['0', '1', '2', '3', '4', '5']);
  });

  it('the unchanged mission walked in full (--crash-at) replays every write as a match', async () => {
    const runId = await suspended();
    const resumed = await h.resume(runId, go, { crash: { point: 'before-wait', occurrence: 99 } });
    expect(resumed.status, resumed.status === 'failed' ? resumed.error.message : '').toBe('completed');
    const rows = await h.log.readTable('sql', 'replayed_writes');
    expect(rows.find((r) => r.key === '3')?.record).toEqual({ id: 3, name: 'item', tags: ['a', '"b"'] });
    await h.expectVerified(runId);
  });
});
