#!/usr/bin/env node
/**
 * Builds the CLI's one-file bundles from what tsc wrote to dist/ (run after tsc by `npm run build`
 * and `npm run build:start`): dist/engine/cli/program.js and every module and package it imports,
 * as one CommonJS file in dist/engine/cli-bundle/, then its stamp, then V8's code cache for it;
 * and the same for `reqon check` alone, with a stub in place of every other command.
 * Why, and the rule that keeps a stale bundle from running, are in engine/cli/cli-bundle.ts.
 *
 *   node engine/cli/build-bundle.mjs            # nothing to do when the stamp still holds
 *   node engine/cli/build-bundle.mjs --force
 *   node engine/cli/build-bundle.mjs --root DIR  # a compiled tree other than dist/ (DIR/engine/cli/…)
 *
 * Every input is read here (the plugin below), its size and mtime taken from the descriptor it is
 * read through, before the read: a module tsc rewrites meanwhile differs from its mark, so the
 * bundle made from the old text never runs. `import.meta.url` becomes the URL the module has in
 * dist/ (resolved against the bundle's own URL at run time), so paths a module finds from its own
 * place (package.json, the Electron main module, main.js) are those of the compiled module.
 *
 * The code cache is V8's own record of what `reqon --version`, `check`, `run` and `runs` compiled,
 * written by those commands run through the bundle in a temp dir. Each also tests the bundle: one
 * that fails through the bundle but not through the compiled modules removes the stamp (so the
 * bundle never runs) and fails the build; one that fails both ways is the engine's own failure,
 * and only warned about here.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The compiled tree: dist/ by default; `--root DIR` for another (a test's own build). */
const rootAt = process.argv.indexOf('--root');
const ROOT = rootAt > 0 ? path.resolve(process.argv[rootAt + 1] ?? '') : path.join(REPO, 'dist');
const ENTRY = path.join(ROOT, 'engine/cli/program.js');
const BIN = path.join(ROOT, 'engine/cli/main.js');
const BUNDLE_MODULE = path.join(ROOT, 'engine/cli/cli-bundle.js');

/** Loaded from node_modules at run time: a native addon, and packages only some commands load late. */
const EXTERNAL = ['better-sqlite3', 'pg', 'ws', 'undici', 'electron'];

function fail(message) {
  process.stderr.write(`build-bundle: ${message}\n`);
  process.exit(1);
}

for (const file of [ENTRY, BIN, BUNDLE_MODULE]) {
  if (!fs.existsSync(file)) fail(`${file} is missing; run tsc first (npm run build does both)`);
}
const { BUNDLE_DIR, BUNDLES, bundleFor, bundleState } = await import(pathToFileURL(BUNDLE_MODULE).href);

if (!process.argv.includes('--force') && BUNDLES.every((b) => bundleState(b).fresh && fs.existsSync(b.cache))) {
  process.stdout.write(`build-bundle: ${BUNDLE_DIR} is up to date\n`);
  process.exit(0);
}

/** A path as the stamp and the URLs in the bundle write it: relative to BUNDLE_DIR, with `/`. */
const relative = (file) => path.relative(BUNDLE_DIR, file).split(path.sep).join('/');

/** Reads every input, marking it first; rewrites `import.meta.url` to the module's URL in dist/. */
function markingLoader(marks) {
  return {
    name: 'reqon-marking-loader',
    setup(build) {
      build.onLoad({ filter: /\.(c|m)?js$|\.json$/ }, (args) => {
        const fd = fs.openSync(args.path, 'r');
        let text;
        try {
          const stat = fs.fstatSync(fd);
          marks.set(args.path, [relative(args.path), stat.size, stat.mtimeMs]);
          text = fs.readFileSync(fd, 'utf8');
        } finally {
          fs.closeSync(fd);
        }
        if (args.path.endsWith('.json')) return { contents: text, loader: 'json' };
        const url = JSON.stringify(relative(args.path).split('/').map(encodeURIComponent).join('/'));
        const contents = text.replace(/\bimport\.meta\.url\b/g, `new URL(${url}, __reqonBundleUrl).href`);
        if (/\bimport\.meta\b/.test(contents)) {
          return { errors: [{ text: `${path.relative(REPO, args.path)} uses import.meta other than import.meta.url, which the bundle cannot give it` }] };
        }
        return { contents, loader: 'js', resolveDir: path.dirname(args.path) };
      });
    },
  };
}

