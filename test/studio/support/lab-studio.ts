/**
 * The set-up shared by the crash-lab tests that run a mission of assets/language/ through the real
 * CLI: a temp folder holding the mission, the API started, a studio service on a log in that
 * folder (no worker); all stopped and deleted after the file's tests.
 *
 *   const lab = useLabStudio('crash-lab-table.vague', () => new FakeApi().on(…));
 *   const started = await lab.service.handle('crashlab.start', { missionPath: lab.missionPath, sources: { Api: lab.api.url }, crashAt: … });
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { CrashLabStatus } from '../../../engine/protocol/protocol.js';
import { createStudioService, type StudioService } from '../../../engine/server/studio-service.js';
import { builtEngine } from '../../support/built-engine.js';
import type { FakeApi } from '../../support/fake-api.js';

const LANGUAGE_ASSETS = path.resolve(new URL('../../../assets/language', import.meta.url).pathname);

export interface LabStudio {
  readonly dir: string;
  readonly missionPath: string;
  readonly api: FakeApi;
  readonly service: StudioService;
}

/** Registers the file's hooks; the fields are set once its beforeAll has run. */
export function useLabStudio(missionFile: string, makeApi: () => FakeApi): LabStudio {
  const lab = {} as { -readonly [K in keyof LabStudio]: LabStudio[K] };

  beforeAll(async () => {
    lab.dir = fs.mkdtempSync(path.join(os.tmpdir(), `reqon-lab-${path.basename(missionFile, '.vague')}-`));
    lab.missionPath = path.join(lab.dir, missionFile);
    fs.copyFileSync(path.join(LANGUAGE_ASSETS, missionFile), lab.missionPath);
    lab.api = await makeApi().start();
    lab.service = await createStudioService({ dbPath: path.join(lab.dir, 'reqon.db'), cliPath: builtEngine().cli, cwd: lab.dir, pollIntervalMs: 50, worker: false });
  }, 180_000);

  afterAll(async () => {
    await lab.service?.close();
    await lab.api?.stop();
    if (lab.dir) fs.rmSync(lab.dir, { recursive: true, force: true });
  });

  return lab;
}

/**
 * Runs a single-crash lab of the file's mission against its API (source `Api`) and asserts the
 * verdict every mission that survives gets: killed once at `crashAt`, resumed to exit 0, every
 * check made and held. Returns the settled lab for what a test asserts beyond that.
 */
export async function expectSurvivesOneCrash(lab: LabStudio, crashAt: string): Promise<CrashLabStatus> {
  const started = await lab.service.handle('crashlab.start', { missionPath: lab.missionPath, sources: { Api: lab.api.url }, crashAt });
  const done = await lab.service.labSettled(started.labId);
  expect(done.error).toBeNull();
  expect(done.processes.map((p) => `${p.command}:${p.signal ?? p.code}`)).toEqual(['run:SIGKILL', 'resume:0']);
  expect(Object.fromEntries(done.verdict!.checks.map((c) => [c.name, c.ok]))).toEqual({ completed: true, stores: true, writes: true, requests: true, replay: true });
  expect(done.verdict).toMatchObject({ ok: true, tested: true, crashes: 1, finalStatus: 'completed' });
  return done;
}
