/**
 * The double-resume race across processes: for each of 12 paused runs (3 rounds of 4), 20
 * concurrent resumers in 4 child processes plus one `reqon resume` CLI process, all released at
 * the same instant. Exactly one resumer wins each run; every other one gets "already resumed"
 * (the CLI exits 1 saying so); each run completes once, with one `pause.resumed`, and its POST
 * after the pause is applied once. On every log backend (test/support/temp-log.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRun } from '../../engine/executor/run-mission.js';
import { createRealEnv } from '../../engine/env/real-env.js';
import type { EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { FakeApi } from '../support/fake-api.js';
import { backends, tempLogTarget, type TempLogTarget } from '../support/temp-log.js';
import { buildCli, type CliBuild } from './support/build-cli.js';
import { killAll, runNode } from './support/processes.js';

let build: CliBuild;
let dir: string;
let db: string;
let target: TempLogTarget;
let api: FakeApi;
let log: EventLog;

const MISSION = `mission Race {
  source Api { auth: none, base: "http://placeholder.test" }
  store done: memory("done")
  action A {
    pause { resumeOn: webhook "/go" }
    post "/after" { body: { by: response.resumer } }
    store { id: "x", by: response.resumer } -> done { key: .id }
  }
  run A
}
`;

describe.each(backends)('%s: double resume', (backend) => {
  beforeAll(async () => {
    build = buildCli();
    target = await tempLogTarget(backend, 'reqon-race-');
    dir = target.dir;
    db = target.target;
    api = await new FakeApi().on('POST /after', { status: 201, body: { ok: true } }).start();
    log = await openLog(db);
  }, 180_000);
  afterEach(() => killAll());
  afterAll(async () => {
    await log?.close();
    await api?.stop();
    await target?.drop();
  });

  it('≥20 concurrent resumers per run, 12 runs: exactly one wins each, the rest are told "already resumed"', async () => {
    const file = path.join(dir, 'race.vague');
    fs.writeFileSync(file, MISSION);
    const env = createRealEnv(process.env);
    const CHILDREN = 4;
    const PER_CHILD = 5;
    for (let round = 0; round < 3; round++) {
      const runIds: string[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await startRun({ entry: file, files: [{ path: file, text: MISSION }] }, { sources: { Api: api.url }, env: {} }, { log, env, dataDir: dir });
        expect(r.status).toBe('suspended');
        runIds.push(r.runId);
      }
      const startAt = Date.now() + 1_200;
      const children = Array.from({ length: CHILDREN }, () =>
        runNode(build.fixture('resume-racer'), [db, String(startAt), String(PER_CHILD), ...runIds], { cwd: dir }),
      );
      const clis = runIds.map((id) => runNode(build.cli, ['resume', id, '--db', db, '--payload', '{"resumer":"cli"}', '--quiet'], { cwd: dir }));
      const results = await Promise.all(children);
      const cliResults = await Promise.all(clis);
      const outcomes = results.flatMap((r) => {
        expect(r.code, r.stderr).toBe(0);
        return r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { runId: string; ok: boolean; status?: string; reason?: string; message?: string });
      });
      for (const [i, runId] of runIds.entries()) {
        const mine = outcomes.filter((o) => o.runId === runId);
        expect(mine).toHaveLength(CHILDREN * PER_CHILD);
        const cli = cliResults[i]!;
        const winners = mine.filter((o) => o.ok).length + (cli.code === 0 ? 1 : 0);
        expect(winners, `run ${runId}`).toBe(1);
        // A loser that looked while the winner still had the run: 'already-resumed' (exit 11); one
        // that looked once it had completed: 'finished' (exit 1, nobody's to go on). Both say so.
        for (const loser of mine.filter((o) => !o.ok)) {
          expect(['already-resumed', 'finished']).toContain(loser.reason);
          expect(loser.message).toContain('was already resumed');
        }
        if (cli.code !== 0) {
          expect([1, 11]).toContain(cli.code);
          expect(cli.stderr).toContain('was already resumed');
        }
        for (const winner of mine.filter((o) => o.ok)) expect(winner.status).toBe('completed');
        const run = (await log.getRun(runId))!;
        expect(run.status).toBe('completed');
        const events = await log.read(runId);
        expect(events.filter((e) => e.type === 'pause.resumed')).toHaveLength(1);
        expect(events.filter((e) => e.type === 'run.completed')).toHaveLength(1);
        expect(events.filter((e) => e.type === 'http.request')).toHaveLength(1);
      }
    }
    // One POST per run reached the API, each applied once.
    expect(api.requests.filter((r) => r.method === 'POST')).toHaveLength(12);
    expect([...api.applied.values()]).toEqual(Array(12).fill(1));
  });
});
