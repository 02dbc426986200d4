/**
 * The dependency direction of ARCHITECTURE.md, enforced: engine/ imports nothing of ours above it
 * (no electron/, renderer/, no `electron` package); renderer/ imports from engine/ only types, and
 * only from engine/protocol; electron/ is the only folder that knows both. Inside the engine,
 * layers import only downwards.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
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
    if (statSync(path).isDirectory()) return sourceFiles(relative(ROOT, path));
    return /\.(ts|tsx)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
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

// Lower number = lower layer (ARCHITECTURE.md "Layers inside the engine").
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
};

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
      .filter((i) => !i.typeOnly || !target(i).startsWith('engine/protocol/'))
      .map((i) => `${relative(ROOT, i.file)} imports ${i.spec}${i.typeOnly ? '' : ' (not type-only)'}`);
    expect(bad).toEqual([]);
  });

  it('engine layers import only downwards (protocol is types the server and cli share)', () => {
    const bad: string[] = [];
    for (const imp of sourceFiles('engine').flatMap(importsOf)) {
      const from = relative(ROOT, imp.file).split(sep)[1]!;
      const to = target(imp);
      if (!to.startsWith('engine/')) continue;
      const toLayer = to.split('/')[1]!;
      const a = ENGINE_LAYERS[from];
      const b = ENGINE_LAYERS[toLayer];
      if (a === undefined || b === undefined || from === toLayer) continue;
      // Types of the protocol flow to whoever renders them; the executor's verify report is one.
      if (toLayer === 'protocol' && imp.typeOnly) continue;
      if (b > a) bad.push(`${relative(ROOT, imp.file)} (layer ${from}) imports ${imp.spec} (layer ${toLayer})`);
    }
    expect(bad).toEqual([]);
  });

  it('the scan sees real files (a broken glob would pass vacuously)', () => {
    expect(sourceFiles('engine').length).toBeGreaterThan(50);
    expect(importsOf(join(ROOT, 'engine', 'executor', 'executor.ts')).length).toBeGreaterThan(5);
  });
});
