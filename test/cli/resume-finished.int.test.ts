/**
 * `reqon resume` of a run that has ended (found by helper 38). It answers with the run's end (exit
 * 0 or 1, resume is idempotent); `--mission` was not read at all there, so an unparseable mission
 * exited 0 and an edit the run could not replay was "completed" — an edit nobody compared with the
 * run. Now the mission is still checked (invalid: exit 2, as for `run`), and a valid one is refused
 * saying it was not used (exit 1, as a payload is); an armed `--crash-at` says it killed nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli, runIdOf } from '../durability/support/cli-build.js';

let cli: string;
let dir: string;
let runId: string;
const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'log.db')], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
const MISSION = 'mission M {\n  store s: memory("s")\n  action A {\n    store { id: 1, v: "a" } -> s { key: .id }\n  }\n  run A\n}\n';

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-resume-finished-'));
  fs.writeFileSync(path.join(dir, 'm.vague'), MISSION);
  fs.writeFileSync(path.join(dir, 'edited.vague'), MISSION.replace('v: "a"', 'v: "b"'));
  fs.writeFileSync(path.join(dir, 'broken.vague'), 'mission M {\n  action A {\n    let x = "unterminated\n  }\n');
  const made = await reqon('run', 'm.vague', '--quiet');
  expect(made.code, describeResult(made)).toBe(0);
  runId = runIdOf(made);
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('resume of a completed run', () => {
  it('answers with its end, appending nothing', async () => {
    const r = await reqon('resume', runId, '--quiet');
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toMatch(/^completed: 1 action\(s\) run \(A\)/);
  });

  it('checks --mission: an invalid one is a usage error with its diagnostics', async () => {
    const r = await reqon('resume', runId, '--mission', 'broken.vague', '--quiet');
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.stderr).toMatch(/broken\.vague:3:\d+: error\[E1002\]/);
  });

  it('refuses a valid --mission, saying it was not used and how to compare it', async () => {
    const before = (await reqon('events', runId, '--json')).stdout;
    const r = await reqon('resume', runId, '--mission', 'edited.vague', '--quiet');
    // Refused, the run as it was (2): not "the run failed" (1) for a run that completed (helper 86).
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.stderr).toContain(`run ${runId} has already completed; nothing to resume, and --mission was not used`);
    expect(r.stderr).toContain(`reqon verify ${runId} --mission FILE`);
    expect((await reqon('events', runId, '--json')).stdout).toBe(before);
  });

  it('says an armed --crash-at killed nothing', async () => {
    const r = await reqon('resume', runId, '--crash-at', 'before-effect:1', '--quiet');
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stderr).toContain('crash point before-effect:1 was not reached at all: the run had already completed — nothing was killed');
  });
});

describe('resume of a failed run', () => {
  // Helper 73: the failures that made up a parallel stage's failure were listed as "tolerated
  // failure at …" — nothing was tolerated. They are its error; the others are listed as failures.
  it('lists no failure of its error as tolerated, and the others as failures', async () => {
    const validate = (test: string) => `      let item = { n: i }\n      validate item { assume ${test} }\n`;
    fs.writeFileSync(
      path.join(dir, 'failing.vague'),
      'mission F {\n' +
        '  action A {\n    abort "a refused"\n  }\n' +
        '  action B {\n    for i in [1, 2] onError abort {\n' + validate('.n < 2') + '    }\n  }\n' +
        '  action C {\n    for i in [1, 2, 3] onError continue {\n' + validate('.n != 2') +
        '      match i { c where c == 3 -> abort "three", _ -> continue }\n    }\n  }\n' +
        '  run [A, B] then C\n}\n',
    );
    const parallel = await reqon('run', 'failing.vague', '--quiet');
    expect(parallel.code, describeResult(parallel)).toBe(1);
    const first = runIdOf(parallel);
    const again = await reqon('resume', first, '--quiet');
    expect(again.code, describeResult(again)).toBe(1);
    expect(again.stdout).toMatch(/^failed: .*Parallel stage failed: A: .*a refused; B: .*`\.n < 2`/);
    expect(again.stderr).not.toMatch(/failure at/);

    fs.writeFileSync(path.join(dir, 'failing.vague'), fs.readFileSync(path.join(dir, 'failing.vague'), 'utf8').replace('run [A, B] then C', 'run C'));
    const later = await reqon('run', 'failing.vague', '--quiet');
    expect(later.code, describeResult(later)).toBe(1);
    const resumed = await reqon('resume', runIdOf(later), '--quiet');
    expect(resumed.stdout).toMatch(/^failed: .*three/);
    expect(resumed.stderr).toMatch(/^ {2}failure at C\/0\[1\]\/1: Validation failed: `\.n != 2`/m);
    expect(resumed.stderr).not.toContain('tolerated');
  }, 60_000);
});

describe('resume --payload of a crashed run that never paused', () => {
  it('says it waits on no pause (it was never resumed), changes nothing, and a plain resume finishes it', async () => {
    const killed = await reqon('run', 'm.vague', '--crash-at', 'before-effect:1', '--quiet');
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    // It says its point fired, as it dies: a crash lab tells that from a kill by anything else.
    expect(killed.stderr).toContain('reqon: crash point before-effect:1 fired: killing this process (--crash-at)');
    const crashed = runIdOf(killed);
    const r = await reqon('resume', crashed, '--payload', '{"x":1}', '--quiet');
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.stderr).toContain(`run ${crashed} is not suspended (it is running): it does not wait on a pause (a payload answers one)`);
    expect(r.stderr).not.toContain('already resumed');
    const plain = await reqon('resume', crashed, '--quiet');
    expect(plain.code, describeResult(plain)).toBe(0);
  });
});

describe("resume --payload or --pause of a paused run that was resumed and then crashed, or completed", () => {
  // Exit 11 says another process has the run, or resumed the pause first and went on (to its end,
  // maybe) there; a run whose resumer died is nobody's, and a payload for it is refused: 2. Never
  // 1, "the run failed", which it did not (helper 86: a race's loser got 1 or 11 by timing).
  it('exits 2 while its resumer is gone, 11 once it went on to its end, saying it was already resumed', async () => {
    fs.writeFileSync(path.join(dir, 'paused.vague'), 'mission P {\n  store s: memory("s")\n  action A {\n    pause { duration: "1h" }\n    store { id: 1 } -> s { key: .id }\n  }\n  run A\n}\n');
    const started = await reqon('run', 'paused.vague', '--quiet');
    expect(started.code, describeResult(started)).toBe(10);
    const paused = runIdOf(started);
    const events = (await reqon('events', paused, '--json')).stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; payload: { pauseId?: string } });
    const pauseId = events.find((e) => e.type === 'pause.created')!.payload.pauseId!;
    // Resumed, and killed as its store is about to commit: running, its process gone.
    const killed = await reqon('resume', paused, '--crash-at', 'before-effect:1', '--quiet');
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    for (const args of [['--payload', '{"x":1}'], ['--pause', pauseId]]) {
      const r = await reqon('resume', paused, ...args, '--quiet');
      expect(r.code, `${args.join(' ')}: ${describeResult(r)}`).toBe(2);
      expect(r.stderr).toMatch(/already resumed/);
    }
    const plain = await reqon('resume', paused, '--quiet');
    expect(plain.code, describeResult(plain)).toBe(0);
    // Completed now, by the resume that took its pause: a late payload is that resumer's race lost.
    for (const args of [['--pause', pauseId, '--payload', '{"x":2}'], ['--payload', '{"x":2}']]) {
      const late = await reqon('resume', paused, ...args, '--quiet');
      expect(late.code, describeResult(late)).toBe(11);
      expect(late.stderr).toMatch(/already resumed.*your payload was not used/);
    }
  }, 60_000);
});

describe('resume --payload of a wait another resume delivered to first', () => {
  it('exits 11 as a lost race on a pause does, once the winner\'s run has ended (helper 88: exit 2, "finished")', async () => {
    fs.writeFileSync(path.join(dir, 'waits.vague'), 'mission W {\n  store s: memory("s")\n  action A {\n    wait { path: "/paid", timeout: 600000 }\n    store { id: 1, got: response } -> s { key: .id }\n  }\n  run A\n}\n');
    const started = await reqon('run', 'waits.vague', '--quiet');
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);
    const first = await reqon('resume', runId, '--payload', '{"paid":1}', '--quiet');
    expect(first.code, describeResult(first)).toBe(0);
    const late = await reqon('resume', runId, '--payload', '{"paid":2}', '--quiet');
    expect(late.code, describeResult(late)).toBe(11);
    expect(late.stderr).toMatch(/was already resumed \(by cli at .*\) and has since completed; nothing was changed and your payload was not used/);
  }, 60_000);
});
