/**
 * `reqon show` of a run left `running` by a process that died says nobody carries it on, and how
 * to (`reqon resume` or a worker), in text and as `orphaned` in --json — before, it printed the
 * dead process as the owner with its lease, as if the run were being worked on. A run that
 * finished is not orphaned.
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
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-show-orphaned-'));
  fs.writeFileSync(
    path.join(dir, 'm.vague'),
    'mission M {\n  store out: sql("show_orphaned")\n  action A {\n    store { id: "a" } -> out { key: .id }\n    store { id: "b" } -> out { key: .id }\n  }\n  run A\n}\n',
  );
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('reqon show of a run whose process died', () => {
  it('says no process carries it on, and how to; once resumed to the end, it is not orphaned', async () => {
    const killed = await reqon('run', 'm.vague', '--crash-at', 'before-effect:2');
    expect(killed.signal, describeResult(killed)).toBe('SIGKILL');
    const runs = JSON.parse((await reqon('runs', '--json')).stdout) as { runId: string; status: string }[];
    const runId = runs[0]!.runId;
    expect(runs[0]!.status).toBe('running');

    const text = await reqon('show', runId);
    expect(text.code, describeResult(text)).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^owner .* — that process is gone; \`reqon resume ${runId}\` or a worker carries it on$`, 'm'));
    const json = JSON.parse((await reqon('show', runId, '--json')).stdout) as { orphaned: boolean };
    expect(json.orphaned).toBe(true);

    const resumed = await reqon('resume', runId);
    expect(resumed.code, describeResult(resumed)).toBe(0);
    const after = JSON.parse((await reqon('show', runId, '--json')).stdout) as { orphaned: boolean; status: string };
    expect(after).toMatchObject({ status: 'completed', orphaned: false });
    expect((await reqon('show', runId)).stdout).not.toMatch(/carries it on/);
  });
});
