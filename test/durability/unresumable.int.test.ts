/**
 * A run that can never be resumed is not retried for ever (GUARANTEES 13, "Resume is
 * idempotent"): a run whose own mission this engine now refuses is failed once, with the
 * diagnostics; a run whose log this engine cannot read (a newer format) is left as it is, and
 * `reqon worker --once` backs off from it and ends instead of starting it again every poll; a
 * suspended run whose --auth file cannot be read has nothing of its pause spent. On every log
 * backend (test/support/temp-log.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { missionHash } from '../../engine/executor/mission-cache.js';
import type { StoredEvent } from '../../engine/log/events.js';
import type { MissionFiles } from '../../engine/log/log.js';
import { builtCli, describeResult, runCli, runIdOf } from './support/cli-build.js';
import { backends, type Backend } from '../support/temp-log.js';
import { insertStoredRun, openTempLog, type TempLog } from './support/stored-log.js';

const VALID = 'mission Old {\n  action A {\n    let x = 1\n  }\n  run A\n}\n';
// What an older engine might have accepted and this one refuses: a jump to no declared action.
const REFUSED = 'mission Old {\n  action A {\n    let x = 1\n    jump Nope then retry\n  }\n  run A\n}\n';

/** A run row remembers its mission by the hash its run.started names (executor/remembered-mission.ts). */
function events(format: number, files: MissionFiles): StoredEvent[] {
  return [
    { runId: 'r', seq: 1, type: 'run.started', stepPath: '', payload: { mission: 'Old', missionHash: missionHash(files), format }, recordedAt: 1 },
    { runId: 'r', seq: 2, type: 'stage.started', stepPath: ':stage/0', payload: { index: 0, actions: ['A'] }, recordedAt: 2 },
  ] as StoredEvent[];
}

let cli: string;
// The CLI is built once per source state, outside any test's time limit.
beforeAll(() => {
  cli = builtCli();
}, 180_000);

let temp: TempLog | undefined;
afterEach(async () => {
  await temp?.close();
  temp = undefined;
});

async function crashedRun(backend: Backend, text: string, format: number): Promise<string> {
  temp = await openTempLog(backend, {}, 'reqon-unresumable-');
  const missionFiles: MissionFiles = { entry: 'old.vague', files: [{ path: 'old.vague', text }] };
  return insertStoredRun(temp.log, {
    events: events(format, missionFiles),
    missionFiles,
    options: { sources: {}, env: {} },
    crashed: true,
  });
}

function reqon(args: string[]) {
  return runCli(cli, [...args, '--db', temp!.dbPath], { cwd: temp!.dir, timeoutMs: 30_000 });
}

