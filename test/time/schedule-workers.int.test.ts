/**
 * Schedules across processes, real clock: three `reqon worker MISSION` processes on one database
 * with `every 1 seconds` for ~4 s start exactly one run per firing — no firing instant twice, one
 * run per firing, every run completed, each instant announced by exactly one worker. And the CLI
 * edges: an invalid cron is rejected by `reqon check` (and by `reqon worker`), a mission without
 * a schedule is refused by `reqon worker`. The firing test runs on every log backend
 * (test/support/temp-log.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openLog } from '../../engine/log/open-log.js';
import { backends, tempLogTarget } from '../support/temp-log.js';
import { buildCli, type CliBuild } from './support/build-cli.js';
import { killAll, runNode, spawnNode, waitFor } from './support/processes.js';

let build: CliBuild;
let dir: string;

beforeAll(() => {
  build = buildCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-sched-workers-'));
}, 180_000);
afterEach(() => killAll());
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

const TICK = `mission Tick {
  schedule: every 1 seconds
  store done: memory("done")
  action A {
    store { id: "x", n: 1 } -> done { key: .id }
  }
  run A
}
`;

describe.each(backends)('%s: schedules with several worker processes', (backend) => {
  it('three workers, every 1 seconds, ~4 s: exactly one run per firing', async () => {
    const file = write(`tick-${backend}.vague`, TICK);
    const target = await tempLogTarget(backend, 'reqon-sched-workers-');
    const db = target.target;
    try {
    const workers = Array.from({ length: 3 }, () =>
      spawnNode(build.cli, ['worker', file, '--db', db, '--poll', '50'], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } }),
    );
    for (const w of workers) {
      // A worker that exits instead (refused, crashed) fails here with what it said.
      await waitFor('the worker to register the schedule', () => {
        if (w.child.exitCode !== null || w.child.signalCode !== null) throw new Error(`a worker exited (${w.child.exitCode ?? w.child.signalCode}) before registering: ${w.stderr()}`);
        return /^schedule Tick: every 1000 ms; next /m.test(w.stdout());
      }, 20_000);
    }
    await new Promise((r) => setTimeout(r, 4_200));
    for (const w of workers) w.child.kill('SIGTERM');
    const exits = await Promise.all(workers.map((w) => w.exited));
    for (const e of exits) expect(e.code, e.stderr).toBe(0);

    const log = await openLog(db);
    try {
      const firings = await log.scheduleFirings('Tick');
      const runs = await log.listRuns();
      expect(firings.length).toBeGreaterThanOrEqual(3);
      expect(firings.every((f) => f.outcome === 'started' && f.attempt === 0 && f.missed === 0)).toBe(true);
      expect(new Set(firings.map((f) => f.dueAt)).size).toBe(firings.length);
      for (let i = 1; i < firings.length; i++) expect(firings[i]!.dueAt - firings[i - 1]!.dueAt).toBe(1000);
      expect(runs).toHaveLength(firings.length);
      expect(new Set(firings.map((f) => f.runId))).toEqual(new Set(runs.map((r) => r.runId)));
      expect(runs.every((r) => r.status === 'completed')).toBe(true);
    } finally {
      await log.close();
    }
    // Each firing instant was announced by exactly one of the three processes.
    const announced = exits.flatMap((e) => [...e.stderr.matchAll(/^schedule Tick: fired for (\S+) /gm)].map((m) => m[1]));
    expect(new Set(announced).size).toBe(announced.length);
    expect(exits.filter((e) => /fired for/.test(e.stderr)).length).toBeGreaterThanOrEqual(1);
    } finally {
      await target.drop();
    }
  });
});

describe('schedules: the CLI edges', () => {
  it('an invalid cron is rejected by `reqon check` and by `reqon worker`; a mission without a schedule is refused', async () => {
    const bad = write('bad-cron.vague', TICK.replace('every 1 seconds', 'cron "61 * * * *"'));
    const check = await runNode(build.cli, ['check', bad], { cwd: dir });
    expect(check.code).toBe(1);
    expect(check.stderr).toContain('error[E3026]: Invalid cron expression "61 * * * *"');
    const db = path.join(dir, 'refused.db');
    const worker = await runNode(build.cli, ['worker', bad, '--once', '--db', db], { cwd: dir });
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain('Invalid cron expression');
    const plain = write('plain.vague', TICK.replace('  schedule: every 1 seconds\n', ''));
    const refused = await runNode(build.cli, ['worker', plain, '--once', '--db', db], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('mission "Tick"');
    expect(refused.stderr).toContain('has no `schedule:`');
  });

  it('two different missions of one name given to one worker are refused, registering neither', async () => {
    // A schedule is registered by mission name: the second silently replaced the first, which never fired.
    const a = write('tick-a.vague', TICK);
    const b = write('tick-b.vague', TICK.replace('n: 1', 'n: 2'));
    const db = path.join(dir, 'same-name.db');
    const worker = await runNode(build.cli, ['worker', a, b, '--once', '--db', db], { cwd: dir });
    expect(worker.code, worker.stderr).toBe(2);
    expect(worker.stderr).toBe(`reqon: ${a} and ${b} both hold mission "Tick": a worker registers a schedule by mission name, so one would replace the other; rename one of them\n`);
    const log = await openLog(db);
    try {
      expect(await log.listSchedules()).toEqual([]);
    } finally {
      await log.close();
    }
    // The same file twice is one mission.
    const twice = await runNode(build.cli, ['worker', a, a, '--once', '--db', db], { cwd: dir });
    expect(twice.code, twice.stderr).toBe(0);
  });

  it('a worker that registers another text of a mission another worker registered says whose schedule it replaces', async () => {
    // Two workers on one log, each with its own file of mission "Tick": the last registration wins.
    // Before, the second replaced the first's schedule without a word, and the first's never fired again.
    const a = write('tick-one.vague', TICK);
    const b = write('tick-two.vague', TICK.replace('n: 1', 'n: 2'));
    const db = path.join(dir, 'two-workers.db');
    const first = await runNode(build.cli, ['worker', a, '--once', '--db', db], { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).not.toContain('replaces');
    const again = await runNode(build.cli, ['worker', a, '--once', '--db', db], { cwd: dir });
    expect(again.stderr).not.toContain('replaces');
    const second = await runNode(build.cli, ['worker', b, '--once', '--db', db], { cwd: dir });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(new RegExp(`schedule Tick: replaces the one registered from ${a.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} at \\S+Z \\(another text of mission "Tick"\\): its firings now start ${b.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });

  it('a registered schedule is listed, and `reqon schedules remove` stops it: a worker with no mission fires it no more', async () => {
    // Before, nothing listed or removed a schedule: once registered, any worker on the log fired it for ever.
    const a = write('tick-remove.vague', TICK.replace('every 1 seconds', 'every 1 hours'));
    const db = path.join(dir, 'remove.db');
    const registered = await runNode(build.cli, ['worker', a, '--once', '--db', db], { cwd: dir });
    expect(registered.code, registered.stderr).toBe(0);
    const listed = await runNode(build.cli, ['schedules', '--db', db], { cwd: dir });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^Tick  every 3600000 ms  next \\S+  ${a.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n$`));
    expect(JSON.parse((await runNode(build.cli, ['schedules', '--json', '--db', db], { cwd: dir })).stdout)).toMatchObject([{ mission: 'Tick', entry: a }]);

    const removed = await runNode(build.cli, ['schedules', 'remove', 'Tick', '--db', db], { cwd: dir });
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toMatch(/^removed the schedule of Tick \(every 3600000 ms, registered from .*tick-remove\.vague\): no worker fires it again/);
    expect((await runNode(build.cli, ['schedules', '--db', db], { cwd: dir })).stdout).toMatch(/^no schedules/);
    const again = await runNode(build.cli, ['schedules', 'remove', 'Tick', '--db', db], { cwd: dir });
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('reqon: no schedule of mission "Tick" on this log (see `reqon schedules`)\n');
    const log = await openLog(db);
    try {
      expect(await log.listSchedules()).toEqual([]);
    } finally {
      await log.close();
    }
  });

  it('a mission renamed in its file: the worker says the old name still fires from it, and how to stop it (helper 91)', async () => {
    const file = write('renamed.vague', TICK.replace('every 1 seconds', 'every 1 hours'));
    const db = path.join(dir, 'renamed.db');
    expect((await runNode(build.cli, ['worker', file, '--once', '--db', db], { cwd: dir })).code).toBe(0);
    fs.writeFileSync(file, TICK.replace('every 1 seconds', 'every 1 hours').replace('mission Tick', 'mission Billing'));
    const again = await runNode(build.cli, ['worker', file, '--once', '--db', db], { cwd: dir });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`schedule Tick: registered from ${file}, which now holds mission "Billing" — it still fires its old text on every worker of this log; \`reqon schedules remove Tick\` stops it`);
  });

  it("reqon schedules lists a failed run's retry still to fire, not 'nothing left to fire' (helper 91)", async () => {
    // A one-shot whose run fails at once (nothing listens on port 1): its retry is what it has left.
    const once = write('once-retry.vague', 'mission Once {\n  schedule: at "2020-01-01T00:00:00Z" { retry: { maxRetries: 2, delaySeconds: 3600 } }\n  source Api { auth: none, base: "http://127.0.0.1:1" }\n  action A {\n    post "/job" { body: { n: 1 } }\n  }\n  run A\n}\n');
    const db = path.join(dir, 'retry-list.db');
    const fired = await runNode(build.cli, ['worker', once, '--once', '--db', db], { cwd: dir });
    expect(fired.code, fired.stderr).toBe(1);
    const listed = await runNode(build.cli, ['schedules', '--db', db], { cwd: dir });
    expect(listed.stdout).toMatch(/^Once  .*  no firing left; retry 1 of 2 of failed run run_\S+ at \S+  /);
    const json = JSON.parse((await runNode(build.cli, ['schedules', '--json', '--db', db], { cwd: dir })).stdout) as { nextFireAt: number | null; retries: { attempt: number }[] }[];
    expect(json).toMatchObject([{ nextFireAt: null, retries: [{ attempt: 1 }] }]);
  });

  it('a worker that registers the same mission with other options says which, never a setting\'s value', async () => {
    // Before, worker 2's --source silently became worker 1's too: its firings called the other API.
    const a = write('tick-options.vague', TICK.replace('  store done', '  source Api { auth: none, base: "http://127.0.0.1:1" }\n  store done'));
    const db = path.join(dir, 'options.db');
    const first = await runNode(build.cli, ['worker', a, '--once', '--db', db, '--source', 'Api=http://127.0.0.1:1/a', '--env', 'TOKEN=first-secret'], { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    const same = await runNode(build.cli, ['worker', a, '--once', '--db', db, '--source', 'Api=http://127.0.0.1:1/a', '--env', 'TOKEN=first-secret'], { cwd: dir });
    expect(same.stderr).not.toContain('replaces');
    const other = await runNode(build.cli, ['worker', a, '--once', '--db', db, '--source', 'Api=http://127.0.0.1:1/b', '--env', 'TOKEN=second-secret'], { cwd: dir });
    expect(other.code, other.stderr).toBe(0);
    expect(other.stderr).toMatch(/schedule Tick: replaces the options it was registered with at \S+Z: --source Api http:\/\/127\.0\.0\.1:1\/a → http:\/\/127\.0\.0\.1:1\/b; --env TOKEN — every worker on this log now fires it with these/);
    expect(other.stderr).not.toMatch(/secret/);
  });
});
