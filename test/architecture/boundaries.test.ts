/**
 * The dependency direction of ARCHITECTURE.md, enforced: engine/ imports nothing of ours above it
 * (no electron/, renderer/, no `electron` package); renderer/ imports from engine/ only types, and
 * only from engine/protocol (the one pure module it runs: test/renderer/renderer-boundary.test.ts);
 * electron/ is the only folder that knows both, and imports nothing of the renderer's. Inside the
 * engine, layers import only downwards — the protocol too, which re-exports the folds' types
 * rather than defining them for the folds to import — every folder has a layer, rooms of one
 * layer meet only where SAME_LAYER says one uses the other, and no module imports by a variable
 * name (`import(x)`), which this scan could not follow.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return sourcePaths(dir).filter((p) => /\.(ts|tsx|cts|mts)$/.test(p) && !p.endsWith('.d.ts'));
}

function sourcePaths(dir: string): string[] {
  const abs = join(ROOT, dir);
  let entries: string[];
  try {
    entries = readdirSync(abs);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(abs, name);
    if (name === 'node_modules' || name === 'dist') return [];
    if (statSync(path).isDirectory()) return sourcePaths(relative(ROOT, path));
    return [path];
  });
}

interface Import {
  file: string;
  spec: string;
  typeOnly: boolean;
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const out: Import[] = [];
  const re = /^\s*(import|export)\s+(type\s+)?[^'";]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;
  for (const m of text.matchAll(re)) {
    const spec = m[3] ?? m[4] ?? m[5];
    if (spec) out.push({ file, spec, typeOnly: Boolean(m[2]) });
  }
  return out;
}

/** The repo-relative folder path an import resolves to, or the package name. */
function target(imp: Import): string {
  if (!imp.spec.startsWith('.')) return `pkg:${imp.spec.split('/')[0]}`;
  return relative(ROOT, resolve(dirname(imp.file), imp.spec)).split(sep).join('/');
}

