/**
 * The crash lab on a mission that reads a sql table and a sync_state checkpoint before it posts,
 * with the real CLI. Tables and checkpoints live in the log's database, shared by the lab's two
 * runs: the armed run found the rows and the checkpoint the crash-free reference had just
 * written, skipped every POST, and the lab said ✗ ("writes of the reference never made", stores
 * differ) — a verdict on the lab's own set-up, not on the mission's durability. The lab now sees
 * that the two runs read different store state and says the comparison was not made, and why,
 * instead of ✓ or ✗.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStudioService, type StudioService } from '../../engine/server/studio-service.js';
import { builtEngine } from '../support/built-engine.js';
import { FakeApi } from '../support/fake-api.js';

const REPO = path.resolve(new URL('../..', import.meta.url).pathname);
const MISSION = path.join(REPO, 'assets/language/crash-lab-table.vague');

describe('crash lab on a mission that reads shared store state', () => {
  let dir: string;
  let api: FakeApi;
  let service: StudioService;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-lab-tables-'));
    fs.copyFileSync(MISSION, path.join(dir, 'table.vague'));
    let serial = 0;
    api = await new FakeApi()
      .on('GET /orders', { body: [{ id: 'o1' }, { id: 'o2' }] })
      .on('POST /ship/o1', () => ({ status: 201, body: { shipment: `s${++serial}` } }))
      .on('POST /ship/o2', () => ({ status: 201, body: { shipment: `s${++serial}` } }))
      .start();
    service = await createStudioService({ dbPath: path.join(dir, 'reqon.db'), cliPath: builtEngine().cli, cwd: dir, pollIntervalMs: 50, worker: false });
  }, 180_000);

  afterAll(async () => {
    await service?.close();
    await api?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('says the runs were not compared, and why, rather than ✗', async () => {
    const started = await service.handle('crashlab.start', { missionPath: path.join(dir, 'table.vague'), sources: { Api: api.url }, crashAt: 'after-effect:1' });
    const done = await service.labSettled(started.labId);
    expect(done.error).toBeNull();
    const verdict = done.verdict!;
    expect(verdict.checks.filter((c) => c.ok === false).map((c) => c.label)).toEqual([]);
    expect(verdict.ok).toBe(false);
    const start = verdict.checks.find((c) => c.name === 'same-start');
    expect(start).toMatchObject({ ok: null });
    expect(start!.label).toContain('store `shipped`');
    expect(start!.label).toContain('checkpoint "shipped_at"');
    expect(verdict.explanation).toMatch(/^not fully checked/);
  }, 180_000);
});