describe.each(backends)('%s: a run that can never resume', (backend) => {
  it('whose own mission this engine refuses is failed once, with the diagnostics', async () => {
    const runId = await crashedRun(backend, REFUSED, 2);
    expect(VALID).not.toBe(REFUSED);
    const resumed = await reqon(['resume', runId, '--quiet']);
    expect(resumed.code, describeResult(resumed)).toBe(1);
    expect(resumed.stdout).toMatch(/^failed: the run's mission no longer passes this engine's checks/m);
    const after = await temp!.log.read(runId);
    expect(after.filter((e) => e.type === 'run.failed')).toHaveLength(1);
    expect((await temp!.log.getRun(runId))!.status).toBe('failed');
    // Nothing to retry: the worker ends at once and appends nothing.
    const worker = await reqon(['worker', '--once', '--poll', '20']);
    expect(worker.code, describeResult(worker)).toBe(0);
    expect((await temp!.log.read(runId)).length).toBe(after.length);
  });

  it('whose log is of a newer format is left as it is, and worker --once backs off and ends', async () => {
    const runId = await crashedRun(backend, VALID, 99);
    const worker = await reqon(['worker', '--once', '--poll', '20']);
    // It ends (no signal, no loop) and says the run could not be carried on: exit 1, for cron.
    expect(worker.code, describeResult(worker)).toBe(1);
    expect(worker.signal).toBeNull();
    expect(worker.stderr).toMatch(/format 99 by a newer engine/);
    expect(worker.stderr).toContain(`worker --once: 1 could not be carried on (${runId})`);
    const run = (await temp!.log.getRun(runId))!;
    expect(run.status).toBe('running');
    expect((await temp!.log.read(runId)).length).toBe(2);
  });

  it('whose log is of a newer format and waits on a due timer: the worker spends nothing of it', async () => {
    // Helper 86: the worker appended its pause.resumed (in its own format) to the newer engine's
    // run and set it running, then refused to carry it on: the pause spent, the run nobody's.
    temp = await openTempLog(backend, {}, 'reqon-unresumable-');
    const missionFiles: MissionFiles = { entry: 'old.vague', files: [{ path: 'old.vague', text: 'mission Old {\n  action A {\n    pause { duration: "1s" }\n  }\n  run A\n}\n' }] };
    const [started, stage] = events(99, missionFiles);
    const runId = await insertStoredRun(temp.log, {
      events: [
        started!,
        stage!,
        { runId: 'r', seq: 3, type: 'pause.created', stepPath: 'A/0', payload: { pauseId: 'p1', dueAt: 1000 }, recordedAt: 3 },
        { runId: 'r', seq: 4, type: 'run.suspended', stepPath: 'A/0', payload: { reason: 'timer', dueAt: 1000 }, recordedAt: 4 },
      ] as StoredEvent[],
      missionFiles,
      options: { sources: {}, env: {} },
      status: { status: 'suspended', waitingOn: 'pause:p1', wakeAt: 1000 },
    });
    const worker = await reqon(['worker', '--once', '--poll', '20']);
    expect(worker.code, describeResult(worker)).toBe(1);
    expect(worker.stderr).toMatch(/format 99 by a newer engine/);
    expect((await temp!.log.getRun(runId))!).toMatchObject({ status: 'suspended', waitingOn: 'pause:p1' });
    expect((await temp!.log.read(runId)).map((e) => e.type)).toEqual(['run.started', 'stage.started', 'pause.created', 'run.suspended']);
  });

  it('whose --auth file cannot be read any more: resume and the worker spend nothing of its pause (probe 106 K6)', async () => {
    // Before: the pause was resumed (the payload taken), then the credentials failed: exit 2 "nothing
    // done" over a spent pause, a retry told "already resumed", the run nobody's.
    temp = await openTempLog(backend, {}, 'reqon-unresumable-');
    const dir = temp.dir;
    const auth = path.join(dir, 'auth.json');
    fs.writeFileSync(auth, JSON.stringify({ Api: { type: 'bearer', token: 'tok-secret-12345' } }));
    const mission = (duration: string) => `mission AuthPause {\n  source Api { auth: bearer, base: "http://127.0.0.1:1" }\n  store s: memory("s")\n  action A {\n    pause { duration: "${duration}" }\n    store { id: "after", got: response } -> s { key: .id }\n  }\n  run A\n}\n`;
    fs.writeFileSync(path.join(dir, 'long.vague'), mission('1h'));
    fs.writeFileSync(path.join(dir, 'due.vague'), mission('1s'));
    const start = async (file: string) => {
      const r = await reqon(['run', file, '--auth', auth, '--quiet']);
      expect(r.code, describeResult(r)).toBe(10);
      return runIdOf(r);
    };
    const waiting = await start('long.vague');
    const due = await start('due.vague');
    const before = { waiting: (await temp.log.read(waiting)).length, due: (await temp.log.read(due)).length };
    fs.renameSync(auth, `${auth}.moved`);
    await new Promise((r) => setTimeout(r, 1_200));

    const refused = await reqon(['resume', waiting, '--payload', '{"approved":true}']);
    expect(refused.code, describeResult(refused)).toBe(2);
    expect(refused.stderr).toContain(`cannot read auth file ${auth}`);
    const pass = await reqon(['worker', '--once', '--poll', '20']);
    expect(pass.code, describeResult(pass)).toBe(1);
    expect(pass.stderr).toContain(`worker --once: 1 could not be carried on (${due}); the lines above say why`);
    for (const [runId, count] of [[waiting, before.waiting], [due, before.due]] as const) {
      expect((await temp.log.getRun(runId))!.status, runId).toBe('suspended');
      expect((await temp.log.read(runId)).length, runId).toBe(count);
    }

    // The file back: the same payload resumes the pause, and the worker carries the due one on.
    fs.renameSync(`${auth}.moved`, auth);
    const resumed = await reqon(['resume', waiting, '--payload', '{"approved":true}', '--quiet']);
    expect(resumed.code, describeResult(resumed)).toBe(0);
    const next = await reqon(['worker', '--once', '--poll', '20']);
    expect(next.code, describeResult(next)).toBe(0);
    expect((await temp.log.getRun(due))!.status).toBe('completed');
  });
});
