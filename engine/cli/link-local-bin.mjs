// Run by `npm run prepare` (so by `npm ci` on a clone): links node_modules/.bin/reqon to the
// compiled CLI. npm does not link a package's own bins into its own node_modules, so without this
// `npx reqon` falls back to reading the whole dependency tree to find the bin (about a second
// slower on every call). Idempotent; a no-op when installed as a dependency elsewhere.
import { existsSync, lstatSync, mkdirSync, symlinkSync, unlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const binDir = join(root, 'node_modules', '.bin');
const target = join(root, 'dist', 'engine', 'cli', 'main.js');
const link = join(binDir, 'reqon');
if (existsSync(join(root, 'node_modules')) && existsSync(target)) {
  mkdirSync(binDir, { recursive: true });
  try {
    if (lstatSync(link)) unlinkSync(link);
  } catch {
    // no link yet
  }
  symlinkSync(relative(dirname(link), target), link);
}
