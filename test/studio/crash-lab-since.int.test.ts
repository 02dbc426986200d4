/**
 * The crash lab on an incremental sync (`since: lastSync`), with the real CLI. Checkpoints are
 * kept per API URL, and the armed run went through the same proxy URLs as the crash-free
 * reference: it read the checkpoint the reference had just advanced, asked for
 * `/orders?since=<then>` — a request the reference never made, answered 502 — and the lab ended
 * "not tested" with four failed checks, for any sync mission. The armed run now reaches the API
 * through URLs of its own, starts from no checkpoint as the reference did, and is judged.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStudioService, type StudioService } from '../../engine/server/studio-service.js';
import { builtEngine } from '../support/built-engine.js';
import { FakeApi } from '../support/fake-api.js';

const REPO = path.resolve(new URL('../..', import.meta.url).pathname);
const MISSION = path.join(REPO, 'assets/language/crash-lab-since.vague');
const ORDERS = [
  { id: 'o1', updatedAt: '2020-01-01T00:00:00.000Z' },
  { id: 'o2', updatedAt: '2020-01-02T00:00:00.000Z' },
];
const FIRST_SYNC = `/orders?since=${encodeURIComponent('1970-01-01T00:00:00.000Z')}`;

describe('crash lab on an incremental sync', () => {
  let dir: string;
  let api: FakeApi;
  let service: StudioService;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-lab-since-'));
    fs.copyFileSync(MISSION, path.join(dir, 'sync.vague'));
    api = await new FakeApi()
      // A first sync asks from the start; any later since would be a route of its own.
      .on(`GET ${FIRST_SYNC}`, { body: ORDERS })
      .on('POST /ack/o1', { body: { ok: true } })
      .on('POST /ack/o2', { body: { ok: true } })
      .start();
    service = await createStudioService({ dbPath: path.join(dir, 'reqon.db'), cliPath: builtEngine().cli, cwd: dir, pollIntervalMs: 50, worker: false });
  }, 180_000);

  afterAll(async () => {
    await service?.close();
    await api?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves the armed run what the reference saw, from no checkpoint', async () => {
    const started = await service.handle('crashlab.start', { missionPath: path.join(dir, 'sync.vague'), sources: { Api: api.url }, crashAt: 'after-effect:2' });
    const done = await service.labSettled(started.labId);
    expect(done.error).toBeNull();
    expect(done.processes.map((p) => `${p.command}:${p.signal ?? p.code}`)).toEqual(['run:SIGKILL', 'resume:0']);
    expect(Object.fromEntries(done.verdict!.checks.map((c) => [c.name, c.ok]))).toEqual({ completed: true, stores: true, writes: true, requests: true, replay: true });
    expect(done.verdict).toMatchObject({ ok: true, tested: true, crashes: 1, finalStatus: 'completed' });
    // Only the reference reached the API: one sync from the start, each order acked once.
    expect(api.lines()).toEqual([`GET ${FIRST_SYNC}`, 'POST /ack/o1', 'POST /ack/o2']);
  }, 180_000);
});
