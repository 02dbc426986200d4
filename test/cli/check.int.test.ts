/**
 * `reqon check` as users run it: the built CLI (dist/engine/cli/main.js) spawned on good and bad
 * files and folders. Asserts the exit-code contract (0 clean or warnings only, 1 errors, 2 usage
 * or unreadable path) and what goes to stdout and stderr.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(repo, 'dist/engine/cli/main.js');
let dir: string;

beforeAll(() => {
  // tsc emits even when files of other areas still have type errors; the CLI's own files must compile.
  try {
    execFileSync(process.execPath, [path.join(repo, 'node_modules/typescript/bin/tsc'), '-p', 'engine/tsconfig.json'], {
      cwd: repo,
      stdio: 'pipe',
    });
  } catch (e) {
    const out = String((e as { stdout?: Buffer }).stdout ?? '');
    const mine = out.split('\n').filter((l) => /engine\/(cli|lang)\//.test(l));
    if (mine.length > 0) throw new Error(`the CLI does not compile:\n${mine.join('\n')}`);
  }
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-cli-check-'));
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: dir, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function write(name: string, text: string): string {
  const p = path.join(dir, name);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
  return name;
}

const GOOD = `mission Good {
  source Api { auth: none, base: "https://api.test" }
  store items: memory("items")
  action Load {
    get "/items"
    store response -> items { key: .id }
  }
  run Load
}
`;

describe('reqon check', () => {
  it('exits 0 on a clean mission and says so on stdout', () => {
    const f = write('good.vague', GOOD);
    const r = run('check', f);
    expect(r).toEqual({ code: 0, stdout: 'good.vague: no errors\n', stderr: '' });
  });

  it('exits 1 on errors, printing rendered diagnostics to stderr', () => {
    const f = write('bad.vague', GOOD.replace('-> items', '-> itmes'));
    const r = run('check', f);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('bad.vague: 1 error\n');
    expect(r.stderr).toBe(
      [
        'bad.vague:6:23: error[E3007]: Unknown store `itmes`',
        '   6 |     store response -> itmes { key: .id }',
        '     |                       ^^^^^',
        '   = help: did you mean `items`?',
        '',
        '',
      ].join('\n'),
    );
  });

  it('exits 0 when there are only warnings, and prints them', () => {
    const f = write('warn.vague', GOOD.replace('  run Load\n', '  run Load\n  run Load\n'));
    const r = run('check', f);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('warn.vague: no errors, 1 warning\n');
    expect(r.stderr).toContain('warning[E3004]: Several `run` lines: only the last one is used');
  });

  it('checks a folder mission, reporting into the action file', () => {
    write('folder/mission.vague', GOOD.replace('run Load', 'run Load then Extra'));
    write('folder/extra.vague', 'action Extra { apply Nope to response }\n');
    const r = run('check', 'folder');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${path.join('folder', 'extra.vague')}:1:22: error[E3013]: Unknown transform \`Nope\``);
    expect(r.stdout).toBe('folder: 1 error\n');
  });

  it('checks several paths; the worst outcome decides the exit code', () => {
    write('good2.vague', GOOD);
    write('bad2.vague', 'mission M {');
    const r = run('check', 'good2.vague', 'bad2.vague', '--db', 'ignored.db');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^good2\.vague: no errors\nbad2\.vague: \d+ errors?\n$/);
    expect(fs.existsSync(path.join(dir, 'ignored.db'))).toBe(false);
  });

  it('exits 2 for an unreadable path, naming it, and still checks the others', () => {
    write('good3.vague', GOOD);
    const r = run('check', 'nope.vague', 'good3.vague');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('reqon check: Cannot read mission "nope.vague": no such file or folder\n');
    expect(r.stdout).toBe('good3.vague: no errors\n');
  });

  it('checks each mission of a folder of missions, as `reqon worker` takes it (helper 75: the README\'s `reqon check missions/` exited 2)', () => {
    write('missions/a.vague', GOOD);
    write('missions/b.vague', GOOD.replace('store response -> items { key: .id }', 'store response -> itms { key: .id }'));
    write('missions/folder/mission.vague', GOOD);
    write('missions/notes.txt', 'not a mission');
    const r = run('check', 'missions');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(`${path.join('missions', 'a.vague')}: no errors\n${path.join('missions', 'b.vague')}: 1 error\n${path.join('missions', 'folder')}: no errors\n`);
    expect(r.stderr).toContain(`${path.join('missions', 'b.vague')}:6:23: error[`);
  });

  it('exits 2 for a folder with no mission file', () => {
    write('empty/readme.txt', 'nothing here');
    const r = run('check', 'empty');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('reqon check: empty: no missions in this folder (no .vague or .reqon file, no folder mission with a mission.vague)');
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('exits 2 on usage errors: no paths, unknown flag, unknown command, no command', () => {
    const noPaths = run('check');
    expect(noPaths.code).toBe(2);
    expect(noPaths.stderr).toContain("missing required argument 'paths'");
    const badFlag = run('check', '--bogus', 'x.vague');
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toContain("unknown option '--bogus'");
    const unknown = run('chek', 'x.vague');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'chek'");
    expect(unknown.stderr).toContain('check');
    const none = run();
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Usage: reqon');
  });

  it('documents --db on the command and exits 0 for --help', () => {
    const r = run('check', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--db <path>');
    expect(r.stdout).toContain('<paths...>');
    const top = run('--help');
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/check\b.*parse and statically check/);
  });

  it('checks the ten conformance missions clean', () => {
    const files = Array.from({ length: 10 }, (_, i) => path.join(repo, 'assets/conformance', `h${i + 1}.vague`));
    const r = run('check', ...files);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(10);
  });
});
