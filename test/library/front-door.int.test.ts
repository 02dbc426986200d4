/**
 * The engine as a library, through its front door only (engine/index.ts, the package's "main"):
 * a mission read from disk runs against a local API on a temp log, crashes are not needed to
 * prove the door — a pause suspends the run, resumeRun carries it on, verifyRun replays it clean.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRealEnv, openLog, readMissionFiles, resumeRun, startRun, verifyRun, LOG_FORMAT, type EventLog } from '../../engine/index.js';
import { FakeApi } from '../support/fake-api.js';

let dir: string;
let log: EventLog | undefined;
let api: FakeApi | undefined;

afterEach(async () => {
  await log?.close();
  await api?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('engine/index.ts', () => {
  it('starts, resumes and verifies a run with nothing but the front door', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-library-'));
    api = await new FakeApi().on('GET /items', { body: [{ id: 1 }, { id: 2 }] }).on('POST /seen', { status: 201, body: { ok: true } }).start();
    const file = path.join(dir, 'lib.vague');
    fs.writeFileSync(
      file,
      'mission Lib {\n  source Api { auth: none, base: "http://127.0.0.1:1" }\n  store items: memory("items")\n' +
        '  action Go {\n    get "/items"\n    store response -> items { key: .id }\n    pause { duration: "1ms" }\n    post "/seen" { body: { n: 2 } }\n  }\n  run Go\n}\n',
    );
    log = await openLog(path.join(dir, 'reqon.db'));
    const env = createRealEnv({});
    const deps = { log, env, dataDir: path.join(dir, 'data') };
    const files = readMissionFiles(file);
    const first = await startRun(files, { sources: { Api: api.url }, env: {} }, deps);
    expect(first.status).toBe('suspended');
    await new Promise((r) => setTimeout(r, 10));
    const second = await resumeRun(first.runId, {}, deps);
    expect(second.status).toBe('completed');
    const report = await verifyRun(log, first.runId, { env });
    expect(report.ok).toBe(true);
    const events = await log.read(first.runId);
    expect(events[0]).toMatchObject({ type: 'run.started', payload: { format: LOG_FORMAT } });
    expect(api.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /items', 'POST /seen']);
  });
});