/** `import(` of anything but a string literal: the module graph no scan can see. */
function variableImports(file: string): string[] {
  // Comments aside; `x.import(` is a method call, and `import(a: T…` a method's parameter list.
  const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
  return [...text.matchAll(/(?<![.\w$])import\(\s*(?!['"`])([^)]{0,80})/g)]
    .filter((m) => !/^\w+\s*:/.test(m[1]!))
    .map((m) => `${relative(ROOT, file)}: import(${m[1]!.trim()}…)`);
}

/**
 * Dynamic imports of a computed path that are not part of any module graph, each with its reason.
 * The demo API is a plain .mjs in assets/, found from the package root at run time (dist/ and a
 * bundled CLI sit at different depths), never compiled with the engine.
 */
const VARIABLE_IMPORTS_ALLOWED = new Set([
  // The one import() of a computed specifier, for what stays outside the CLI bundle (undici, the demo API asset).
  'engine/env/import-esm.ts: import(specifier…)',
  'engine/cli/cli-bundle.ts: import(specifier…)',
]);

// Lower number = lower layer (ARCHITECTURE.md "Layers inside the engine"). Every folder of
// engine/ is listed (a new one fails until it is given a layer); `index.ts` is the package entry.
const ENGINE_LAYERS: Record<string, number> = {
  lang: 1,
  log: 1,
  env: 1,
  eval: 2,
  journal: 2,
  http: 2,
  steps: 3,
  stores: 3,
  executor: 4,
  inspect: 4,
  worker: 5,
  server: 5,
  protocol: 5,
  cli: 6,
  'index.ts': 7,
};

/**
 * The only imports between rooms of one layer, `from → to` (the other direction stays closed):
 * env reads JSON input with the log's loggable marker; http builds requests with eval's value
 * helpers; the store steps write through the store adapters; the server speaks the protocol.
 * Everything else of one layer is apart — lang and log, eval and journal, the executor and the
 * pure folds of inspect, the worker and the server.
 */
const SAME_LAYER = new Set(['env → log', 'http → eval', 'steps → stores', 'server → protocol']);

describe('dependency direction', () => {
  it('engine/ never imports electron, the renderer or the electron package', () => {
    const bad = sourceFiles('engine')
      .flatMap(importsOf)
      .filter((i) => {
        const t = target(i);
        return t.startsWith('electron/') || t.startsWith('renderer/') || t === 'pkg:electron' || t.startsWith('pkg:react');
      })
      .map((i) => `${relative(ROOT, i.file)} imports ${i.spec}`);
    expect(bad).toEqual([]);
  });

  it('renderer/ imports from engine/ only types, only from engine/protocol', () => {
    const bad = sourceFiles('renderer')
      .flatMap(importsOf)
      .filter((i) => target(i).startsWith('engine/'))
      // The timeline geometry and the verify verdict are the engine modules it runs (pure: renderer-boundary.test.ts).
      .filter((i) => target(i) !== 'engine/inspect/timeline-geometry.js' && target(i) !== 'engine/executor/verify-report.js')
      .filter((i) => !i.typeOnly || !target(i).startsWith('engine/protocol/'))
      .map((i) => `${relative(ROOT, i.file)} imports ${i.spec}${i.typeOnly ? '' : ' (not type-only)'}`);
    expect(bad).toEqual([]);
  });

  it('every engine folder has a layer', () => {
    const rooms = new Set(sourceFiles('engine').map((f) => relative(ROOT, f).split(sep)[1]!));
    expect([...rooms].filter((room) => ENGINE_LAYERS[room] === undefined)).toEqual([]);
  });

  it('engine layers import only downwards, and one layer\'s rooms only as SAME_LAYER allows (types too)', () => {
    const bad: string[] = [];
    for (const imp of sourceFiles('engine').flatMap(importsOf)) {
      const from = relative(ROOT, imp.file).split(sep)[1]!;
      const to = target(imp);
      if (!to.startsWith('engine/')) continue;
      const toLayer = to.split('/')[1]!;
      const a = ENGINE_LAYERS[from];
      const b = ENGINE_LAYERS[toLayer];
      if (from === toLayer) continue;
      const where = `${relative(ROOT, imp.file)} (layer ${from}) imports ${imp.spec} (layer ${toLayer})`;
      if (a === undefined || b === undefined) bad.push(`${where}: a folder with no layer`);
      else if (b > a) bad.push(where);
      else if (b === a && !SAME_LAYER.has(`${from} → ${toLayer}`)) bad.push(`${where}: rooms of one layer that do not meet`);
    }
    expect(bad).toEqual([]);
  });

  it('no module of engine/, electron/ or renderer/ imports by a variable name', () => {
    const found = ['engine', 'electron', 'renderer/src'].flatMap(sourceFiles).flatMap(variableImports);
    expect(found.filter((f) => !VARIABLE_IMPORTS_ALLOWED.has(f))).toEqual([]);
    // Each allowance still names a real import (a stale one would hide a new one of that name).
    for (const allowed of VARIABLE_IMPORTS_ALLOWED) expect(found).toContain(allowed);
  });

  it('electron/ imports nothing of the renderer, and the renderer nothing of electron/', () => {
    const bad = [
      ...sourceFiles('electron').flatMap(importsOf).filter((i) => target(i).startsWith('renderer/')),
      ...sourceFiles('renderer').flatMap(importsOf).filter((i) => target(i).startsWith('electron/') || target(i) === 'pkg:electron'),
    ].map((i) => `${relative(ROOT, i.file)} imports ${i.spec}`);
    expect(bad).toEqual([]);
  });

  it('the scan sees real files (a broken glob would pass vacuously)', () => {
    expect(sourceFiles('engine').length).toBeGreaterThan(50);
    expect(importsOf(join(ROOT, 'engine', 'executor', 'executor.ts')).length).toBeGreaterThan(5);
    expect(sourceFiles('electron').some((f) => f.endsWith('preload.cts'))).toBe(true);
    expect(importsOf(join(ROOT, 'electron', 'main.ts')).some((i) => target(i).startsWith('engine/'))).toBe(true);
  });

  it('would catch what it forbids', () => {
    expect(variableImports(join(ROOT, 'engine', 'env', 'import-esm.ts'))).toHaveLength(1);
    expect(SAME_LAYER.has('inspect → executor')).toBe(false);
    expect(SAME_LAYER.has('stores → steps')).toBe(false);
  });
});
