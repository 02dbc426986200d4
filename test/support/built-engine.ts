/**
 * The engine compiled for tests that spawn real processes: the CLI (`engine/cli/main.ts` and all
 * it imports) plus the child-process fixtures of the suites, built once per source state into the
 * OS temp dir and shared by every test file (they run in parallel forks).
 *
 * Why not dist/: a test must run the sources as they are, whether or not `npm run build` ran since
 * the last edit, and a process spawned while someone rebuilds dist/ could load half a file. The
 * build is keyed by a hash of the sources, made under a `mkdir` lock, written to a private folder
 * and renamed into place whole; builds of older sources are removed once an hour old. The output
 * has `"type": "module"` and a node_modules link, so it resolves packages like `dist/` does.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const REPO = path.resolve(new URL('../..', import.meta.url).pathname);
const PREFIX = 'reqon-test-build-';

/** Child-process entry points of the suites, compiled with the CLI. */
function fixtureEntries(): string[] {
  return [
    path.join(REPO, 'test/durability/support/lease-holder.ts'),
    path.join(REPO, 'test/log/fixtures/log-child.ts'),
    ...tsFiles(path.join(REPO, 'test/time/fixtures'), false),
  ];
}

/** How a run of the built CLI ended and what it printed. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface EngineBuild {
  /** Root of the compiled tree (mirrors the repository's layout). */
  root: string;
  /** The compiled `reqon` entry point. */
  cli: string;
  /** The compiled counterpart of a repository-relative `.ts` file, e.g. `test/log/fixtures/log-child.ts`. */
  file(repoRelativeTs: string): string;
}

export function builtEngine(): EngineBuild {
  const entries = [path.join(REPO, 'engine/cli/main.ts'), ...fixtureEntries()];
  const dir = path.join(os.tmpdir(), `${PREFIX}${sourceHash(entries)}`);
  const root = path.join(dir, 'out');
  const build: EngineBuild = {
    root,
    cli: path.join(root, 'engine/cli/main.js'),
    file: (rel) => path.join(root, rel.replace(/\.ts$/, '.js')),
  };
  const done = path.join(dir, '.done');
  const lock = `${dir}.lock`;
  const deadline = Date.now() + 180_000;
  while (!fs.existsSync(done)) {
    let mine = false;
    try {
      fs.mkdirSync(lock);
      mine = true;
    } catch {
      // Another test file builds this very state: wait for it; a lock this old lost its builder.
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 150_000) fs.rmSync(lock, { recursive: true, force: true });
    }
    if (mine) {
      try {
        if (!fs.existsSync(done)) compile(dir, entries);
      } finally {
        fs.rmSync(lock, { recursive: true, force: true });
      }
      removeOldBuilds(dir);
      break;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for another test file to build the engine into ${dir}`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
  }
  return build;
}

function compile(dir: string, entries: string[]): void {
  const tmp = fs.mkdtempSync(`${dir}.building-`);
  try {
    const out = path.join(tmp, 'out');
    fs.writeFileSync(
      path.join(tmp, 'tsconfig.json'),
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
        files: entries,
      }),
    );
    try {
      execFileSync(process.execPath, [path.join(REPO, 'node_modules/typescript/bin/tsc'), '-p', path.join(tmp, 'tsconfig.json')], {
        cwd: REPO,
        stdio: 'pipe',
      });
    } catch (error) {
      // tsc emits despite type errors elsewhere in the graph; what the tests run must exist.
      if (!fs.existsSync(path.join(out, 'engine/cli/main.js'))) {
        throw new Error(`the engine did not compile:\n${String((error as { stdout?: Buffer }).stdout ?? error)}`);
      }
    }
    fs.writeFileSync(path.join(out, 'package.json'), '{"type":"module"}\n');
    fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(out, 'node_modules'), 'dir');
    fs.writeFileSync(path.join(tmp, '.done'), '');
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Builds of other sources, once nobody can still be using them (an hour old). */
function removeOldBuilds(current: string): void {
  for (const entry of fs.readdirSync(os.tmpdir())) {
    const full = path.join(os.tmpdir(), entry);
    if (!entry.startsWith(PREFIX) || full === current || entry.endsWith('.lock')) continue;
    const stat = fs.statSync(full, { throwIfNoEntry: false });
    if (stat && Date.now() - stat.mtimeMs > 3_600_000) fs.rmSync(full, { recursive: true, force: true });
  }
}

function tsFiles(dir: string, recursive = true): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && recursive) out.push(...tsFiles(full));
    else if (entry.isFile() && entry.name.endsWith('.ts')) out.push(full);
  }
  return out.sort();
}

function sourceHash(entries: string[]): string {
  const h = createHash('sha256');
  for (const file of [...tsFiles(path.join(REPO, 'engine')), ...entries, path.join(REPO, 'tsconfig.json')]) {
    h.update(file).update('\0').update(fs.readFileSync(file)).update('\0');
  }
  return h.digest('hex').slice(0, 16);
}
