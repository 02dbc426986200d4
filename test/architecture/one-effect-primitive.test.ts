/**
 * One effect primitive (engine/journal/effect.ts): every crash point an effect passes goes
 * through an Effect handle, so the kind → crash points table (journal/effects.ts) is the only
 * place that says which effect passes which point. A step calling the injector directly would
 * be a second, unchecked definition.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('effects go through journal/effect.ts', () => {
  it('no module but the Effect handle passes a crash point', () => {
    const direct = sources(join(ROOT, 'engine'))
      .filter((file) => !file.endsWith(join('journal', 'effect.ts')))
      .filter((file) => /\.crash\.reach\(|\bcrash\.reach\(/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(direct).toEqual([]);
  });

  it('the scan sees the steps (a broken walk would pass vacuously)', () => {
    expect(sources(join(ROOT, 'engine', 'steps')).some((f) => f.endsWith('fetch-step.ts'))).toBe(true);
    expect(readFileSync(join(ROOT, 'engine', 'steps', 'fetch-step.ts'), 'utf8')).toContain("new Effect(");
  });
});
