/** The ten conformance missions of reqon-reference.md §H must parse and check with no diagnostics at all. */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatDiagnostics } from '../../engine/lang/format.js';
import { loadMission } from '../../engine/lang/loader.js';

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../assets/conformance');

describe('conformance missions check clean', () => {
  it.each(Array.from({ length: 10 }, (_, i) => `h${i + 1}.vague`))('%s', (name) => {
    const result = loadMission(path.join(dir, name));
    const texts = new Map(result.unit!.files.map((f) => [f.path, f.text]));
    expect(formatDiagnostics(result.diagnostics, texts)).toBe('');
    expect(result.unit!.mission).toBeDefined();
  });
});
