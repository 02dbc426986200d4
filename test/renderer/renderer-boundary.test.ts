/**
 * The renderer's dependency rule: it imports from engine/ only types, only from engine/protocol
 * (and the event types the protocol re-exports), and only through lib/protocol.ts. A value import
 * would pull engine code (SQLite, child processes) into the browser bundle.
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
        if (!ALLOWED_ENGINE.has(target)) offences.push(`${rel}: imports ${target}; only engine/protocol types may cross`);
        if (!/^(import|export)\s+type\b/.test(statement)) offences.push(`${rel}: "${statement}" is a value import; use "import type"`);
      }
    }
    expect(offences).toEqual([]);
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
