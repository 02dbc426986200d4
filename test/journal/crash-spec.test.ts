/**
 * `--crash-at POINT[:N]`: N is a count in decimal digits. `Number()` took `0x2`, `2e0` and ` 2` as
 * 2 and rounded a 20-digit count to 100000000000000000000, so a typo armed a crash elsewhere than
 * asked; each is refused now, naming the spec.
 */
import { describe, expect, it } from 'vitest';
import { CrashSpecError, parseCrashSpec } from '../../engine/journal/crash-points.js';

describe('--crash-at POINT:N', () => {
  it('takes a point alone or with a decimal count', () => {
    expect(parseCrashSpec('before-effect', Math.random).plan).toEqual({ point: 'before-effect', occurrence: 1 });
    expect(parseCrashSpec('after-effect:12', Math.random).plan).toEqual({ point: 'after-effect', occurrence: 12 });
    expect(parseCrashSpec('mid-store:007', Math.random).plan).toEqual({ point: 'mid-store', occurrence: 7 });
  });

  it('refuses counts that are not plain decimal digits, zero, and counts past exact integers', () => {
    for (const spec of ['before-effect:0x2', 'before-effect:2e0', 'before-effect: 2', 'before-effect:2 ', 'before-effect:1.5', 'before-effect:0', 'before-effect:-1', 'before-effect:', 'before-effect:99999999999999999999']) {
      expect(() => parseCrashSpec(spec, Math.random), spec).toThrow(CrashSpecError);
    }
  });
});
