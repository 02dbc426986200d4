/**
 * bench/results.json across partial runs: a run of some modules (REQON_BENCH_MODULES) replaces
 * the figures it measured and keeps the rest of the last full run, so the file always holds one
 * value per figure.
 */
import * as fs from 'node:fs';
import type { BenchResult } from './bench-types.js';

/** `earlier` with each figure measured again replaced where it stood, and new figures appended. */
export function mergeResults(earlier: readonly BenchResult[], now: readonly BenchResult[]): BenchResult[] {
  const fresh = new Map(now.map((r) => [r.name, r]));
  const kept = new Set(earlier.map((r) => r.name));
  return [...earlier.map((r) => fresh.get(r.name) ?? r), ...now.filter((r) => !kept.has(r.name))];
}

/** The figures in `file` (none when it does not exist yet). */
export function readResults(file: string): BenchResult[] {
  if (!fs.existsSync(file)) return [];
  const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  const bad = Array.isArray(parsed) ? parsed.findIndex((r: unknown) => !isResult(r)) : -2;
  if (bad === -2) throw new Error(`${file}: expected an array of {name, value, unit} but got: ${typeof parsed}`);
  if (bad >= 0) throw new Error(`${file}: entry ${bad} is not {name: string, value: number, unit: string}; delete the file and run \`npm run bench\` again`);
  return parsed as BenchResult[];
}

function isResult(r: unknown): r is BenchResult {
  if (typeof r !== 'object' || r === null) return false;
  const { name, value, unit } = r as Record<string, unknown>;
  return typeof name === 'string' && typeof unit === 'string' && (typeof value === 'number' || value === null);
}
