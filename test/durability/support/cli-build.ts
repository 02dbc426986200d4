/**
 * The built CLI for the durability tests: `engine/cli/main.ts` and everything it imports (plus the
 * lease-holder child), compiled with the engine's compiler options into a private directory, and
 * a runner for it.
 *
 * Why not dist/ directly: other helpers (and other test files) rebuild dist/ while these tests
 * spawn a hundred CLI processes, and a module read half-written would fail a case for no reason
 * of ours. The build is keyed by a hash of the engine's sources, made once and shared by every
 * durability test file (and by later runs while the sources are unchanged); builds for other
 * sources are removed once they are an hour old. The output has `"type": "module"` and a
 * node_modules link so it resolves better-sqlite3 and commander from the repository, exactly like
 * `node dist/engine/cli/main.js`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const REPO = path.resolve(new URL('../../..', import.meta.url).pathname);
const PREFIX = 'reqon-durability-cli-';

/** Absolute path of the compiled lease-holder child (support/lease-holder.ts), built with the CLI. */
export function builtLeaseHolder(): string {
  return path.join(path.dirname(builtCli()), '..', '..', 'test', 'durability', 'support', 'lease-holder.js');
}

/** Absolute path of the compiled `main.js`; builds it if the engine's sources changed. */
export function builtCli(): string {
  const hash = sourceHash();
  const dir = path.join(os.tmpdir(), `${PREFIX}${hash}`);
  const main = path.join(dir, 'out', 'engine', 'cli', 'main.js');
  if (fs.existsSync(main)) return main;
  // Another test file building the same sources: wait for it rather than compile twice.
  const lock = `${dir}.lock`;
  let locked = false;
  try {
    fs.mkdirSync(lock);
    locked = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const deadline = Date.now() + 180_000;
    while (!fs.existsSync(main) && fs.existsSync(lock) && Date.now() < deadline) execFileSync('sleep', ['0.2']);
    if (fs.existsSync(main)) return main;
  }
  try {
    // Built in a private directory and renamed into place whole: nobody ever runs half a build,
    // and if two processes build at once, the second rename fails and the first build is used.
    const tmp = fs.mkdtempSync(`${dir}.building-`);
    try {
      build(tmp);
      try {
        fs.renameSync(tmp, dir);
      } catch (error) {
        if (!fs.existsSync(main)) throw error;
      }
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  } finally {
    if (locked) fs.rmSync(lock, { recursive: true, force: true });
  }
  removeOldBuilds(dir);
  return main;
}

/** Builds for other sources, once nobody can still be using them (an hour old). */
function removeOldBuilds(current: string): void {
  for (const entry of fs.readdirSync(os.tmpdir())) {
    const full = path.join(os.tmpdir(), entry);
    if (!entry.startsWith(PREFIX) || full === current) continue;
    const stat = fs.statSync(full, { throwIfNoEntry: false });
    if (stat && Date.now() - stat.mtimeMs > 3_600_000) fs.rmSync(full, { recursive: true, force: true });
  }
}

function build(dir: string): void {
  const out = path.join(dir, 'out');
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: path.join(REPO, 'tsconfig.json'),
      compilerOptions: {
        rootDir: REPO,
        outDir: out,
        lib: ['ES2023'],
        types: ['node'],
        typeRoots: [path.join(REPO, 'node_modules/@types')],
        sourceMap: false,
      },
      files: [path.join(REPO, 'engine/cli/main.ts'), path.join(REPO, 'test/durability/support/lease-holder.ts')],
    }),
  );
  try {
    execFileSync(process.execPath, [path.join(REPO, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'tsconfig.json')], {
      cwd: REPO,
      stdio: 'pipe',
    });
  } catch (error) {
    // tsc still emits when a file elsewhere in the graph has a type error (another helper mid-edit);
    // the run/resume/verify paths these tests use must have compiled, which the tests then prove.
    if (!fs.existsSync(path.join(out, 'engine', 'cli', 'main.js'))) {
      throw new Error(`the CLI did not compile:\n${String((error as { stdout?: Buffer }).stdout ?? error)}`);
    }
  }
  fs.writeFileSync(path.join(out, 'package.json'), '{"type":"module"}\n');
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(out, 'node_modules'), 'dir');
}

function sourceHash(): string {
  const h = createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) h.update(full).update('\0').update(fs.readFileSync(full)).update('\0');
    }
  };
  walk(path.join(REPO, 'engine'));
  h.update(fs.readFileSync(path.join(REPO, 'test/durability/support/lease-holder.ts')));
  h.update(fs.readFileSync(path.join(REPO, 'tsconfig.json')));
  return h.digest('hex').slice(0, 16);
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Run under this wrapper, e.g. ['strace', '-f', …]; the node command line is appended. */
  wrapper?: string[];
}

/** Runs `node <built main.js> …args` and collects its output. */
export function runCli(main: string, args: string[], opts: CliOptions): Promise<CliResult> {
  const command = [...(opts.wrapper ?? []), process.execPath, main, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), opts.timeoutMs ?? 60_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** `run <ID>` is the first line of `reqon run`; the id of the run it started. */
export function runIdOf(result: CliResult): string {
  const match = /^run (\S+)$/m.exec(result.stdout);
  if (!match) throw new Error(`no "run ID" line in the output of reqon run:\n${result.stdout}\n${result.stderr}`);
  return match[1]!;
}

/** One line for assertion messages: how a CLI process ended and what it said. */
export function describeResult(result: CliResult): string {
  return `code ${result.code}, signal ${result.signal}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}
