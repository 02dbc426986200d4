/**
 * `reqon resume RUN --payload …` of a run in a `wait` whose eventFilter refuses the payload: the
 * run waits on (exit 10), and the command says the payload was not taken — before, it printed only
 * the usual "suspended" line, and the payload sat unclaimed in the inbox without a word.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli, runIdOf } from '../durability/support/cli-build.js';

let cli: string;
let dir: string;

beforeAll(() => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-resume-filter-'));
  fs.writeFileSync(
    path.join(dir, 'm.vague'),
    'mission Approve {\n  store got: memory("got")\n  action A {\n    wait { path: "/approval", timeout: 600000, eventFilter: response.status == "ok" }\n    store response -> got { key: .status }\n  }\n  run A\n}\n',
  );
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'log.db')], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

describe('resume --payload that a wait\'s eventFilter refuses', () => {
  it('leaves the run waiting and says the payload was not taken; a payload that passes completes it', async () => {
    const started = await reqon('run', 'm.vague');
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);

    const refused = await reqon('resume', runId, '--payload', '{"status":"bad"}');
    expect(refused.code, describeResult(refused)).toBe(10);
    expect(refused.stderr).toContain("your payload was not taken by the wait on /approval: its eventFilter refused it; it stays unclaimed in that path's inbox, and the run waits on");

    const taken = await reqon('resume', runId, '--payload', '{"status":"ok"}');
    expect(taken.code, describeResult(taken)).toBe(0);
    expect(taken.stderr).not.toContain('not taken');
  }, 60_000);
});
