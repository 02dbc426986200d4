/**
 * The checker's store-target rules (lang/store-targets.ts, E3048) give the verdicts the engine's
 * own do: the table stores' checkTableName and the file store's storeFilePath. They are written
 * twice only because the checker may import neither layer; this holds them to each other.
 */
import fc from 'fast-check';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { storeTargetProblem } from '../../engine/lang/store-targets.js';
import { checkTableName } from '../../engine/log/store-rules.js';
import { storeFilePath } from '../../engine/stores/file-store.js';

const engineRefuses = (kind: 'sql' | 'nosql' | 'file', target: string): boolean => {
  try {
    if (kind === 'file') storeFilePath(os.tmpdir(), target);
    else checkTableName(target, kind);
    return false;
  } catch {
    return true;
  }
};

const SAMPLES = ['orders', 'Orders_2', '_x', '2x', 'x y', 'a-b', '', 'reqon_runs', 'SQLITE_x', 'pg_stat', 'x'.repeat(63), 'x'.repeat(64), 'café',
  'exports/orders', '../escaped', 'a/../b', './a', 'a//b', '/etc/passwd', 'C:/x', 'a\\b', 'a\0b', 'a/', '.hidden', 'a/.b', '..x'];

describe('store targets: the checker and the engine agree', () => {
  it('on hand-picked targets', () => {
    for (const kind of ['sql', 'nosql', 'file'] as const) {
      for (const target of SAMPLES) {
        expect(storeTargetProblem(kind, target) !== undefined, `${kind} ${JSON.stringify(target)}`).toBe(engineRefuses(kind, target));
      }
    }
  });

  it('on generated ones', () => {
    const piece = fc.constantFrom('a', 'Z', '_', '0', '.', '..', '/', '\\', ' ', '-', 'é', '\0', 'reqon_', 'pg_', 'C:');
    fc.assert(
      fc.property(fc.constantFrom('sql' as const, 'nosql' as const, 'file' as const), fc.array(piece, { maxLength: 12 }).map((p) => p.join('')), (kind, target) => {
        expect(storeTargetProblem(kind, target) !== undefined).toBe(engineRefuses(kind, target));
      }),
      { numRuns: 2000 },
    );
  });
});
