/**
 * A run killed between its pause's record and its suspension (`--crash-at before-wait`) and
 * resumed after the pause came due carries on, as a run that suspended and was resumed after its
 * timer does (helper 94: it suspended again "until" an instant past and exited 10). Each POST
 * once; a verify of the finished run replays the pause as resumed by its timer. So does a
 * concurrent branch's pause that came due while a sibling's was resumed by hand.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { backends, tempLogTarget, type Backend, type TempLogTarget } from '../support/temp-log.js';
import { builtCli, describeResult, runCli, runIdOf } from './support/cli-build.js';
import { openLog } from '../../engine/log/open-log.js';

const MISSION = `mission Later {
  source Api { auth: none, base: "http://placeholder.test" }
  action A {
    post "/before" { body: { n: 1 } }
    pause { duration: "1s" }
    post "/after" { body: { n: 2 } }
  }
  run A
}
`;

/** The same inside concurrent branches: a parallel stage, a concurrent loop (helper 95). */
const CONCURRENT = `mission Together {
  source Api { auth: none, base: "http://placeholder.test" }
  action A {
    post "/before" { body: { n: 1 } }
    pause { duration: "1s" }
    post "/after" { body: { n: 2 } }
  }
  action B {
    for i in [1, 2] concurrency 2 {
      pause { duration: "1s" }
    }
  }
  run [A, B]
}
`;

/** Two branches of a concurrent loop pause, one for an hour, one for a second; each POSTs after. */
const SIBLINGS = `mission Siblings {
  source Api { auth: none, base: "http://placeholder.test" }
  action A {
    for x in [{ wait: "long" }, { wait: "short" }] concurrency 2 {
      match x {
        { wait: "long" } -> pause { duration: "1h" },
        _ -> pause { duration: "1s" }
      }
      post (x.wait == "long" ? "/before" : "/after") { body: { n: 1 } }
    }
  }
  run A
}
`;

let cli: string;
let api: FakeApi;
let dir: string;
const targets: TempLogTarget[] = [];

