/**
 * `--crash-at POINT:N` that the run never reaches kills nothing; before, the run ended as usual
 * with no word of it, so a crash test whose point the mission never passes read as a crash
 * survived. Now `run` and `resume` say on stderr that the point was not reached and why: the run
 * passed it fewer than N times, or its occurrence N lay in what the log held (replayed, never killed).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli } from '../durability/support/cli-build.js';

let cli: string;
let dir: string;
const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'log.db')], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

beforeAll(() => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-crash-not-reached-'));
  fs.writeFileSync(
    path.join(dir, 'm.vague'),
    'mission M {\n  store out: sql("crash_not_reached")\n  action A {\n    store { id: "a" } -> out { key: .id }\n    store { id: "b" } -> out { key: .id }\n  }\n  run A\n}\n',
  );
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('--crash-at a point the run does not reach', () => {
  it('says so when the run passes the point fewer times than asked', async () => {
    const r = await reqon('run', 'm.vague', '--crash-at', 'before-effect:3', '--quiet');
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stderr).toContain('crash point before-effect:3 was not reached before the run completed — nothing was killed (the run passed before-effect 2 times)');
  });

  it('says so on a resume whose occurrence lies in the replayed part of the log', async () => {
    const killed = await reqon('run', 'm.vague', '--crash-at', 'before-effect:2', '--quiet');
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runId = (JSON.parse((await reqon('runs', '--json')).stdout) as { runId: string; status: string }[]).find((r) => r.status === 'running')!.runId;
    const resumed = await reqon('resume', runId, '--crash-at', 'before-effect:1', '--quiet');
    expect(resumed.code, describeResult(resumed)).toBe(0);
    expect(resumed.stderr).toContain('crash point before-effect:1 was not reached before the run completed — nothing was killed (its occurrence 1 lies in what the log already held');
  });

  it('says nothing when no crash point is armed, and kills when it is reached', async () => {
    const plain = await reqon('run', 'm.vague', '--quiet');
    expect(plain.code, describeResult(plain)).toBe(0);
    expect(plain.stderr).not.toContain('crash point');
    const killed = await reqon('run', 'm.vague', '--crash-at', 'before-effect:2', '--quiet');
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    expect(killed.stderr).not.toContain('was not reached');
  });
});
