/**
 * Compiles the engine (CLI included) and this suite's child fixtures into a temp dir, once per
 * source state, for the tests that spawn real processes.
 *
 * Why not dist/: other engineers build into dist/ at the same time, and a process spawned while
 * tsc rewrites a file there could load half of it. The build is keyed by a hash of the sources and
 * shared by the suite's test files (they run in parallel forks) under a mkdir lock; a build for an
 * older source state is removed when a new one is made.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const REPO = path.resolve(new URL('../../..', import.meta.url).pathname);
const PREFIX = 'reqon-time-cli-';

export interface CliBuild {
  /** Absolute path of the compiled `reqon` entry point. */
  cli: string;
  /** Absolute path of a compiled fixture, e.g. `fixture('resume-racer')`. */
  fixture(name: string): string;
}

function sources(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) out.push(full);
    }
  };
  walk(path.join(REPO, 'engine'));
  walk(path.join(REPO, 'test/time/fixtures'));
  return out.sort();
}

export function buildCli(): CliBuild {
  const files = sources();
  const hash = createHash('sha256');
  for (const f of files) hash.update(f).update('\u0000').update(fs.readFileSync(f)).update('\u0000');
  const key = hash.digest('hex').slice(0, 16);
  const dir = path.join(os.tmpdir(), `${PREFIX}${key}`);
  const out = path.join(dir, 'out');
  const done = path.join(dir, '.done');
  const lock = `${dir}.lock`;
  const result: CliBuild = {
    cli: path.join(out, 'engine/cli/main.js'),
    fixture: (name) => path.join(out, 'test/time/fixtures', `${name}.js`),
  };
  const deadline = Date.now() + 180_000;
  while (!fs.existsSync(done)) {
    try {
      fs.mkdirSync(lock);
    } catch {
      // Another test file is building this very state: wait for it (or for its lock to go stale).
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 150_000) fs.rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for the CLI build in ${dir}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
      continue;
    }
    try {
      if (!fs.existsSync(done)) compile(dir, out);
      fs.writeFileSync(done, '');
      removeOlderBuilds(dir);
    } finally {
      fs.rmSync(lock, { recursive: true, force: true });
    }
  }
  return result;
}

function compile(dir: string, out: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const tsconfig = path.join(dir, 'tsconfig.json');
  fs.writeFileSync(
    tsconfig,
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
      include: [path.join(REPO, 'engine/**/*.ts'), path.join(REPO, 'test/time/fixtures/*.ts')],
    }),
  );
  try {
    execFileSync(process.execPath, [path.join(REPO, 'node_modules/typescript/bin/tsc'), '-p', tsconfig], { cwd: REPO, stdio: 'pipe' });
  } catch (e) {
    // tsc still emits when files of other areas have type errors; ours must exist.
    if (!fs.existsSync(path.join(out, 'engine/cli/main.js'))) throw new Error(`the CLI did not compile:\n${String((e as { stdout?: Buffer }).stdout ?? e)}`);
  }
  fs.writeFileSync(path.join(out, 'package.json'), '{"type":"module"}\n');
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(out, 'node_modules'), 'dir');
}

function removeOlderBuilds(keep: string): void {
  for (const name of fs.readdirSync(os.tmpdir())) {
    const full = path.join(os.tmpdir(), name);
    if (!name.startsWith(PREFIX) || full === keep || name.endsWith('.lock') || fs.existsSync(`${full}.lock`)) continue;
    fs.rmSync(full, { recursive: true, force: true });
  }
}
