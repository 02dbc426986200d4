/**
 * A connection lost as a run's creating commit (or a resume's) went out (a restart, a failover, a network cut):
 * the server may have committed it, and the reply never came. `startRun` looks the run's row up
 * on a new connection and goes by what it finds (probe 113 K3: `reqon run` exited 1 with no run
 * id for a run that a worker then carried on, and the user's re-run sent its POST again under a
 * second Idempotency-Key):
 * - made: the run goes on under the lease it was made with — one POST, completed;
 * - not made: the loss is thrown as it was (nothing was done);
 * - not known (the lookup fails too): RunCreationUnknownError, after the run's id is told.
 * The same for `reqon resume --payload` (probe 113 K4: "nothing was changed and your payload was
 * not used", while a worker carried the run on with it): the seq after the suspension is read.
 * Simulated on each backend by a log whose createRun (resumeSuspended) loses its reply.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRealEnv } from '../../engine/env/real-env.js';
import { resumeRun, startRun } from '../../engine/executor/run-mission.js';
import { forkRun } from '../../engine/executor/fork-run.js';
import type { EventLog, MissionFiles } from '../../engine/log/log.js';
import { FakeApi } from '../support/fake-api.js';
import { backends, openTempLog, type TempLog } from '../support/temp-log.js';
import { overriding } from '../support/log-overrides.js';

const MISSION = `mission Charge {
  source Api { auth: none, base: "http://placeholder.test" }
  action A {
    post "/charges" { body: { amount: 5 } }
  }
  run A
}
`;

function connectionLost(): Error {
  return Object.assign(new Error('Connection terminated unexpectedly'), { name: 'Error' });
}

/** The log, but its createRun's reply is lost: after the row is made (`committed`) or before; getRun fails with `lookupsFail`. */
function losingCreate(log: EventLog, opts: { committed: boolean; lookupsFail: boolean }): EventLog {
  return overriding(log, {
    createRun: async (...args) => {
      if (opts.committed) await log.createRun(...args);
      throw connectionLost();
    },
    ...(opts.lookupsFail ? { getRun: () => Promise.reject(connectionLost()) } : {}),
  });
}

let temp: TempLog | undefined;
let api: FakeApi | undefined;
afterEach(async () => {
  await api?.stop();
  await temp?.close();
  api = temp = undefined;
});

