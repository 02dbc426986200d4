/**
 * The crash lab on a mission that reads a sql table and a sync_state checkpoint before it posts,
 * with the real CLI. Tables live in the log's database, shared by the lab's two runs (checkpoints
 * are per API URL, and each run has a proxy of its own): the armed run found the rows and the checkpoint the crash-free reference had just
 * written, skipped every POST, and the lab said ✗ ("writes of the reference never made", stores
 * differ) — a verdict on the lab's own set-up, not on the mission's durability. The lab now sees
 * that the two runs read different store state and says the comparison was not made, and why,
 * instead of ✓ or ✗.
 */
import { describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { useLabStudio } from './support/lab-studio.js';


describe('crash lab on a mission that reads shared store state', () => {
  const lab = useLabStudio('crash-lab-table.vague', () => {
    let serial = 0;
    return new FakeApi()
      .on('GET /orders', { body: [{ id: 'o1' }, { id: 'o2' }] })
      .on('POST /ship/o1', () => ({ status: 201, body: { shipment: `s${++serial}` } }))
      .on('POST /ship/o2', () => ({ status: 201, body: { shipment: `s${++serial}` } }));
  });

  it('says the runs were not compared, and why, rather than ✗', async () => {
    const started = await lab.service.handle('crashlab.start', { missionPath: lab.missionPath, sources: { Api: lab.api.url }, crashAt: 'after-effect:1' });
    const done = await lab.service.labSettled(started.labId);
    expect(done.error).toBeNull();
    const verdict = done.verdict!;
    expect(verdict.checks.filter((c) => c.ok === false).map((c) => c.label)).toEqual([]);
    expect(verdict.ok).toBe(false);
    const start = verdict.checks.find((c) => c.name === 'same-start');
    expect(start).toMatchObject({ ok: null });
    expect(start!.label).toContain('store `shipped`');
    // Its sync_state checkpoint is not shared: each run reaches the API through a proxy of its
    // own, and checkpoints are per API URL (GUARANTEES 15), so the armed run read none, as the
    // reference did.
    expect(start!.label).not.toContain('checkpoint "shipped_at"');
    expect(verdict.explanation).toMatch(/^not fully checked/);
  }, 180_000);
});
