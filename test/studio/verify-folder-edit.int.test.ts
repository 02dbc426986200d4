/**
 * The replay diff of a folder mission's run checks an edit of any of its files, not only its
 * entry: a folder mission's actions live in files of their own, which the studio could not edit
 * (helper 83). `run.verify` takes `files`, edited texts by the run's recorded paths.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MissionFiles } from '../../engine/log/log.js';
import { createStudioService, type StudioService } from '../../engine/server/studio-service.js';
import { openConformance, type Conformance } from '../conformance/harness.js';

const ENTRY = 'mission Folder {\n  source Api { auth: none, base: "http://127.0.0.1:9" }\n  store s: memory("s")\n  run Pull\n}\n';
const PULL = 'action Pull {\n  post "/orders" { body: { n: 1 } }\n  store response -> s { key: .id }\n}\n';

let c: Conformance;
let service: StudioService;
let runId: string;
let files: MissionFiles;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('POST /orders', { status: 201, body: { id: 'o1' } });
  const entry = `${c.dir}/folder/mission.vague`;
  const pull = `${c.dir}/folder/pull.vague`;
  files = { entry, files: [{ path: entry, text: ENTRY }, { path: pull, text: PULL }] };
  const result = await c.start(files);
  expect(result.status).toBe('completed');
  runId = result.runId;
  service = await createStudioService({ dbPath: c.dbPath, cliPath: '/nonexistent/cli.js', cwd: c.dir, worker: false, pollIntervalMs: 50 });
});

afterEach(async () => {
  await service?.close();
  await c.close();
});

describe('run.verify of a folder mission', () => {
  it("an edit of an action file diverges where it changes a request; one that changes nothing verifies; an unknown file is a 400", async () => {
    const pull = files.files[1]!.path;
    const moved = (await service.handle('run.verify', { runId, files: { [pull]: PULL.replace('"/orders"', '"/audit"') } })) as { ok: boolean; divergence: { cause: string; stepPath: string; explanation: string } | null };
    expect(moved.ok).toBe(false);
    // The line is named with its file: every file of a folder has a line 2 (helper 96).
    expect(moved.divergence).toMatchObject({ cause: 'edit', stepPath: 'Pull/0', line: 2, file: 'pull.vague' });
    expect(moved.divergence!.explanation).toContain('pull.vague line 2: POST /orders became POST /audit');

    const commented = (await service.handle('run.verify', { runId, files: { [pull]: `// checked\n${PULL}` } })) as { ok: boolean; divergence: unknown };
    expect(commented).toMatchObject({ ok: true, divergence: null });

    await expect(service.handle('run.verify', { runId, files: { [`${c.dir}/folder/nope.vague`]: PULL } })).rejects.toMatchObject({
      code: 'bad-request',
      message: expect.stringContaining("run.verify: the run's mission has no file"),
    });
    await expect(service.handle('run.verify', { runId, files: { [pull]: '  ' } })).rejects.toMatchObject({ code: 'bad-request', message: expect.stringContaining('is empty') });
  });
});
