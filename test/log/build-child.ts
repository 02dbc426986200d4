/**
 * Compiles the log and the child fixture into a fresh temp dir for tests that spawn processes.
 *
 * Why not dist/: other helpers build into dist/ at the same time, and a type error anywhere in the
 * engine would fail the whole `tsc -p engine`. Compiling only the fixture's import graph is fast
 * and independent. The output gets `"type": "module"` and a node_modules link so that the
 * compiled files resolve better-sqlite3 from the repository.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const REPO = path.resolve(new URL('../..', import.meta.url).pathname);

export interface ChildBuild {
  dir: string;
  /** Absolute path of the compiled fixture script. */
  script: string;
  cleanup(): void;
}

export function buildChild(): ChildBuild {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-log-child-'));
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
      files: [path.join(REPO, 'test/log/fixtures/log-child.ts')],
    }),
  );
  execFileSync(process.execPath, [path.join(REPO, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'tsconfig.json')], {
    cwd: REPO,
    stdio: 'pipe',
  });
  fs.writeFileSync(path.join(out, 'package.json'), '{"type":"module"}\n');
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(out, 'node_modules'), 'dir');
  return {
    dir,
    script: path.join(out, 'test/log/fixtures/log-child.js'),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
