/**
 * Bad arguments to commands that read or write files and seqs are one line and exit 2, and change
 * nothing. Before: `reqon export ID --out missing/dir/x` (or a folder) was an internal error with a
 * stack trace; `reqon log copy --from typo.db` created an empty log at typo.db, "copied" it and
 * exited 0; `reqon events ID --from -5` (or `abc`) printed the log from seq 1 as if it were given.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli, runIdOf } from '../durability/support/cli-build.js';

let cli: string;
let dir: string;
let runId: string;

beforeAll(async () => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-bad-arguments-'));
  fs.writeFileSync(path.join(dir, 'm.vague'), 'mission M {\n  store s: memory("s")\n  action A {\n    store { id: 1 } -> s { key: .id }\n  }\n  run A\n}\n');
  const made = await reqon('run', 'm.vague', '--quiet');
  expect(made.code, describeResult(made)).toBe(0);
  runId = runIdOf(made);
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function reqon(...args: string[]) {
  const db = args.includes('copy') ? [] : ['--db', path.join(dir, 'log.db')];
  return runCli(cli, [...args, ...db], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });
}

function oneLine(r: { code: number | null; stderr: string }, message: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
}

describe('bad arguments', () => {
  it('an option whose value is missing does not take the next flag as its value', async () => {
    // `--db --json` opened a log file named `--json` (and printed no JSON).
    const r = await runCli(cli, ['runs', '--db', '--json'], { cwd: dir });
    oneLine(r, /^reqon: --db needs a value, but the next word is the option --json$/m);
    expect(fs.existsSync(path.join(dir, '--json'))).toBe(false);
    oneLine(await reqon('run', 'm.vague', '--crash-at', '--json'), /^reqon: --crash-at needs a value, but the next word is the option --json$/m);
  });

  it('reqon export --out a path it cannot write', async () => {
    oneLine(await reqon('export', runId, '--out', path.join(dir, 'no', 'such', 'x.reqonrun')), /^reqon: cannot write the bundle to .*x\.reqonrun: no such folder/);
    oneLine(await reqon('export', runId, '--out', dir), /^reqon: cannot write the bundle to .*: it is a folder/);
    const good = await reqon('export', runId, '--out', path.join(dir, 'x.reqonrun'));
    expect(good.code, describeResult(good)).toBe(0);
    // A failed export leaves FILE as it was (it is written beside, then renamed over), and no temporary file.
    const kept = path.join(dir, 'kept.reqonrun');
    fs.writeFileSync(kept, 'an earlier bundle');
    oneLine(await reqon('export', 'run_nope', '--out', kept), /^reqon: no run run_nope in this log/);
    expect(fs.readFileSync(kept, 'utf8')).toBe('an earlier bundle');
    expect(fs.readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);
    // Replacing a file keeps what it was: its mode (a private bundle stays private), a symlink a
    // link to the file it names (helper 35: both were replaced by a plain file of mode 644).
    fs.chmodSync(kept, 0o600);
    const kept2 = await reqon('export', runId, '--out', kept);
    expect(kept2.code, describeResult(kept2)).toBe(0);
    expect(fs.statSync(kept).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(kept, 'utf8')).run.runId).toBe(runId);
    const link = path.join(dir, 'link.reqonrun');
    fs.symlinkSync(kept, link);
    fs.writeFileSync(kept, 'before');
    const linked = await reqon('export', runId, '--out', link);
    expect(linked.code, describeResult(linked)).toBe(0);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(fs.readFileSync(kept, 'utf8')).run.runId).toBe(runId);
    // A dangling link: the file it names is created, the link kept; a hard link: both names see the bundle (helper 36).
    const dangling = path.join(dir, 'dangling.reqonrun');
    fs.symlinkSync('named.reqonrun', dangling);
    expect((await reqon('export', runId, '--out', dangling)).code).toBe(0);
    expect(fs.lstatSync(dangling).isSymbolicLink()).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'named.reqonrun'), 'utf8')).run.runId).toBe(runId);
    const other = path.join(dir, 'other-name.reqonrun');
    fs.linkSync(kept, other);
    fs.writeFileSync(kept, 'before');
    expect((await reqon('export', runId, '--out', other)).code).toBe(0);
    expect(JSON.parse(fs.readFileSync(kept, 'utf8')).run.runId).toBe(runId);
  });

  it('reqon log copy --from a SQLite file that does not exist', async () => {
    const missing = path.join(dir, 'typo.db');
    oneLine(await reqon('log', 'copy', '--from', missing, '--to', path.join(dir, 'copy.db')), /^reqon: log copy --from .*typo\.db: no such log file/);
    expect(fs.existsSync(missing)).toBe(false);
    expect(fs.existsSync(path.join(dir, 'copy.db'))).toBe(false);
  });

  it('reqon events --from something that is no seq', async () => {
    for (const from of ['-5', 'abc', '0', '1.5']) oneLine(await reqon('events', runId, '--from', from), new RegExp(`^reqon: --from expects a seq \\(a whole number ≥ 1\\), got "${from.replace('.', '\\.')}"`));
    const good = await reqon('events', runId, '--from', '2', '--json');
    expect(good.code, describeResult(good)).toBe(0);
    expect(JSON.parse(good.stdout.split('\n')[0]!).seq).toBe(2);
  });

  it('reqon run with one source given two URLs: refused, where the last one was taken silently', async () => {
    oneLine(await reqon('run', 'm.vague', '--source', 'Api=http://127.0.0.1:1/a', '--source', 'Api=http://127.0.0.1:1/b'), /^reqon: --source Api is given twice \(http:\/\/127\.0\.0\.1:1\/a and http:\/\/127\.0\.0\.1:1\/b\); give each source one URL/);
  });

  it('an --auth entry that misspells a source needing credentials (case included): refused before the run, where the requests went out without them (probe 112 K6)', async () => {
    fs.writeFileSync(path.join(dir, 'bearer.vague'), 'mission B {\n  source Api { auth: bearer, base: "http://127.0.0.1:1" }\n  action A {\n    post "/orders" { body: { n: 1 } }\n  }\n  run A\n}\n');
    const token = 'a-long-enough-token-123';
    for (const key of ['api', 'Apj']) {
      fs.writeFileSync(path.join(dir, 'auth.json'), JSON.stringify({ [key]: { type: 'bearer', token } }));
      const runs = (await reqon('runs', '--json')).stdout;
      for (const command of [['run', 'bearer.vague'], ['worker', 'bearer.vague', '--once']]) {
        const result = await reqon(...command, '--auth', 'auth.json');
        oneLine(result, new RegExp(`^reqon: --auth \\S+auth\\.json: an entry "${key}" names no source of the mission, and source "Api" \\(auth: bearer\\) has none: did you mean "Api"\\?`));
        expect(result.stdout).toBe('');
        expect(result.stderr).not.toContain(token);
      }
      expect((await reqon('runs', '--json')).stdout, 'no run was made').toBe(runs);
    }
    // An entry far from every source is another mission's: allowed (one auth file may serve several).
    fs.writeFileSync(path.join(dir, 'auth.json'), JSON.stringify({ Billing: { type: 'bearer', token }, Api: { type: 'bearer', token } }));
    const fine = await reqon('run', 'bearer.vague', '--auth', 'auth.json', '--quiet');
    expect(fine.stderr).not.toMatch(/did you mean/);
  });

  it('reqon run and worker with one --env name given two values: refused without echoing either, where the last one was taken silently (probe 112 K10)', async () => {
    for (const command of [['run', 'm.vague'], ['worker', '--once']]) {
      const result = await reqon(...command, '--env', 'TOKEN=first-secret', '--env', 'TOKEN=second-secret');
      oneLine(result, /^reqon: --env TOKEN is given twice, with two values; give each name one value\n$/);
      expect(result.stderr).not.toMatch(/secret/);
    }
    // The same value twice is one value.
    const same = await reqon('run', 'm.vague', '--env', 'TOKEN=x', '--env', 'TOKEN=x', '--quiet');
    expect(same.stderr).not.toMatch(/given twice/);
  });
});