/**
 * In the check bundle, the import of any other command (program.ts's COMMANDS) is this stub: the
 * bin runs that bundle only for `reqon check …` (cli-bundle.ts, bundleFor), so it is never reached.
 */
function otherCommandsStubbed() {
  return {
    name: 'reqon-other-commands-stubbed',
    setup(build) {
      build.onResolve({ filter: /^\.\/commands\/[\w-]+\.js$/ }, (args) =>
        args.path === './commands/check.js' ? undefined : { path: args.path, namespace: 'reqon-stub' },
      );
      build.onLoad({ filter: /.*/, namespace: 'reqon-stub' }, (args) => ({
        contents: `throw new Error(${JSON.stringify(`the check bundle holds no ${args.path}; only \`reqon check\` runs from it`)});`,
        loader: 'js',
      }));
    },
  };
}

/** Bundles ENTRY into `bundle.file` and writes its stamp; its input marks. */
async function buildBundle(bundle) {
  const marks = new Map();
  const tmpBundle = `${bundle.file}.${process.pid}.tmp`;
  let result;
  try {
    result = await esbuild.build({
      entryPoints: [ENTRY],
      outfile: tmpBundle,
      absWorkingDir: ROOT,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      external: EXTERNAL,
      metafile: true,
      logLevel: 'silent',
      // The directive first, or the whole bundle runs sloppy (ES modules are strict; esbuild's own
      // "use strict" lands after a banner, where it is no directive).
      banner: { js: '"use strict";\nconst __reqonBundleUrl = require("node:url").pathToFileURL(__filename).href;' },
      plugins: [...(bundle.name === 'check' ? [otherCommandsStubbed()] : []), markingLoader(marks)],
    });
  } catch (e) {
    fs.rmSync(tmpBundle, { force: true });
    fail(`esbuild failed:\n${(e.errors ?? [e]).map((m) => `  ${m.text ?? m.message ?? m}`).join('\n')}`);
  }
  if (result.warnings.length > 0) {
    fs.rmSync(tmpBundle, { force: true });
    fail(`esbuild warned (a bundle that may not behave like the modules is not written):\n${result.warnings.map((w) => `  ${w.location?.file ?? ''}: ${w.text}`).join('\n')}`);
  }
  // The bundle runs from a code cache, where import() has no loader on Node 20: what stays outside
  // it must be imported through env/import-esm.ts, which the bundle's runner hands the real one.
  const dynamicExternals = Object.entries(result.metafile.inputs).flatMap(([file, input]) =>
    input.imports.filter((i) => i.kind === 'dynamic-import' && i.external).map((i) => `  ${file}: import('${i.path}')`),
  );
  if (dynamicExternals.length > 0) {
    fs.rmSync(tmpBundle, { force: true });
    fail(`import() of a module outside the bundle fails inside it; use importEsm (engine/env/import-esm.ts):\n${dynamicExternals.join('\n')}`);
  }
  const inputs = Object.keys(result.metafile.inputs)
    .filter((file) => !file.startsWith('reqon-stub:'))
    .map((file) => {
      const mark = marks.get(path.resolve(ROOT, file));
      if (!mark) fail(`esbuild read ${file} without the marking loader; its changes would not be noticed`);
      return mark;
    });

  // Pure ASCII, so the runner reads it as latin1 (0.4 ms) rather than decoding UTF-8 (27 ms for one
  // two-byte string of 1.3 MB, on every command). esbuild escapes what code holds; what is left is
  // in the comments it keeps, where an escape means the same (it would in a string or regex too).
  const bundleText = fs.readFileSync(tmpBundle, 'utf8');
  const asciiText = bundleText.replace(/[^\x00-\x7f]/gu, (c) =>
    Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
  if (asciiText !== bundleText) fs.writeFileSync(tmpBundle, asciiText);

  // Bundle, then the stamp naming it: a stamp never names a bundle not yet in place. The old cache
  // goes first (V8 would reject it anyway); the warm-up below writes the new one.
  fs.rmSync(bundle.cache, { force: true });
  fs.renameSync(tmpBundle, bundle.file);
  const bundleStat = fs.statSync(bundle.file);
  const stamp = { format: 1, bundle: [relative(bundle.file), bundleStat.size, bundleStat.mtimeMs], inputs };
  const tmpStamp = `${bundle.stamp}.${process.pid}.tmp`;
  fs.writeFileSync(tmpStamp, `${JSON.stringify(stamp)}\n`);
  fs.renameSync(tmpStamp, bundle.stamp);
  return inputs;
}

fs.mkdirSync(BUNDLE_DIR, { recursive: true });
const inputCounts = [];
for (const bundle of BUNDLES) inputCounts.push((await buildBundle(bundle)).length);

const MISSION = `mission StartUp {
  store items: sql("items")
  action Load {
    store { id: 1, name: "item" } -> items { key: .id }
  }
  run Load
}
`;

/**
 * Each command runs through its bundle (bundleFor) and extends the cache its predecessor there
 * wrote; what failed only there, or nothing.
 */
function warmUp() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-bundle-warm-'));
  try {
    fs.writeFileSync(path.join(dir, 'one.vague'), MISSION);
    const db = path.join(dir, 'warm.db');
    const commands = [
      { args: ['--version'], expect: /\(log format / },
      { args: ['check', 'one.vague'], expect: /no errors/ },
      { args: ['run', 'one.vague', '--db', db, '--quiet'], expect: /^run run_/ },
      { args: ['runs', '--db', db], expect: /run_/ },
    ];
    const tmpCache = path.join(dir, 'cache');
    const reqon = (args, bundle) => {
      const env = { ...process.env, REQON_CLI_BUNDLE: bundle ? '1' : '0', REQON_CLI_BUNDLE_WRITE_CACHE: tmpCache };
      delete env.REQON_DB;
      if (!bundle) delete env.REQON_CLI_BUNDLE_WRITE_CACHE;
      try {
        return { status: 0, output: execFileSync(process.execPath, [BIN, ...args], { cwd: dir, env, encoding: 'utf8', stdio: 'pipe' }) };
      } catch (e) {
        return { status: e.status, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
      }
    };
    for (const { args, expect } of commands) {
      const ok = (o) => o.status === 0 && expect.test(o.output);
      const bundle = bundleFor(args);
      const viaBundle = reqon(args, true);
      if (fs.existsSync(tmpCache)) fs.renameSync(tmpCache, bundle.cache);
      if (ok(viaBundle)) continue;
      // The modules fail the same way: the engine is broken (or mid-edit), not the bundle, which
      // stays — it is no worse than what it was made from. Otherwise the bundle must not run.
      const viaModules = reqon(args, false);
      const said = `\`reqon ${args.join(' ')}\` exits ${viaBundle.status} through the bundle, printing:\n${viaBundle.output}`;
      if (!ok(viaModules) && viaModules.status === viaBundle.status) {
        process.stderr.write(`build-bundle: warning: ${said}and the same through the compiled modules; the code cache lacks that command\n`);
        continue;
      }
      fs.rmSync(bundle.stamp, { force: true });
      // Not fail() here: process.exit would skip the finally that removes the temp dir.
      return `${said}but exits ${viaModules.status} through the compiled modules; the bundle is disabled (its stamp removed)`;
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
const warmUpFailure = warmUp();
if (warmUpFailure) fail(warmUpFailure);

const kb = (file) => (fs.existsSync(file) ? `${Math.round(fs.statSync(file).size / 1024)} KB` : 'none');
for (const [i, bundle] of BUNDLES.entries()) {
  process.stdout.write(`build-bundle: ${bundle.file} from ${inputCounts[i]} files (${kb(bundle.file)}, code cache ${kb(bundle.cache)})\n`);
}
