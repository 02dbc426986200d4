#!/usr/bin/env node
/**
 * `npm start`'s renderer step: build renderer/dist only when something it was built from is newer.
 *
 * The Vite build records the files it bundled (renderer/dist/.build-inputs.json, written by the
 * plugin in vite.config.ts); the build is stale when that record or index.html is missing, when
 * any recorded input, the Vite config, index.html or package-lock.json is newer than the record,
 * or when a file under renderer/src is (a new file may be imported by a changed one — that one is
 * newer too — but a stray check costs nothing). Otherwise it says so and exits: a second
 * `npm start` with nothing changed spends no time here. The TypeScript half of `npm start` is
 * `tsc -b`, which does the same with the tsbuildinfo files in dist/.tsbuildinfo.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const renderer = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(renderer);
const record = path.join(renderer, 'dist', '.build-inputs.json');

function mtime(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return null;
  }
}

function newestUnder(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(full) : (mtime(full) ?? 0));
  }
  return newest;
}

/** Why the build is stale, or null when it is up to date. */
function staleReason() {
  const stamp = mtime(record);
  if (stamp === null || mtime(path.join(renderer, 'dist', 'index.html')) === null) return 'no previous build';
  let inputs;
  try {
    inputs = JSON.parse(fs.readFileSync(record, 'utf8'));
  } catch {
    return 'the previous build left no readable input list';
  }
  const always = ['renderer/vite.config.ts', 'renderer/index.html', 'package-lock.json'];
  for (const file of [...always, ...inputs]) {
    const at = mtime(path.resolve(root, file));
    if (at === null) return `${file} is gone`;
    if (at > stamp) return `${file} changed`;
  }
  if (newestUnder(path.join(renderer, 'src')) > stamp) return 'a file under renderer/src changed';
  return null;
}

const reason = staleReason();
if (reason === null) {
  process.stdout.write('renderer/dist is up to date\n');
} else {
  process.stdout.write(`building renderer/dist (${reason})\n`);
  const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  const result = spawnSync(process.execPath, [vite, 'build', '--config', path.join(renderer, 'vite.config.ts')], { stdio: 'inherit', cwd: root });
  process.exit(result.status ?? 1);
}
