/**
 * `reqon prune` and `reqon worker --prune-completed-before`, through the built CLI, on both
 * backends: a dry run lists and keeps, a prune removes finished runs and leaves a suspended one
 * resumable, a fork whose parent was pruned still verifies and forks, bad durations get one
 * line and exit 2, and a worker prunes as it runs.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli, runIdOf } from '../durability/support/cli-build.js';
import { backends, tempLogTarget, type TempLogTarget } from '../support/temp-log.js';
import type { NewEvent } from '../../engine/log/events.js';
import { openLog } from '../../engine/log/open-log.js';
import { summaryText } from '../../engine/cli/commands/prune.js';

const MISSION = `mission PruneCli {
  store notes: memory("notes")
  store rows: sql("prune_cli_rows")
  action Go {
    store { id: "a", v: 1 } -> notes
    store { id: "b", v: 2 } -> rows
    store { id: "c", v: 3 } -> notes
  }
  run Go
}
`;
const PAUSED = `mission PruneCliPaused {
  action Go {
    pause { duration: "30d" }
  }
  run Go
}
`;

describe.each(backends)('%s: reqon prune', (backend) => {
  let t: TempLogTarget;
  let cli: string;
  const reqon = (...args: string[]) => runCli(cli, [...args, '--db', t.target], { cwd: t.dir, env: { REQON_DATA_DIR: path.join(t.dir, 'data') } });
  const runIds = async () => (await reqon('runs', '--json')).stdout;

  beforeAll(async () => {
    cli = builtCli();
    t = await tempLogTarget(backend, 'reqon-prune-cli-');
    fs.writeFileSync(path.join(t.dir, 'm.vague'), MISSION);
    fs.writeFileSync(path.join(t.dir, 'p.vague'), PAUSED);
  }, 180_000);
  afterAll(async () => {
    await t?.drop();
  });

  it('lists with --dry-run, prunes finished runs, keeps the suspended one resumable and a fork of a pruned parent working', async () => {
    const finished: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await reqon('run', 'm.vague', '--quiet');
      expect(r.code, describeResult(r)).toBe(0);
      finished.push(runIdOf(r));
    }
    const paused = await reqon('run', 'p.vague', '--quiet');
    expect(paused.code, describeResult(paused)).toBe(10);
    const pausedId = runIdOf(paused);
    const horizon = new Date(Date.now() + 5).toISOString();
    await new Promise((resolve) => setTimeout(resolve, 10));
    // A fork of the first run, finished after the horizon: it stays, its parent goes.
    const fork = await reqon('fork', finished[0]!, '--at', '3', '--quiet');
    expect(fork.code, describeResult(fork)).toBe(0);
    const forkId = runIdOf(fork);

    const dry = await reqon('prune', '--completed-before', horizon, '--dry-run');
    expect(dry.code, describeResult(dry)).toBe(0);
    for (const id of finished) expect(dry.stdout).toContain(id);
    expect(dry.stdout).not.toContain(pausedId);
    expect(dry.stdout).not.toContain(forkId);
    expect(dry.stdout).toMatch(/dry run: would prune 2 runs \(\d+ events\); nothing was deleted/);
    for (const id of finished) expect(await runIds()).toContain(id);

    const real = await reqon('prune', '--completed-before', horizon);
    expect(real.code, describeResult(real)).toBe(0);
    expect(real.stdout).toMatch(/^pruned 2 runs: \d+ events, 0 webhook deliveries, [\d.]+ KiB of log data/m);
    expect(real.stdout).toMatch(/^space: the log takes /m);
    const left = await runIds();
    for (const id of finished) expect(left).not.toContain(id);
    expect(left).toContain(pausedId);
    const show = await reqon('show', finished[1]!);
    expect(show.code).not.toBe(0);
    expect(show.stderr).toContain(finished[1]!);

    // The fork's log is its own: it verifies, shows, and forks again with its parent gone.
    const verify = await reqon('verify', forkId);
    expect(verify.code, describeResult(verify)).toBe(0);
    const again = await reqon('fork', forkId, '--at', '4', '--quiet');
    expect(again.code, describeResult(again)).toBe(0);
    // The shared sql table keeps the rows its pruned runs wrote.
    const rows = await reqon('store', forkId, 'rows', '--json');
    expect(JSON.parse(rows.stdout)).toEqual([{ key: 'b', record: { id: 'b', v: 2 } }]);

    // The suspended run resumes as if nothing happened.
    const resumed = await reqon('resume', pausedId, '--payload', '{}', '--quiet');
    expect(resumed.code, describeResult(resumed)).toBe(0);
  }, 120_000);

  it('a bad duration is one line and exit 2, naming the fix', async () => {
    for (const [value, message] of [
      ['30', /"30" has no unit; write it with one: 30d \(days\)/],
      ['P1M', /months and years have no fixed length; write days instead/],
      ['3 months', /months and years have no fixed length/],
      ['soon', /"soon" is not a duration; expected a number with a unit ms, s, m, h or d/],
      ['2026-02-30', /is not a date that exists/],
      ['PT', /is not an ISO 8601 duration/],
      // Beyond the date range: was an internal error with a stack trace.
      ['99999999999d', /"99999999999d" is longer than 36500d \(about 100 years\)/],
      ['P99999999999D', /"P99999999999D" is longer than 36500d/],
    ] as const) {
      const r = await reqon('prune', '--completed-before', value);
      expect(r.code, `${value}: ${describeResult(r)}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    }
    const missing = await reqon('prune');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--completed-before/);
  });

  it('reqon worker --prune-completed-before prunes as it runs, and leaves a suspended run alone', async () => {
    const r = await reqon('run', 'm.vague', '--quiet');
    expect(r.code, describeResult(r)).toBe(0);
    const id = runIdOf(r);
    const paused = runIdOf(await reqon('run', 'p.vague', '--quiet'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const worker = await reqon('worker', '--once', '--prune-completed-before', '10ms', '--prune-every', '1h');
    expect(worker.code, describeResult(worker)).toBe(0);
    expect(worker.stderr).toMatch(/prune: [1-9]\d* runs pruned, \d+ events deleted/);
    const left = await runIds();
    expect(left).not.toContain(id);
    expect(left).toContain(paused);
    const bad = await reqon('worker', '--once', '--prune-completed-before', '2026-01-01');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/a worker prunes by age; give a duration/);
  }, 120_000);

  it('stopped by SIGINT: "stopped", exit 12, and a dry run after it counts what is left (probe 112 K11: exit 0, then "0 runs (0 events)")', async () => {
    // Finished runs made through the log, enough that a prune a run at a time takes a while.
    const log = await openLog(t.target);
    try {
      for (let i = 0; i < 40; i++) {
        const runId = `prune-sigint-${i}`;
        const run = { runId, mission: 'PruneSigint', missionHash: 'h', missionFiles: { entry: 'x.vague', files: [] }, options: { sources: {}, env: {} }, createdAt: 1_000 };
        const { lease } = await log.createRun(run, 'w1', 60_000, [{ type: 'run.started', stepPath: '', payload: { mission: 'PruneSigint' }, recordedAt: 1_000 } as NewEvent]);
        const body = Array.from({ length: 400 }, (_, n) => ({ kind: 'event' as const, event: { type: 'value.recorded', stepPath: `Go/${n}`, payload: { source: 'now', value: n }, recordedAt: 1_000 } as NewEvent }));
        await log.commit(lease, body, { durable: false, returnEvents: false });
        await log.commit(lease, [{ kind: 'event', event: { type: 'run.completed', stepPath: '', payload: {}, recordedAt: 1_000 } as NewEvent }], { durable: true, status: { status: 'completed', releaseLease: true } });
      }
    } finally {
      await log.close();
    }
    const child = spawn(process.execPath, [cli, 'prune', '--completed-before', '0d', '--batch', '1', '--db', t.target], { cwd: t.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('pruning runs of')) child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    expect(code, `${stdout}\n${stderr}`).toBe(12);
    expect(stdout).toMatch(/^stopped: pruned \d+ runs/);
    expect(stdout).toMatch(/the rest stays as it was; run reqon prune again to carry on/);
    const dry = await reqon('prune', '--completed-before', '0d', '--dry-run');
    expect(dry.code, describeResult(dry)).toBe(0);
    // Between them, the stopped prune and the dry run account for all 40 runs.
    const pruned = Number(/pruned (\d+) runs/.exec(stdout)![1]);
    expect(Number(/would prune (\d+) runs/.exec(dry.stdout)![1]) + pruned, dry.stdout).toBe(40);
    // Where the stop fell mid-run (events queued, test/log/prune.int.test.ts), the dry run says so.
    expect(summaryText({ dryRun: true, stopped: false, runs: 3, events: 30, deliveries: 0, bytes: 0, keptForCheckpoint: 0, changedMeanwhile: 0, queued: { runs: 1, events: 250 } })).toBe(
      'dry run: would prune 3 runs (30 events); an earlier prune, stopped before its end, left 250 events of 1 pruned runs to delete, which the next prune deletes first; nothing was deleted',
    );
    const rest = await reqon('prune', '--completed-before', '0d');
    expect(rest.code, describeResult(rest)).toBe(0);
    expect((await reqon('runs', '--json')).stdout).not.toContain('prune-sigint-');
  }, 120_000);
});
