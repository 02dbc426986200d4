/**
 * Start-up: how long `node dist/engine/cli/main.js …` takes, end to end, for the commands people
 * run by hand — `--version`, `check` of a small file, `run` of a one-step mission (one `store`
 * into a `sql` store, on a log that already exists, as every run but the first finds it).
 *
 * Each is measured both ways the bin can start (engine/cli/cli-bundle.ts): from the one-file bundle
 * with its code cache (`REQON_CLI_BUNDLE=1`, what users get) and from the compiled modules
 * (`REQON_CLI_BUNDLE=0`, what every start cost before the bundle), beside `node -e 0`, the floor
 * no command can go under. The variants take turns, ROUNDS rounds, so a load that comes and goes
 * on this shared machine falls on all of them alike; each is one fresh process in `bash -c`, whose
 * `times` gives the CPU time (user + sys) of the process — what such a load inflates least.
 * Printed: wall p50 and p90, CPU p50. Goals (issue 17): run ≤ 150 ms, check ≤ 100 ms, wall.
 * Every command's exit code and output are checked, so a broken path is a failure, not a speed.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { BUNDLES, bundleFor, bundleState } from '../../engine/cli/cli-bundle.js';
import type { BenchResult } from './bench-types.js';

const ROUNDS = 20;
const CLI = fileURLToPath(new URL('../../engine/cli/main.js', import.meta.url));

const MISSION = `mission StartUp {
  store items: sql("items")
  action Load {
    store { id: 1, name: "item" } -> items { key: .id }
  }
  run Load
}
`;

interface Variant {
  name: string;
  goal?: string;
  argv: string[];
  env: Record<string, string>;
  expect: RegExp;
}

interface Sample {
  wallMs: number;
  cpuMs: number;
}

/** One fresh process: its wall time, its CPU time from bash's `times`, its exit code and stdout checked. */
async function timed(v: Variant, cwd: string): Promise<Sample> {
  const quoted = v.argv.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const started = performance.now();
  const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    execFile('bash', ['-c', `${quoted}; code=$?; times >&2; exit $code`], { cwd, env: { ...process.env, ...v.env } }, (error, stdout, stderr) => {
      if (error) reject(new Error(`bench start-up: ${v.name} failed (${error.message}):\n${stdout}${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
  const wallMs = performance.now() - started;
  // `times` prints the shell's own times, then its children's: user, then sys.
  const children = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(stderr);
  if (!children) throw new Error(`bench start-up: no CPU times from bash's times in ${JSON.stringify(stderr.slice(-200))}`);
  if (!v.expect.test(stdout)) throw new Error(`bench start-up: ${v.name} printed ${JSON.stringify(stdout)}, expected ${v.expect}`);
  const [, um, us, sm, ss] = children.map(Number) as [number, number, number, number, number];
  return { wallMs, cpuMs: (um * 60 + us + sm * 60 + ss) * 1000 };
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function variants(dir: string): Variant[] {
  const node = process.execPath;
  const out: Variant[] = [{ name: 'node -e 0 (the floor)', argv: [node, '-e', '0'], env: {}, expect: /^$/ }];
  const commands: Array<{ name: string; goal?: string; args: (way: string) => string[]; expect: RegExp }> = [
    { name: 'reqon --version', args: () => ['--version'], expect: /^reqon \S+ \(log format / },
    { name: 'reqon check, small file', goal: 'goal ≤ 100 ms', args: () => ['check', 'one.vague'], expect: /one\.vague: no errors/ },
    {
      name: 'reqon run, one-step mission',
      goal: 'goal ≤ 150 ms',
      args: (way) => ['run', 'one.vague', '--db', path.join(dir, `${way}.db`), '--quiet'],
      expect: /^run run_\w+\ncompleted: /,
    },
  ];
  for (const c of commands) {
    for (const [way, flag] of [['bundle', '1'], ['compiled modules', '0']] as const) {
      out.push({
        name: `${c.name}${way === 'bundle' ? '' : ', compiled modules (no bundle)'}`,
        ...(c.goal && way === 'bundle' ? { goal: c.goal } : {}),
        argv: [node, CLI, ...c.args(way === 'bundle' ? 'bundle' : 'modules')],
        env: { REQON_CLI_BUNDLE: flag },
        expect: c.expect,
      });
    }
  }
  return out;
}

export async function benchmarks(): Promise<BenchResult[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-bench-start-up-'));
  try {
    fs.writeFileSync(path.join(dir, 'one.vague'), MISSION);
    const all = variants(dir);
    // The bundle a variant runs from (the bin picks it by the command), and whether it can run.
    const bundleOf = (v: Variant) => bundleFor(v.argv.slice(2));
    const states = new Map(BUNDLES.map((b) => [b, bundleState(b)]));
    const measured = all.filter((v) => v.env['REQON_CLI_BUNDLE'] !== '1' || states.get(bundleOf(v))!.fresh);
    // Untimed: each run's log is created (migrations) here, so what is timed opens an existing one.
    for (const v of measured) await timed(v, dir);
    const samples = new Map<Variant, Sample[]>(measured.map((v) => [v, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const v of measured) samples.get(v)!.push(await timed(v, dir));
    }
    const results: BenchResult[] = [];
    for (const v of all) {
      const name = `start-up: ${v.name}`;
      const bundle = bundleOf(v);
      const s = samples.get(v);
      if (!s) {
        const state = states.get(bundle)!;
        results.push({ name, value: NaN, unit: `not measured: the bundle cannot run (${state.fresh ? '' : state.reason})` });
        continue;
      }
      const cache = fs.existsSync(bundle.cache) ? 'with its code cache' : 'WITHOUT a code cache';
      const way = v.env['REQON_CLI_BUNDLE'] === '1' ? `, ${bundle.name === 'full' ? 'bundle' : `${bundle.name} bundle`} ${cache}` : '';
      const wall = s.map((x) => x.wallMs);
      results.push({ name: `${name}, wall p50`, value: quantile(wall, 0.5), unit: `ms (${ROUNDS} runs${way}${v.goal ? `; ${v.goal}` : ''})` });
      results.push({ name: `${name}, wall p90`, value: quantile(wall, 0.9), unit: 'ms' });
      results.push({ name: `${name}, CPU p50`, value: quantile(s.map((x) => x.cpuMs), 0.5), unit: 'ms CPU (user + sys)' });
    }
    return results;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