beforeAll(async () => {
  cli = builtCli();
  api = new FakeApi().on('POST /before', { status: 201, body: { ok: 1 } }).on('POST /after', { status: 201, body: { ok: 2 } });
  await api.start();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-pause-due-'));
  fs.writeFileSync(path.join(dir, 'm.vague'), MISSION);
  fs.writeFileSync(path.join(dir, 'together.vague'), CONCURRENT);
  fs.writeFileSync(path.join(dir, 'siblings.vague'), SIBLINGS);
  fs.writeFileSync(path.join(dir, 'hooked.vague'), MISSION.replace('pause { duration: "1s" }', 'pause { duration: "1s", resumeOn: timeout | webhook "/ok" }'));
}, 180_000);
afterEach(async () => {
  for (const t of targets.splice(0)) await t.drop();
});
afterAll(async () => {
  await api?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.each(backends)('%s: a pause due by the time its crashed run is resumed', (backend: Backend) => {
  it('carries on at once (exit 0), each POST once, and verifies', async () => {
    const target = await tempLogTarget(backend, 'reqon-pause-due-log-');
    targets.push(target);
    const db = target.target;
    const from = api.requests.length;
    const killed = await runCli(cli, ['run', 'm.vague', '--db', db, '--source', `Api=${api.url}`, '--quiet', '--crash-at', 'before-wait'], { cwd: dir });
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runId = runIdOf(killed);
    await new Promise((r) => setTimeout(r, 1_200));
    const resumed = await runCli(cli, ['resume', runId, '--db', db], { cwd: dir });
    expect(resumed.code, describeResult(resumed)).toBe(0);
    expect(resumed.stdout + resumed.stderr).not.toMatch(/suspended|wakes at/);
    const mine = api.requests.slice(from);
    expect(mine.map((r) => r.url)).toEqual(['/before', '/after']);
    const verified = await runCli(cli, ['verify', runId, '--db', db], { cwd: dir });
    expect(verified.code, describeResult(verified)).toBe(0);
  }, 60_000);

  it('inside concurrent branches too (a parallel stage, a concurrent loop)', async () => {
    const target = await tempLogTarget(backend, 'reqon-pause-due-log-');
    targets.push(target);
    const db = target.target;
    const from = api.requests.length;
    const killed = await runCli(cli, ['run', 'together.vague', '--db', db, '--source', `Api=${api.url}`, '--quiet', '--crash-at', 'before-wait'], { cwd: dir });
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runId = runIdOf(killed);
    await new Promise((r) => setTimeout(r, 1_200));
    const resumedAt = Date.now();
    const resumed = await runCli(cli, ['resume', runId, '--db', db], { cwd: dir });
    // Never suspended "until" an instant past (the pause the kill left was due).
    for (const [instant] of (resumed.stdout + resumed.stderr).matchAll(/\d{4}-\d\d-\d\dT[\d:.]+Z/g)) expect(Date.parse(instant)).toBeGreaterThanOrEqual(resumedAt - 1);
    // Pauses of other branches the kill came before are met now, fresh: they may suspend anew.
    if (resumed.code === 10) {
      await new Promise((r) => setTimeout(r, 1_200));
      const again = await runCli(cli, ['resume', runId, '--db', db], { cwd: dir });
      expect(again.code, describeResult(again)).toBe(0);
    } else expect(resumed.code, describeResult(resumed)).toBe(0);
    expect(api.requests.slice(from).map((r) => r.url)).toEqual(['/before', '/after']);
    const verified = await runCli(cli, ['verify', runId, '--db', db], { cwd: dir });
    expect(verified.code, describeResult(verified)).toBe(0);
  }, 60_000);

  it("a branch's pause that came due while a sibling's was resumed by hand fires then: the run does not suspend again on it (helper 104)", async () => {
    const target = await tempLogTarget(backend, 'reqon-pause-due-log-');
    targets.push(target);
    const db = target.target;
    const from = api.requests.length;
    const started = await runCli(cli, ['run', 'siblings.vague', '--db', db, '--source', `Api=${api.url}`, '--quiet'], { cwd: dir });
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);
    const log = await openLog(db);
    let longPause: string;
    try {
      const created = (await log.read(runId)).filter((e) => e.type === 'pause.created');
      expect(created).toHaveLength(2);
      longPause = created.find((e) => e.stepPath.startsWith('A/0[0]'))!.payload.pauseId as string;
    } finally {
      await log.close();
    }
    // The short branch's timer comes due; the long one's (an hour) is resumed by hand.
    await new Promise((r) => setTimeout(r, 1_200));
    const resumed = await runCli(cli, ['resume', runId, '--db', db, '--pause', longPause, '--payload', '{"ok":true}'], { cwd: dir });
    expect(resumed.code, describeResult(resumed)).toBe(0);
    expect(api.requests.slice(from).map((r) => r.url).sort()).toEqual(['/after', '/before']);
    const after = await openLog(db);
    try {
      const resumes = (await after.read(runId)).filter((e) => e.type === 'pause.resumed').map((e) => [e.stepPath.slice(0, 6), e.payload.by]);
      expect(resumes.sort()).toEqual([['A/0[0]', 'cli'], ['A/0[1]', 'timer']]);
    } finally {
      await after.close();
    }
    const verified = await runCli(cli, ['verify', runId, '--db', db], { cwd: dir });
    expect(verified.code, describeResult(verified)).toBe(0);
  }, 60_000);

  it('with a webhook too: a delivery that came after the timer was due is left, the timer resumes it (helper 97)', async () => {
    const target = await tempLogTarget(backend, 'reqon-pause-due-log-');
    targets.push(target);
    const db = target.target;
    const killed = await runCli(cli, ['run', 'hooked.vague', '--db', db, '--source', `Api=${api.url}`, '--quiet', '--crash-at', 'before-wait'], { cwd: dir });
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runId = runIdOf(killed);
    await new Promise((r) => setTimeout(r, 1_200));
    const log = await openLog(db);
    try {
      expect(await log.deliverWebhook('/ok', 'late', { late: true }, Date.now())).toBe('accepted');
    } finally {
      await log.close();
    }
    const resumed = await runCli(cli, ['resume', runId, '--db', db], { cwd: dir });
    expect(resumed.code, describeResult(resumed)).toBe(0);
    const after = await openLog(db);
    try {
      const events = await after.read(runId);
      expect(events.find((e) => e.type === 'pause.resumed')?.payload).toMatchObject({ by: 'timer' });
      expect((await after.webhookInbox('/ok')).map((d) => d.eventId)).toEqual(['late']);
    } finally {
      await after.close();
    }
  }, 60_000);
});
