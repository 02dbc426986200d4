import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mergeResults, readResults } from './results-file.js';

describe('bench results across partial runs', () => {
  const r = (name: string, value: number) => ({ name, value, unit: 'x/s' });

  it('replaces re-measured figures in place, keeps the others and appends new ones', () => {
    const merged = mergeResults([r('a', 1), r('b', 2), r('c', 3)], [r('d', 40), r('b', 20)]);
    expect(merged).toEqual([r('a', 1), r('b', 20), r('c', 3), r('d', 40)]);
  });

  it('reads a missing file as no figures and refuses one that is not a list of figures', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-results-'));
    try {
      const file = path.join(dir, 'results.json');
      expect(readResults(file)).toEqual([]);
      fs.writeFileSync(file, '{"name":"a"}');
      expect(() => readResults(file)).toThrow(/expected an array of \{name, value, unit\} but got: object/);
      fs.writeFileSync(file, JSON.stringify([r('a', 1), { name: 'b', value: '2' }]));
      expect(() => readResults(file)).toThrow(/entry 1 is not/);
      fs.writeFileSync(file, JSON.stringify([r('a', 1)]));
      expect(readResults(file)).toEqual([r('a', 1)]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
