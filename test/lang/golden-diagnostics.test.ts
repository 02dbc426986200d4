/**
 * Golden diagnostics: each test/lang/golden/diagnostics/NAME.vague holds one kind of mistake (or
 * a mix), NAME.out the exact text `formatDiagnostics` renders for it — code, line, column, caret,
 * wording and help. `UPDATE_GOLDEN=1` rewrites the .out files; review every change by eye.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatDiagnostics, summarize } from '../../engine/lang/format.js';
import { loadMissionFromText } from '../../engine/lang/loader.js';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'golden', 'diagnostics');
const update = process.env.UPDATE_GOLDEN === '1';
const cases = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.vague'))
  .sort();

function render(file: string): string {
  const text = fs.readFileSync(path.join(dir, file), 'utf8');
  const { diagnostics } = loadMissionFromText(text, file);
  return `${formatDiagnostics(diagnostics, { [file]: text })}-- ${summarize(diagnostics)}\n`;
}

describe('golden diagnostics', () => {
  it('has at least 30 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
  });

  it.each(cases)('%s', (file) => {
    const actual = render(file);
    const outPath = path.join(dir, file.replace(/\.vague$/, '.out'));
    if (update) fs.writeFileSync(outPath, actual);
    expect(fs.existsSync(outPath), `${outPath} is missing; run with UPDATE_GOLDEN=1`).toBe(true);
    expect(actual).toBe(fs.readFileSync(outPath, 'utf8'));
    // Every case is a mistake: a golden that renders nothing has lost its point.
    expect(actual.startsWith('-- ')).toBe(false);
  });
});
