/**
 * `reqon runs` with a bad `--status` or `--limit`: one line naming the option and what it takes,
 * exit 2. Before, `--status bogus` was an internal error with a stack trace (exit 1), and
 * `--limit -1` or `--limit abc` listed runs as if no limit (or the default) had been given.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli } from '../durability/support/cli-build.js';

let cli: string;
let dir: string;

beforeAll(() => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-runs-options-'));
  fs.writeFileSync(path.join(dir, 'm.vague'), 'mission M {\n  store s: memory("s")\n  action A {\n    store { id: 1 } -> s { key: .id }\n  }\n  run A\n}\n');
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'log.db')], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

describe('reqon runs options', () => {
  it('refuses a status or limit it cannot take, in one line, exit 2', async () => {
    const made = await reqon('run', 'm.vague', '--quiet');
    expect(made.code, describeResult(made)).toBe(0);
    for (const [args, message] of [
      [['--status', 'bogus'], /^reqon: --status expects one of running, suspended, completed, failed; got "bogus"\n$/],
      [['--status', 'Completed'], /^reqon: --status expects one of running, suspended, completed, failed; got "Completed"\n$/],
      [['--limit', '-1'], /^reqon: --limit expects a positive whole number, got "-1"\n$/],
      [['--limit', 'abc'], /^reqon: --limit expects a positive whole number, got "abc"\n$/],
      [['--limit', '0'], /^reqon: --limit expects a positive whole number, got "0"\n$/],
    ] as const) {
      const r = await reqon('runs', ...args);
      expect(r.code, `${args.join(' ')}: ${describeResult(r)}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
    const good = await reqon('runs', '--status', 'completed', '--limit', '1', '--json');
    expect(good.code, describeResult(good)).toBe(0);
    expect(JSON.parse(good.stdout)).toHaveLength(1);
    // None of that status on a log that has runs: said so, not "no runs yet" (probe 106 K8).
    const none = await reqon('runs', '--status', 'failed');
    expect(none.code, describeResult(none)).toBe(0);
    expect(none.stdout).toBe('no failed runs (`reqon runs` lists every run)\n');
  });
});
