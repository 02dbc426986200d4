/**
 * `run.verify` with an empty or blank `missionText`: the renderer used to drop such a text and
 * verify the recorded mission, and showed that ✓ as the edit's. The service now refuses a blank
 * edit by name (the renderer refuses it first).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLog } from '../../engine/log/open-log.js';
import { createStudioService, type StudioService } from '../../engine/server/studio-service.js';
import { newRun, started } from '../log/helpers.js';

let dir: string;
let service: StudioService;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-verify-empty-'));
  const dbPath = path.join(dir, 'reqon.db');
  const log = await openLog(dbPath);
  await log.createRun(newRun('r1', 1_000), 'w1', 30_000, [started()]);
  await log.close();
  service = await createStudioService({ dbPath, cliPath: '/nonexistent/cli.js', cwd: dir, worker: false, pollIntervalMs: 50 });
});

afterAll(async () => {
  await service?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('run.verify with an edited mission', () => {
  it('refuses an empty or blank edit instead of verifying the recorded mission', async () => {
    // '' was already refused as a field; blank text got through and verified nothing it was asked.
    await expect(service.handle('run.verify', { runId: 'r1', missionText: '' })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringContaining('"missionText"') });
    await expect(service.handle('run.verify', { runId: 'r1', missionText: '  \n\t' })).rejects.toMatchObject({
      code: 'bad-request',
      message: expect.stringContaining('"missionText" is empty for run "r1"'),
    });
  });

  it('answers an edit that does not pass its checks with 400 and the checker’s words, never as an internal error', async () => {
    for (const missionText of ['mission {', 'mission demo {}', 'mission M {\n  action A { store { id: 1 } -> nowhere }\n  run A\n}\n']) {
      await expect(service.handle('run.verify', { runId: 'r1', missionText })).rejects.toMatchObject({
        code: 'bad-request',
        message: expect.stringMatching(/^run\.verify: the edited mission does not pass its checks \(checked with .+ edited\):\n.+error\[E\d+\]/s),
      });
    }
  });
});
