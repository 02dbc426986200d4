/**
 * One resume is one `run.resumed`. Resuming a webhook wait writes its marker with the
 * compare-and-set (resumeSuspendedRun); the resumer that carries the run on must not add a second
 * one — before the fix the log held two (reason 'manual' from the CAS, then the executor's). A
 * pause keeps its shape: `pause.resumed`, then one `run.resumed` (reason 'pause'). Through the
 * library (what the worker and webhook server call) and through `reqon resume --payload` (what
 * the studio spawns), on every log backend.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resumeRun, startRun } from '../../engine/executor/run-mission.js';
import { createRealEnv } from '../../engine/env/real-env.js';
import type { EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { MemoryStoreState } from '../../engine/stores/memory-fold.js';
import { backends, tempLogTarget, type TempLogTarget } from '../support/temp-log.js';
import { buildCli, type CliBuild } from './support/build-cli.js';
import { killAll, runNode } from './support/processes.js';

const WAIT = `mission Signals {
  store signals: memory("signals")
  action Listen {
    wait { path: "/signal", timeout: 86400000 }
    store { id: "s1", body: response } -> signals { key: .id }
  }
  run Listen
}
`;

const PAUSE = `mission Approvals {
  store decisions: memory("decisions")
  action Decide {
    pause { resumeOn: webhook "/approve" }
    store { id: "d1", by: response.by } -> decisions { key: .id }
  }
  run Decide
}
`;

const env = createRealEnv(process.env);

describe.each(backends)('%s: a resume writes one run.resumed', (backend) => {
  let build: CliBuild;
  let target: TempLogTarget;
  let log: EventLog;

  beforeAll(async () => {
    build = buildCli();
    target = await tempLogTarget(backend, 'reqon-resume-once-');
    log = await openLog(target.target);
  }, 180_000);

  afterAll(async () => {
    killAll();
    await log?.close();
    await target?.drop();
  });

  async function suspended(name: string, text: string): Promise<string> {
    const file = path.join(target.dir, `${name}.vague`);
    fs.writeFileSync(file, text);
    const result = await startRun({ entry: file, files: [{ path: file, text }] }, { sources: {}, env: {} }, { log, env, dataDir: path.join(target.dir, 'data') });
    expect(result.status).toBe('suspended');
    return result.runId;
  }

  async function after(runId: string): Promise<{ types: string[]; stored: unknown[] }> {
    const events = await log.read(runId);
    const types = events.map((e) => e.type).filter((t) => ['run.suspended', 'pause.resumed', 'webhook.received', 'wait.completed', 'run.resumed', 'run.completed'].includes(t));
    const state = MemoryStoreState.fromEvents(events);
    const stored = state.storeNames().flatMap((store) => state.list(store).map((r) => r.record));
    return { types, stored };
  }

  it('a wait resumed with a payload (library, as the worker and the webhook server do)', async () => {
    const runId = await suspended('wait-lib', WAIT);
    const result = await resumeRun(runId, { payload: { level: 3 }, by: 'studio' }, { log, env, dataDir: path.join(target.dir, 'data') });
    expect(result.status).toBe('completed');
    const { types, stored } = await after(runId);
    expect(types.filter((t) => t === 'run.resumed')).toHaveLength(1);
    expect(types).toEqual(['run.suspended', 'run.resumed', 'webhook.received', 'wait.completed', 'run.completed']);
    expect(stored).toEqual([{ id: 's1', body: { level: 3 } }]);
  });

  it('a wait resumed by `reqon resume --payload` (what the studio spawns)', async () => {
    const runId = await suspended('wait-cli', WAIT);
    const out = await runNode(build.cli, ['resume', runId, '--db', target.target, '--payload', '{"level":7}'], { cwd: target.dir, env: { REQON_DATA_DIR: path.join(target.dir, 'data') } });
    expect(out.code, out.stderr).toBe(0);
    const { types, stored } = await after(runId);
    expect(types.filter((t) => t === 'run.resumed')).toHaveLength(1);
    expect(stored).toEqual([{ id: 's1', body: { level: 7 } }]);
  });

  it('a pause: pause.resumed, then one run.resumed (reason pause)', async () => {
    const runId = await suspended('pause-cli', PAUSE);
    const out = await runNode(build.cli, ['resume', runId, '--db', target.target, '--payload', '{"by":"bo"}'], { cwd: target.dir, env: { REQON_DATA_DIR: path.join(target.dir, 'data') } });
    expect(out.code, out.stderr).toBe(0);
    const events = await log.read(runId);
    const markers = events.filter((e) => e.type === 'run.resumed');
    expect(markers.map((e) => (e.payload as { reason: string }).reason)).toEqual(['pause']);
    expect((await after(runId)).stored).toEqual([{ id: 'd1', by: 'bo' }]);
  });
});
