/**
 * One engine bench figure in a process of its own (engine.bench.ts `benchmarks` starts one per
 * figure): `node engine-figure-child.js TASK RAW_FSYNC_PER_S` runs `runFigure(TASK)` and prints
 * its results as one JSON line on stdout (progress goes to stderr).
 */
import { runFigure, type FigureTask } from './engine.bench.js';

const TASKS: readonly FigureTask[] = ['2', '3', '2:pg', '3:pg', '4', '5', '6:full', '6:minimal', 'peers', 'peers:pg', 'growth', 'soak'];

async function main(): Promise<void> {
  const [task, fsyncText] = process.argv.slice(2);
  if (!TASKS.includes(task as FigureTask)) throw new Error(`usage: engine-figure-child.js ${TASKS.join('|')} RAW_FSYNC_PER_S`);
  const results = await runFigure(task as FigureTask, Number(fsyncText));
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`engine figure failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
