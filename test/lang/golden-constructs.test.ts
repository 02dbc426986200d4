/**
 * Golden construct tests: each test/lang/golden/constructs/NAME.vague parses into the AST kept in
 * NAME.ast.json (spans stripped, compact JSON a reviewer can read). Construct files parse with no
 * diagnostics unless the golden lists them. `UPDATE_GOLDEN=1` rewrites the .ast.json files —
 * review every change by eye before committing it.
 */
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseProgram } from '../../engine/lang/parser.js';

const dir = new URL('./golden/constructs/', import.meta.url);
const update = process.env['UPDATE_GOLDEN'] === '1';

function withoutSpans(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (k, v: unknown) => (k === 'span' || k === 'start' || k === 'end' || k === 'optionSpans' ? undefined : v)));
}

/** JSON with every object or array that fits in 100 columns kept on one line. */
function compact(value: unknown, indent = ''): string {
  const flat = JSON.stringify(value);
  if (flat === undefined) return 'null';
  if (flat.length + indent.length <= 100 || value === null || typeof value !== 'object') return flat;
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    return `[\n${value.map((v) => inner + compact(v, inner)).join(',\n')}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${compact(v, inner)}`).join(',\n')}\n${indent}}`;
}

function render(file: string, text: string): string {
  const { program, diagnostics } = parseProgram(text, file);
  const golden: Record<string, unknown> = { items: withoutSpans(program.items) };
  if (diagnostics.length > 0) golden['diagnostics'] = diagnostics.map((d) => `${d.code} @${d.span.start}: ${d.message}`);
  return `${compact(golden)}\n`;
}

const files = readdirSync(dir).filter((f) => f.endsWith('.vague')).sort();

describe('golden constructs', () => {
  it('has construct files', () => {
    expect(files.length).toBeGreaterThanOrEqual(12);
  });

  for (const file of files) {
    it(file, () => {
      const text = readFileSync(new URL(file, dir), 'utf8');
      const actual = render(file, text);
      const goldenUrl = new URL(file.replace(/\.vague$/, '.ast.json'), dir);
      if (update) writeFileSync(goldenUrl, actual);
      expect(existsSync(goldenUrl), `missing ${file.replace(/\.vague$/, '.ast.json')}: run with UPDATE_GOLDEN=1`).toBe(true);
      expect(actual).toBe(readFileSync(goldenUrl, 'utf8'));
      // Only the file about unsupported forms may produce diagnostics.
      if (file !== 'unsupported.vague') expect(actual).not.toContain('"diagnostics"');
    });
  }
});
