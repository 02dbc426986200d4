/**
 * The CLI's one-file bundles, and the rule that keeps them from ever running stale.
 *
 * Why a bundle: Node 20's ESM loader spends most of a short command's start-up resolving, reading,
 * compiling and linking the ~130 modules `reqon run` needs, one by one. `npm run build` (after tsc)
 * runs `engine/cli/build-bundle.mjs`, which bundles program.js and what it imports into one CommonJS
 * file in `dist/engine/cli-bundle/` and records V8's code cache for it (Node 20 has no module
 * compile cache; a `vm.Script` takes one). Measured by `npm run bench`'s "start-up" figures. It
 * makes two: the full one, and one for `reqon check` alone (CHECK_BUNDLE), since reading and
 * deserialising the full one is most of what a check of a small file costs beyond Node's own start.
 *
 * Why it can never be stale: a bundle is a copy of modules tsc writes, and tsc can rewrite them
 * without the bundle step (`tsc -b`, `tsc -p test/bench`, an editor's watcher). So the builder
 * writes each bundle's stamp last, listing every input file of it (the compiled modules and the packages
 * inlined) and the bundle itself with its size and mtime; the bin runs the bundle only when every
 * one of them is still exactly so (~150 `stat`s, about a millisecond), and otherwise imports the
 * compiled modules as tsc left them. The code cache needs no such check: V8 rejects a cache that
 * was not made from this very source by this very V8, and then compiles as usual.
 *
 * `REQON_CLI_BUNDLE=0` always runs the compiled modules; `REQON_CLI_BUNDLE=1` must run the bundle
 * and fails (exit 2) saying why it cannot — how the bench and the contract test know what they
 * measured. `REQON_CLI_BUNDLE_WRITE_CACHE=FILE` is the builder's: at exit, write the code cache
 * of what this process compiled to FILE.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { IMPORT_HOOK } from '../env/import-esm.js';

/** Where the builder writes: `dist/engine/cli-bundle/`, beside `dist/engine/cli/`. */
export const BUNDLE_DIR = fileURLToPath(new URL('../cli-bundle/', import.meta.url));

/** One bundle: its code, V8's code cache for it, and the stamp that vouches for it. */
export interface Bundle {
  name: 'full' | 'check';
  file: string;
  cache: string;
  stamp: string;
}

function bundleNamed(name: Bundle['name'], base: string): Bundle {
  const file = path.join(BUNDLE_DIR, base);
  return { name, file, cache: `${file}.v8cache`, stamp: path.join(BUNDLE_DIR, name === 'full' ? 'stamp.json' : `stamp-${name}.json`) };
}

/** Every command. */
export const FULL_BUNDLE = bundleNamed('full', 'reqon.cjs');
/**
 * `reqon check` alone: the program with the language front end and no other command (the
 * builder puts a stub in their place), a quarter of the full bundle, so the command people run
 * most often in an editor loop starts without reading and deserialising the engine it never uses.
 */
export const CHECK_BUNDLE = bundleNamed('check', 'reqon-check.cjs');
export const BUNDLES: readonly Bundle[] = [FULL_BUNDLE, CHECK_BUNDLE];

/**
 * The bundle for these arguments: the check bundle when the command is `check` as its first
 * word (`reqon check FILE…`), the full one for anything else, `reqon --db X check` included.
 */
export function bundleFor(args: readonly string[]): Bundle {
  return args[0] === 'check' ? CHECK_BUNDLE : FULL_BUNDLE;
}

/** A file as the builder saw it: path relative to BUNDLE_DIR, size in bytes, mtime in ms. */
export type FileMark = [file: string, size: number, mtimeMs: number];

export interface BundleStamp {
  format: 1;
  bundle: FileMark;
  inputs: FileMark[];
}

export type BundleState = { fresh: true } | { fresh: false; reason: string };

/** The first way in which a file differs from its mark, or undefined when it matches. */
function markDiffers([file, size, mtimeMs]: FileMark): string | undefined {
  const stat = statSync(path.join(BUNDLE_DIR, file), { throwIfNoEntry: false });
  if (!stat) return `${file} is gone`;
  if (stat.size !== size || stat.mtimeMs !== mtimeMs) return `${file} changed since the bundle was built`;
  return undefined;
}

/** Whether the bundle was made from the files now on disk. */
export function bundleState(bundle: Bundle = FULL_BUNDLE): BundleState {
  let stamp: BundleStamp;
  try {
    stamp = JSON.parse(readFileSync(bundle.stamp, 'utf8')) as BundleStamp;
  } catch {
    return { fresh: false, reason: `no bundle stamp at ${bundle.stamp}` };
  }
  if (stamp.format !== 1 || !Array.isArray(stamp.inputs) || !Array.isArray(stamp.bundle)) {
    return { fresh: false, reason: `${bundle.stamp} is not a stamp this engine writes` };
  }
  for (const mark of [stamp.bundle, ...stamp.inputs]) {
    const differs = markDiffers(mark);
    if (differs) return { fresh: false, reason: differs };
  }
  return { fresh: true };
}

/** CommonJS's own wrapper, spelt out so that the code cache is made and used for the same text. */
function wrap(source: string): string {
  return `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
}

/** Runs the bundle; false when it could not be read or compiled (nothing of it has run then). */
function runBundle({ file, cache }: Bundle): boolean {
  let script: vm.Script;
  try {
    // The builder writes it in ASCII (build-bundle.mjs), and the stamp vouched for this very file:
    // latin1 reads it as UTF-8 would, without the decoding.
    const source = readFileSync(file, 'latin1');
    let cachedData: Buffer | undefined;
    try {
      cachedData = readFileSync(cache);
    } catch {
      // No cache (a build that could not make one): V8 compiles the source, as without a bundle.
    }
    script = new vm.Script(wrap(source), {
      filename: file,
      ...(cachedData ? { cachedData } : {}),
    });
  } catch {
    // Replaced by a build between the stamp check and this read: the compiled modules will do.
    return false;
  }
  const cacheOut = process.env['REQON_CLI_BUNDLE_WRITE_CACHE'];
  if (cacheOut) process.once('exit', () => writeFileSync(cacheOut, script.createCachedData()));
  // What stays outside the bundle is imported through this module's own import() (env/import-esm.ts).
  (globalThis as Record<symbol, unknown>)[IMPORT_HOOK] = (specifier: string) => import(specifier);
  const init = script.runInThisContext() as (...args: unknown[]) => void;
  const module = { exports: {} };
  init.call(module.exports, module.exports, createRequire(file), module, file, BUNDLE_DIR);
  return true;
}

/**
 * Runs the CLI from the bundle for its arguments when it may, and says whether it did; when it
 * did not, the caller imports the compiled program. Under REQON_CLI_BUNDLE=1 that bundle not
 * running is an error (so what the bench measures as `check` from the bundle is the check bundle).
 */
export function startBundle(args: readonly string[] = process.argv.slice(2)): boolean {
  const wanted = process.env['REQON_CLI_BUNDLE'];
  if (wanted === '0') return false;
  const bundle = bundleFor(args);
  const state = bundleState(bundle);
  if (state.fresh && runBundle(bundle)) return true;
  if (wanted === '1') {
    const reason = state.fresh ? `${bundle.file} could not be read or compiled` : state.reason;
    process.stderr.write(`reqon: REQON_CLI_BUNDLE=1 but the CLI bundle cannot run: ${reason}; \`npm run build\` rebuilds it\n`);
    process.exitCode = 2;
    return true;
  }
  return false;
}
