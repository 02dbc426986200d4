/**
 * The CLI's bundle (engine/cli/cli-bundle.ts) behaves as the compiled modules it was made from, on
 * the CLI contract: exit codes, stdout and stderr byte for byte (run ids and the temp dir aside) —
 * `--version`, usage errors, `check` of good, bad and missing files, `run`, and the read commands on
 * the same log. `REQON_CLI_BUNDLE=1` makes the bin fail rather than fall back, so each bundle result
 * is the bundle's; `=0` is the modules'. And a stale bundle never runs: after a compiled module
 * changes, the bin runs the changed module, and the builder brings the bundle back in step.
 *
 * The tree is this test's own copy of the engine built from the sources as they are (built-engine.ts)
 * with the repository's package.json above it, so the version printed is the real one.
 */
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_FORMAT } from '../../engine/log/events.js';
import { REPO, builtEngine } from '../support/built-engine.js';

const BUILDER = path.join(REPO, 'engine/cli/build-bundle.mjs');
const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string };

let dir: string;
let root: string;

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function builder(...args: string[]): Outcome {
  const r = spawnSync(process.execPath, [BUILDER, '--root', root, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function reqon(way: '0' | '1' | undefined, ...args: string[]): Outcome {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env['REQON_DB'];
  delete env['REQON_CLI_BUNDLE'];
  if (way) env['REQON_CLI_BUNDLE'] = way;
  const r = spawnSync(process.execPath, [path.join(root, 'engine/cli/main.js'), ...args], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * The bin through the bundle (REQON_CLI_BUNDLE=1), asynchronously, so this process can serve it;
 * stopped (SIGTERM) once its stdout satisfies `done` or it exits.
 */
function reqonAsync(args: string[], done: (stdout: string) => boolean): Promise<Outcome> {
  const env: NodeJS.ProcessEnv = { ...process.env, REQON_CLI_BUNDLE: '1' };
  delete env['REQON_DB'];
  const child = spawn(process.execPath, [path.join(root, 'engine/cli/main.js'), ...args], { cwd: dir, env });
  let stdout = '';
  let stderr = '';
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (done(stdout)) child.kill('SIGTERM');
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** What may differ between two runs of the same command: the new run's id. */
function normal(o: Outcome): Outcome {
  const ids = (s: string) => s.replace(/run_[0-9a-z]{20}/g, 'run_ID');
  return { code: o.code, stdout: ids(o.stdout), stderr: ids(o.stderr) };
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-cli-bundle-'));
  root = path.join(dir, 'tree', 'out');
  fs.cpSync(builtEngine().root, root, { recursive: true, verbatimSymlinks: true });
  fs.copyFileSync(path.join(REPO, 'package.json'), path.join(dir, 'tree', 'package.json'));
  // The demo mission and API (studio --demo), found beside package.json as in the repository.
  fs.symlinkSync(path.join(REPO, 'assets'), path.join(dir, 'tree', 'assets'));
  const built = builder('--force');
  if (built.code !== 0) throw new Error(`the bundle did not build:\n${built.stdout}${built.stderr}`);
  fs.writeFileSync(
    path.join(dir, 'good.vague'),
    'mission Good {\n  store items: sql("items")\n  action Load {\n    store { id: 1, name: "a" } -> items { key: .id }\n  }\n  run Load\n}\n',
  );
  fs.writeFileSync(path.join(dir, 'bad.vague'), 'mission Bad {\n  action A {\n    store { id: 1 } -> nowhere\n  \n  run A\n}\n');
}, 300_000);

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the CLI bundle', () => {
  it('was built with its code cache, and its builder has nothing to do while it holds', () => {
    expect(fs.existsSync(path.join(root, 'engine/cli-bundle/reqon.cjs.v8cache'))).toBe(true);
    expect(fs.existsSync(path.join(root, 'engine/cli-bundle/reqon-check.cjs.v8cache'))).toBe(true);
    const again = builder();
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/is up to date/);
  });

  it('`reqon check` runs from a bundle of its own, without the other commands, which goes stale on its own inputs', () => {
    const full = fs.statSync(path.join(root, 'engine/cli-bundle/reqon.cjs')).size;
    const check = fs.statSync(path.join(root, 'engine/cli-bundle/reqon-check.cjs')).size;
    expect(check).toBeLessThan(full / 2);
    // A command module only the full bundle holds changes: that bundle is stale, check's is not.
    const runModule = path.join(root, 'engine/cli/commands/run.js');
    const runText = fs.readFileSync(runModule, 'utf8');
    const lexer = path.join(root, 'engine/lang/lexer.js');
    const lexerText = fs.readFileSync(lexer, 'utf8');
    try {
      fs.writeFileSync(runModule, `${runText}\n// edited\n`);
      expect(reqon('1', '--version').stderr).toMatch(/the CLI bundle cannot run: \.\.\/cli\/commands\/run\.js changed since the bundle was built/);
      const checked = reqon('1', 'check', 'good.vague');
      expect(checked, checked.stderr).toEqual({ code: 0, stdout: 'good.vague: no errors\n', stderr: '' });
      // And a front-end module changing makes the check bundle stale too: it never runs stale.
      fs.writeFileSync(lexer, `${lexerText}\n// edited\n`);
      expect(reqon('1', 'check', 'good.vague').stderr).toMatch(/\.\.\/lang\/lexer\.js changed since the bundle was built/);
      expect(reqon(undefined, 'check', 'good.vague').code).toBe(0);
    } finally {
      fs.writeFileSync(runModule, runText);
      fs.writeFileSync(lexer, lexerText);
      const rebuilt = builder();
      expect(rebuilt.code, rebuilt.stderr).toBe(0);
    }
    expect(reqon('1', 'check', 'good.vague').code).toBe(0);
    expect(reqon('1', '--version').code).toBe(0);
  });

  it('is pure ASCII, which its runner reads as latin1 (the comments esbuild keeps have their other characters escaped)', () => {
    for (const file of ['reqon.cjs', 'reqon-check.cjs']) {
      const bytes = fs.readFileSync(path.join(root, 'engine/cli-bundle', file));
      expect(bytes.findIndex((b) => b > 0x7f)).toBe(-1);
      // The modules it was made from do hold such characters (messages, comments): escaped, not lost.
      expect(bytes.toString('latin1')).toMatch(/\\u2026/);
    }
  });

  it('is strict code, as the ES modules it was made from are', () => {
    // A "use strict" anywhere but first is no directive: frozen values would be written to silently.
    for (const file of ['reqon.cjs', 'reqon-check.cjs']) {
      expect(fs.readFileSync(path.join(root, 'engine/cli-bundle', file), 'utf8')).toMatch(/^"use strict";\n/);
    }
  });

  const cases: Array<{ what: string; args: string[]; code: number }> = [
    { what: '--version', args: ['--version'], code: 0 },
    { what: 'no arguments (usage)', args: [], code: 2 },
    { what: 'an unknown command', args: ['nope'], code: 2 },
    { what: 'an unknown option', args: ['check', '--nope', 'good.vague'], code: 2 },
    { what: 'help for a command', args: ['run', '--help'], code: 0 },
    { what: 'the help command', args: ['help'], code: 0 },
    { what: 'the help command for a command', args: ['help', 'run'], code: 0 },
    { what: 'the help command for an unknown command', args: ['help', 'nope'], code: 2 },
    { what: 'help for check (its own bundle)', args: ['check', '--help'], code: 0 },
    { what: 'check of a clean file', args: ['check', 'good.vague'], code: 0 },
    { what: 'check of a file with errors', args: ['check', 'bad.vague'], code: 1 },
    { what: 'check of a missing file', args: ['check', 'missing.vague'], code: 2 },
    { what: 'run of a mission that does not check', args: ['run', 'bad.vague', '--db', 'bad.db'], code: 2 },
    { what: 'show of a run the log does not hold', args: ['show', 'run_nope', '--db', 'empty.db'], code: 2 },
  ];
  for (const c of cases) {
    it(`${c.what}: the same exit code (${c.code}), stdout and stderr`, () => {
      const bundle = reqon('1', ...c.args);
      const modules = reqon('0', ...c.args);
      expect(bundle.code).toBe(c.code);
      expect(bundle).toEqual(modules);
    });
  }

  it('--version names the package version and the log format', () => {
    expect(reqon('1', '--version').stdout).toBe(`reqon ${pkg.version} (log format ${LOG_FORMAT})\n`);
  });

  it('check of a file with errors prints file:line:col, the code and a caret', () => {
    expect(reqon('1', 'check', 'bad.vague').stderr).toMatch(/^bad\.vague:\d+:\d+: error\[E\d{4}\]: .*\n.*\n\s+\|\s+\^/m);
  });

  it('run, then runs, show, events and store on that log: the same output either way', () => {
    const bundleRun = reqon('1', 'run', 'good.vague', '--db', 'bundle.db');
    const modulesRun = reqon('0', 'run', 'good.vague', '--db', 'modules.db');
    expect(bundleRun.code).toBe(0);
    expect(normal(bundleRun)).toEqual(normal(modulesRun));
    const runId = /^run (run_\w+)$/m.exec(bundleRun.stdout)?.[1];
    expect(runId).toBeDefined();
    for (const args of [['runs'], ['show', runId!], ['events', runId!, '--json'], ['store', runId!, 'items']]) {
      const viaBundle = reqon('1', ...args, '--db', 'bundle.db');
      expect(viaBundle.code, `${args.join(' ')}: ${viaBundle.stderr}`).toBe(0);
      expect(viaBundle).toEqual(reqon('0', ...args, '--db', 'bundle.db'));
    }
  });

  // What stays outside the bundle is imported at run time (env/import-esm.ts): undici for the first
  // request, the demo API asset for `studio --demo`. From a code-cached vm.Script, a plain import()
  // of them failed on Node 20 ("A dynamic import callback was not specified") — every GET of every run.
  it('a run that makes HTTP requests, and studio --demo, import what stays outside the bundle', async () => {
    const server = http.createServer((_req, res) => res.setHeader('content-type', 'application/json').end('[{"id":1},{"id":2}]'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as { port: number }).port;
      fs.writeFileSync(
        path.join(dir, 'fetch.vague'),
        `mission Fetch {\n  source Api { auth: none, base: "http://127.0.0.1:${port}" }\n  store items: memory("items")\n  action Get {\n    get "/items"\n    for item in response {\n      store item -> items { key: .id }\n    }\n  }\n  run Get\n}\n`,
      );
      const run = await reqonAsync(['run', 'fetch.vague', '--db', 'fetch.db'], (out) => /completed|failed/.test(out));
      expect(run.stdout, run.stderr).toMatch(/completed: 1 action\(s\) run \(Get\)/);
      expect(run.stderr).not.toMatch(/ExperimentalWarning|dynamic import/);
    } finally {
      server.close();
    }
    const studio = await reqonAsync(['studio', '--demo', '--no-open', '--db', 'studio.db'], (out) => /demo API http:\/\/127\.0\.0\.1:\d+/.test(out));
    expect(studio.stdout, studio.stderr).toMatch(/demo API http:\/\/127\.0\.0\.1:\d+/);
  }, 120_000);

  it('never runs stale: a changed compiled module runs as changed, until the builder rebuilds the bundle', () => {
    const version = path.join(root, 'engine/cli/version.js');
    const text = fs.readFileSync(version, 'utf8');
    expect(text).toContain('`reqon ${version}');
    fs.writeFileSync(version, text.replace('`reqon ${version}', '`reqon-edited ${version}'));

    const forced = reqon('1', '--version');
    expect(forced.code).toBe(2);
    expect(forced.stderr).toMatch(/REQON_CLI_BUNDLE=1 but the CLI bundle cannot run: \.\.\/cli\/version\.js changed since the bundle was built/);
    expect(reqon(undefined, '--version').stdout).toBe(`reqon-edited ${pkg.version} (log format ${LOG_FORMAT})\n`);

    const rebuilt = builder();
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stdout).not.toMatch(/up to date/);
    expect(reqon('1', '--version').stdout).toBe(`reqon-edited ${pkg.version} (log format ${LOG_FORMAT})\n`);
  });
});