describe.each(backends)('a run whose creating commit lost its reply (%s)', (backend) => {
  async function setUp(): Promise<{ files: MissionFiles; deps: (log: EventLog, ids: string[]) => Parameters<typeof startRun>[2] }> {
    temp = await openTempLog(backend, {}, 'reqon-create-lost-');
    api = new FakeApi().on('POST /charges', { status: 201, body: { ok: true } });
    await api.start();
    const file = path.join(temp.dir, 'charge.vague');
    fs.writeFileSync(file, MISSION);
    const env = createRealEnv({});
    return {
      files: { entry: file, files: [{ path: file, text: MISSION }] },
      deps: (log, ids) => ({ log, env, dataDir: path.join(temp!.dir, 'data'), onRunId: (id: string) => ids.push(id) }),
    };
  }
  const options = () => ({ sources: { Api: api!.url }, env: {} });

  it('made: the run goes on under its lease, its POST sent once, and it completes', async () => {
    const { files, deps } = await setUp();
    const ids: string[] = [];
    const result = await startRun(files, options(), deps(losingCreate(temp!.log, { committed: true, lookupsFail: false }), ids));
    expect(result.status).toBe('completed');
    expect(ids).toEqual([result.runId]);
    expect(api!.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect((await temp!.log.getRun(result.runId))?.status).toBe('completed');
  });

  it('made, for a fork: it goes on from the events read back, its POST sent once', async () => {
    const { files, deps } = await setUp();
    const parent = await startRun(files, options(), deps(temp!.log, []));
    expect(parent.status).toBe('completed');
    const ids: string[] = [];
    const fork = await forkRun(parent.runId, { atSeq: 3 }, deps(losingCreate(temp!.log, { committed: true, lookupsFail: false }), ids));
    expect(fork.status).toBe('completed');
    expect(ids).toEqual([fork.runId]);
    expect(api!.requests.filter((r) => r.method === 'POST')).toHaveLength(2);
  });

  it('not made: the loss, as it was, and no run', async () => {
    const { files, deps } = await setUp();
    const ids: string[] = [];
    await expect(startRun(files, options(), deps(losingCreate(temp!.log, { committed: false, lookupsFail: false }), ids))).rejects.toThrow(/^Connection terminated unexpectedly$/);
    expect(ids).toEqual([]);
    expect(await temp!.log.listRuns({ limit: 10 })).toEqual([]);
    expect(api!.requests).toEqual([]);
  });

  it('not known: the run id is told, then RunCreationUnknownError naming it; nothing sent', async () => {
    const { files, deps } = await setUp();
    const ids: string[] = [];
    const started = startRun(files, options(), deps(losingCreate(temp!.log, { committed: true, lookupsFail: true }), ids));
    await expect(started).rejects.toMatchObject({ name: 'RunCreationUnknownError' });
    expect(ids).toHaveLength(1);
    await expect(started).rejects.toThrow(new RegExp(`lost the log database as run ${ids[0]} was being created .*\`reqon show ${ids[0]}\` then says`));
    expect(api!.requests).toEqual([]);
  });
});

const PAUSED = `mission Approve {
  source Api { auth: none, base: "http://placeholder.test" }
  action A {
    pause { duration: "1h" }
    post "/charges" { body: { amount: response.amount } }
  }
  run A
}
`;

/** The log, but its resumeSuspended's reply is lost: after the commit (`committed`) or before; reads fail after it with `lookupsFail`. */
function losingResume(log: EventLog, opts: { committed: boolean; lookupsFail: boolean }): EventLog {
  let lost = false;
  return overriding(log, {
    resumeSuspended: async (...args) => {
      if (opts.committed) expect(await log.resumeSuspended(...args)).toBe('resumed');
      lost = true;
      throw connectionLost();
    },
    read: (...args) => (opts.lookupsFail && lost ? Promise.reject(connectionLost()) : log.read(...args)),
  });
}

describe.each(backends)('a resume whose commit lost its reply (%s)', (backend) => {
  async function paused(): Promise<{ runId: string; deps: (log: EventLog) => Parameters<typeof resumeRun>[2] }> {
    temp = await openTempLog(backend, {}, 'reqon-resume-lost-');
    api = new FakeApi().on('POST /charges', { status: 201, body: { ok: true } });
    await api.start();
    const file = path.join(temp.dir, 'approve.vague');
    fs.writeFileSync(file, PAUSED);
    const env = createRealEnv({});
    const deps = (log: EventLog) => ({ log, env, dataDir: path.join(temp!.dir, 'data') });
    const started = await startRun({ entry: file, files: [{ path: file, text: PAUSED }] }, { sources: { Api: api.url }, env: {} }, deps(temp.log));
    expect(started.status).toBe('suspended');
    return { runId: started.runId, deps };
  }

  it('made: the resume goes on with the payload, which the POST carries once', async () => {
    const { runId, deps } = await paused();
    const result = await resumeRun(runId, { payload: { amount: 42 }, by: 'cli' }, deps(losingResume(temp!.log, { committed: true, lookupsFail: false })));
    expect(result.status).toBe('completed');
    expect(api!.requests.map((r) => r.body)).toEqual([{ amount: 42 }]);
  });

  it("made, for a run in a wait: the payload, delivered by that resume, is found in the inbox as its own", async () => {
    const { deps } = await paused();
    const file = path.join(temp!.dir, 'wait.vague');
    const text = PAUSED.replace('pause { duration: "1h" }', 'wait { path: "/approve" }');
    fs.writeFileSync(file, text);
    const started = await startRun({ entry: file, files: [{ path: file, text }] }, { sources: { Api: api!.url }, env: {} }, deps(temp!.log));
    expect(started.status).toBe('suspended');
    const result = await resumeRun(started.runId, { payload: { amount: 7 }, by: 'cli' }, deps(losingResume(temp!.log, { committed: true, lookupsFail: false })));
    expect(result.status).toBe('completed');
    expect(api!.requests.map((r) => r.body)).toEqual([{ amount: 7 }]);
  });

  it('not made: the loss as it was, the run still waiting, the payload unused', async () => {
    const { runId, deps } = await paused();
    await expect(resumeRun(runId, { payload: { amount: 42 }, by: 'cli' }, deps(losingResume(temp!.log, { committed: false, lookupsFail: false })))).rejects.toThrow(/^Connection terminated unexpectedly$/);
    expect((await temp!.log.getRun(runId))?.status).toBe('suspended');
    expect(api!.requests).toEqual([]);
  });

  it('not known: ResumeOutcomeUnknownError naming the run, never "nothing was changed"', async () => {
    const { runId, deps } = await paused();
    await expect(resumeRun(runId, { payload: { amount: 42 }, by: 'cli' }, deps(losingResume(temp!.log, { committed: true, lookupsFail: true })))).rejects.toMatchObject({
      name: 'ResumeOutcomeUnknownError',
      message: expect.stringMatching(new RegExp(`^lost the log database as run ${runId} was being resumed .*\`reqon show ${runId}\` then says`)),
    });
  });
});
