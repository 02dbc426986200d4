/**
 * The renderer's dependency rule: it imports from engine/ only types, only from engine/protocol
 * (and the event types the protocol re-exports), and only through lib/protocol.ts. A value import
 * would pull engine code (SQLite, child processes) into the browser bundle — except the engine's
 * timeline geometry, which both sides run so they merge bars by one rule: a module that, with
 * everything it imports as values, imports no package, no node: module and nothing else of the
 * engine (checked here, so an import added to it later fails this test).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const SRC = path.join(ROOT, 'renderer', 'src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.(ts|tsx)$/.test(e.name) ? [p] : [];
  });
}

/** Every import/export-from statement: its full text and its specifier. */
function imports(text: string): { statement: string; specifier: string }[] {
  const out: { statement: string; specifier: string }[] = [];
  const re = /^\s*(import|export)\b[^;]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gms;
  for (const m of text.matchAll(re)) out.push({ statement: m[0].trim(), specifier: (m[2] ?? m[3] ?? m[4])! });
  return out;
}

const ALLOWED_ENGINE = new Set(['engine/protocol/protocol.ts', 'engine/log/events.ts']);
/** Engine modules the renderer may run (value imports), and the pure modules they may import. */
const RENDERER_RUNS = new Set(['engine/inspect/timeline-geometry.ts', 'engine/executor/verify-report.ts']);
const PURE_ENGINE = new Set([...RENDERER_RUNS, 'engine/inspect/sorted-search.ts']);

const isTypeOnly = (statement: string) => /^(import|export)\s+type\b/.test(statement);

describe('renderer import boundary', () => {
  const files = sources(SRC);

  it('finds the renderer sources', () => {
    expect(files.length).toBeGreaterThan(20);
    expect(files.some((f) => f.endsWith('bridge.ts'))).toBe(true);
  });

  it('imports engine code only as types, only protocol and event types, only from lib/protocol.ts', () => {
    const offences: string[] = [];
    for (const file of files) {
      const rel = path.relative(ROOT, file);
      for (const { statement, specifier } of imports(fs.readFileSync(file, 'utf8'))) {
        if (!specifier.startsWith('.')) continue;
        const target = path.relative(ROOT, path.resolve(path.dirname(file), specifier)).replace(/\.js$/, '.ts');
        if (!target.startsWith('engine/')) {
          if (!target.startsWith('renderer/')) offences.push(`${rel}: imports ${target}, outside renderer/ and engine/protocol`);
          continue;
        }
        if (rel !== 'renderer/src/lib/protocol.ts') offences.push(`${rel}: imports ${target} directly; go through lib/protocol.ts`);
        if (RENDERER_RUNS.has(target)) continue;
        if (!ALLOWED_ENGINE.has(target)) offences.push(`${rel}: imports ${target}; only engine/protocol types may cross`);
        if (!isTypeOnly(statement)) offences.push(`${rel}: "${statement}" is a value import; use "import type"`);
      }
    }
    expect(offences).toEqual([]);
  });

  it('runs only pure engine modules: their value imports stay among them (no package, no node:, no other engine code)', () => {
    const offences: string[] = [];
    for (const module of PURE_ENGINE) {
      const file = path.join(ROOT, module);
      for (const { statement, specifier } of imports(fs.readFileSync(file, 'utf8'))) {
        if (isTypeOnly(statement)) continue;
        const target = specifier.startsWith('.') ? path.relative(ROOT, path.resolve(path.dirname(file), specifier)).replace(/\.js$/, '.ts') : specifier;
        if (!PURE_ENGINE.has(target)) offences.push(`${module}: "${statement}" runs ${target} in the renderer's bundle`);
      }
    }
    expect(offences).toEqual([]);
    // Some value import does reach the geometry (else this rule guards nothing).
    const door = imports(fs.readFileSync(path.join(SRC, 'lib', 'protocol.ts'), 'utf8'));
    expect(door.some((i) => !isTypeOnly(i.statement) && i.specifier.endsWith('engine/inspect/timeline-geometry.js'))).toBe(true);
  });

  it('has exactly one module that talks to the engine (bridge.ts)', () => {
    const talkers = files.filter((f) => /\bfetch\(|new WebSocket\(|window\.reqon\b/.test(fs.readFileSync(f, 'utf8')));
    expect(talkers.map((f) => path.basename(f))).toEqual(['bridge.ts']);
  });

  it('would catch a value import of engine code', () => {
    const bad = imports(`import { openLog } from '../../../engine/log/open-log.js';`);
    expect(bad[0]!.specifier).toBe('../../../engine/log/open-log.js');
    expect(/^(import|export)\s+type\b/.test(bad[0]!.statement)).toBe(false);
  });
});
