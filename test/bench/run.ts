/**
 * The `npm run bench` harness: imports every bench module listed in BENCH_MODULES, runs them one
 * after another, prints an aligned name/value/unit table and writes bench/results.json at the
 * repository root as `[{name, value, unit}]`. Add a bench by writing `NAME.bench.ts` here and
 * adding one line to the list. REQON_BENCH_MODULES (e.g. `engine.bench`) runs only the modules it
 * lists; results.json then keeps the other figures of the last run and replaces those measured
 * now, so one figure can be refreshed without running every bench.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchModule, BenchResult } from './bench-types.js';
import { mergeResults, readResults } from './results-file.js';

const BENCH_MODULES: ReadonlyArray<{ file: string; load: () => Promise<BenchModule> }> = [
  { file: 'parse-check.bench', load: () => import('./parse-check.bench.js') },
  { file: 'start-up.bench', load: () => import('./start-up.bench.js') },
  { file: 'studio.bench', load: () => import('./studio.bench.js') },
  { file: 'studio-paint.bench', load: () => import('./studio-paint.bench.js') },
  { file: 'studio-state.bench', load: () => import('./studio-state.bench.js') },
  { file: 'engine.bench', load: () => import('./engine.bench.js') },
  { file: 'prune.bench', load: () => import('./prune.bench.js') },
];

/** The folder holding the repository's package.json, searched upwards from this file. */
function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest)) {
      const name = (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string }).name;
      if (name === 'reqon-studio') return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('bench: cannot find the reqon-studio package.json above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

export function formatTable(results: readonly BenchResult[]): string {
  const rows = results.map((r) => [r.name, formatValue(r.value), r.unit]);
  const header = ['name', 'value', 'unit'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    [cells[0]!.padEnd(widths[0]!), cells[1]!.padStart(widths[1]!), cells[2]!.padEnd(widths[2]!)].join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function formatValue(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const abs = Math.abs(v);
  return abs >= 100 ? v.toFixed(0) : abs >= 1 ? v.toFixed(2) : v.toPrecision(3);
}

const MODULES = process.env['REQON_BENCH_MODULES']?.split(',').map((m) => m.trim());

async function main(): Promise<void> {
  const unknown = MODULES?.filter((m) => !BENCH_MODULES.some((e) => e.file === m));
  if (unknown?.length) throw new Error(`REQON_BENCH_MODULES: no bench module ${unknown.join(', ')}; expected some of ${BENCH_MODULES.map((e) => e.file).join(', ')}`);
  const results: BenchResult[] = [];
  for (const entry of BENCH_MODULES) {
    if (MODULES && !MODULES.includes(entry.file)) continue;
    process.stderr.write(`bench: running ${entry.file}…\n`);
    const mod = await entry.load();
    results.push(...(await mod.benchmarks()));
  }
  process.stdout.write(`${formatTable(results)}\n`);
  const outDir = path.join(repoRoot(), 'bench');
  fs.mkdirSync(outDir, { recursive: true });
  const out = path.join(outDir, 'results.json');
  fs.writeFileSync(out, `${JSON.stringify(MODULES ? mergeResults(readResults(out), results) : results, null, 2)}\n`);
  process.stderr.write(`bench: wrote ${out}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
