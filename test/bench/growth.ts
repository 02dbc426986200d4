/**
 * Figure (growth): what the log costs as the work grows, on SQLite.
 *
 * A log of RUNS runs × 10 `store` steps (1M effects at full size) is written by the real engine,
 * 100 runs at a time, plus one long run of LONG_STEPS store steps (100k events) written last, so
 * it is the newest and every listing shows it. Printed:
 * - the write rate of the second and the last tenth of the runs (does a fuller log write slower?);
 * - the log's size on disk, per event and per effect, and where the bytes are (dbstat, per table
 *   and index); the same per effect for a log of POSTs (1k runs × 10), whose events are larger;
 * - the wall time of `reqon runs`, `reqon runs --json`, `reqon show` and `reqon events --json |
 *   head` on that log (each a fresh CLI process, as a person types it; the median of 5), and
 *   beyond start-up: minus `reqon runs` on an empty log run just before each (paired, so the load
 *   of a shared machine hits both);
 * - the studio's `runs.list` (StudioService, the engine side of the runs table), cold.
 * Every command's output is checked (the runs listed, the status shown, the events printed), so
 * a fast but wrong answer fails the figure.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { RealEnv } from '../../engine/env/real-env.js';
import { startRun, type RunResult } from '../../engine/executor/run-mission.js';
import { openLog } from '../../engine/log/open-log.js';
import { createStudioService } from '../../engine/server/studio-service.js';
import type { Requests } from '../../engine/protocol/protocol.js';
import type { BenchResult } from './bench-types.js';
import { median } from './stats.js';
import { missionFiles, postMission, storeMission, type BenchServer } from './engine-fixtures.js';

const CLI = fileURLToPath(new URL('../../engine/cli/main.js', import.meta.url));
const EFFECTS_PER_RUN = 10;
const BATCH = 100;
/** CLI invocations timed per command (the median is printed). */
const CLI_TRIALS = 5;
const INTERACTIVE = 'ms (goal < 200)';

export async function growthFigures(dir: string, env: RealEnv, server: BenchServer, scaled: (n: number) => number): Promise<BenchResult[]> {
  const runs = scaled(100_000);
  const longSteps = scaled(25_000);
  const postRuns = scaled(1_000);
  const out: BenchResult[] = [];
  const dbPath = path.join(dir, 'growth.db');
  const deps = { env, dataDir: path.join(dir, 'data') };

  const log = await openLog(dbPath, { debugChecks: false });
  let sample: string;
  let longRun: string;
  const batchMs: number[] = [];
  try {
    const files = missionFiles(dir, 'bench-growth', storeMission(EFFECTS_PER_RUN));
    const ids: string[] = [];
    for (let done = 0; done < runs; ) {
      const n = Math.min(BATCH, runs - done);
      const started = performance.now();
      const results = await Promise.all(Array.from({ length: n }, () => startRun(files, { sources: {}, env: {} }, { ...deps, log })));
      batchMs.push(performance.now() - started);
      for (const r of results) expectCompleted(r);
      ids.push(results[0]!.runId);
      done += n;
      if (done % 10_000 === 0) process.stderr.write(`bench growth: ${done} of ${runs} runs written\n`);
    }
    sample = ids[ids.length >> 1]!;
    const long = await startRun(missionFiles(dir, 'bench-growth-long', storeMission(longSteps)), { sources: {}, env: {} }, { ...deps, log });
    expectCompleted(long);
    longRun = long.runId;
  } finally {
    await log.close();
  }
  // Effects/s over the second and the last tenth of the batches (each batch is BATCH runs × 10);
  // the first tenth is the JIT's warm-up.
  const k = Math.max(1, Math.round(batchMs.length / 10));
  const rate = (ms: number[]) => (ms.length * BATCH * EFFECTS_PER_RUN * 1000) / ms.reduce((a, b) => a + b, 0);
  const second = rate(batchMs.slice(k, 2 * k));
  const last = rate(batchMs.slice(-k));
  out.push({ name: 'engine (growth) store effects written, second tenth of the log', value: second, unit: 'effects/s (100 runs × 10 at a time; the first tenth warms the JIT)' });
  out.push({ name: 'engine (growth) store effects written, last tenth of the log', value: last, unit: 'effects/s' });
  out.push({ name: 'engine (growth) last tenth / second tenth', value: last / second, unit: '× (1: a full log writes as fast as an emptier one)' });

  const size = logSize(dbPath);
  const effects = runs * EFFECTS_PER_RUN + longSteps;
  out.push({ name: `engine (growth) log of ${runs} runs, ${effects} store effects: size`, value: size.bytes / 1e6, unit: `MB (${size.events} events)` });
  out.push({ name: 'engine (growth) log bytes per event (store runs)', value: size.bytes / size.events, unit: 'bytes/event (all tables and indexes)' });
  out.push({ name: 'engine (growth) log bytes per store effect', value: size.bytes / effects, unit: 'bytes/effect (with its step and loop events)' });
  for (const [table, bytes] of size.tables) out.push({ name: `engine (growth) of which ${table}`, value: bytes / size.bytes, unit: 'share of the file' });

  out.push(...(await postGrowth(dir, env, server, postRuns)));

  // The commands a person types against that log, each a fresh process; an empty log's is the baseline.
  const emptyDb = path.join(dir, 'empty.db');
  await (await openLog(emptyDb)).close();
  const commands: { name: string; args: string[]; head?: number; check: (stdout: string) => void }[] = [
    { name: 'reqon runs', args: ['runs'], check: (s) => expectLines(s, 100, /^\S+ {2}completed/, 'reqon runs') },
    { name: 'reqon runs --json', args: ['runs', '--json'], check: (s) => expectJsonRuns(s, 100) },
    { name: 'reqon show (a 40-event run)', args: ['show', sample], check: (s) => expectShown(s, sample) },
    { name: `reqon show (the ${4 * longSteps}-event run)`, args: ['show', longRun], check: (s) => expectShown(s, longRun) },
    { name: 'reqon events --json | head (a 40-event run)', args: ['events', sample, '--json'], head: 20, check: (s) => expectEvents(s, sample, 20) },
    { name: `reqon events --json | head (the ${4 * longSteps}-event run)`, args: ['events', longRun, '--json'], head: 20, check: (s) => expectEvents(s, longRun, 20) },
  ];
  // Each trial runs the command and, right before it, `reqon runs` on the empty log. Wall time is
  // what a person waits; CPU time (user + sys of the processes) is what a loaded machine inflates
  // least, and the paired difference of CPU times is what the log's size adds to start-up.
  const startUp = { args: ['runs', '--db', emptyDb], check: (s: string) => {
    if (!s.startsWith('no runs yet')) throw new Error(`bench growth: reqon runs on an empty log printed ${JSON.stringify(s.slice(0, 200))}`);
  } };
  const startUps: Timing[] = [];
  for (const c of commands) {
    const timings: Timing[] = [];
    const beyond: number[] = [];
    for (let i = 0; i < CLI_TRIALS; i++) {
      const base = await timedCli(startUp.args, undefined, startUp.check);
      const t = await timedCli([...c.args, '--db', dbPath], c.head, c.check);
      startUps.push(base);
      timings.push(t);
      beyond.push(t.cpuMs - base.cpuMs);
    }
    out.push({ name: `engine (growth) ${c.name}, ${runs} runs in the log`, value: median(timings.map((t) => t.wallMs)), unit: `${INTERACTIVE}, wall, median of ${CLI_TRIALS}` });
    out.push({ name: `engine (growth) ${c.name}, CPU`, value: median(timings.map((t) => t.cpuMs)), unit: 'ms CPU (user + sys), median' });
    out.push({ name: `engine (growth) ${c.name}, CPU beyond start-up`, value: median(beyond), unit: 'ms CPU (minus an empty log’s reqon runs, run just before each)' });
  }
  out.push({ name: 'engine (growth) reqon runs on an empty log (start-up)', value: median(startUps.map((t) => t.wallMs)), unit: `ms wall (median of ${startUps.length})` });
  out.push({ name: 'engine (growth) reqon runs on an empty log (start-up), CPU', value: median(startUps.map((t) => t.cpuMs)), unit: 'ms CPU (user + sys)' });
  out.push(...(await studioRunsList(dbPath, dir, runs, longRun)));
  return out;
}

/** A log of `runs` runs × 10 POSTs: bytes per POST effect (its intent, outcome and step events). */
async function postGrowth(dir: string, env: RealEnv, server: BenchServer, runs: number): Promise<BenchResult[]> {
  const dbPath = path.join(dir, 'growth-posts.db');
  const log = await openLog(dbPath, { debugChecks: false });
  const before = (await server.stats()).posts;
  try {
    const files = missionFiles(dir, 'bench-growth-post', postMission(EFFECTS_PER_RUN));
    for (let done = 0; done < runs; done += BATCH) {
      const results = await Promise.all(
        Array.from({ length: Math.min(BATCH, runs - done) }, () => startRun(files, { sources: { Api: server.url }, env: {} }, { env, dataDir: path.join(dir, 'data'), log })),
      );
      for (const r of results) expectCompleted(r);
    }
  } finally {
    await log.close();
  }
  const sent = (await server.stats()).posts - before;
  if (sent !== runs * EFFECTS_PER_RUN) throw new Error(`bench growth: the server got ${sent} POSTs, expected ${runs * EFFECTS_PER_RUN}`);
  const size = logSize(dbPath);
  return [
    { name: 'engine (growth) log bytes per event (POST runs)', value: size.bytes / size.events, unit: 'bytes/event' },
    { name: 'engine (growth) log bytes per POST effect', value: size.bytes / (runs * EFFECTS_PER_RUN), unit: `bytes/effect (${size.events / (runs * EFFECTS_PER_RUN)} events each, with the run rows)` },
  ];
}

/**
 * The studio's runs list on that log, the way the runs table asks for it, in a fresh service: the
 * first page (`runs.list {}`), cold, then a page deep in the log and a filtered one (the engine
 * filters, pages and counts).
 */
async function studioRunsList(dbPath: string, dir: string, runs: number, longRun: string): Promise<BenchResult[]> {
  const service = await createStudioService({ dbPath, cliPath: CLI, cwd: dir, worker: false, prefetchRuns: 0 });
  const timed = async (req: Requests['runs.list']['req']) => {
    const started = performance.now();
    const page = await service.handle('runs.list', req);
    return { page, ms: performance.now() - started };
  };
  try {
    const first = await timed({});
    const { runs: listed, total } = first.page;
    if (listed.length === 0 || listed.some((r) => r.status !== 'completed') || total !== runs + 1) {
      throw new Error(`bench growth: runs.list gave ${listed.length} runs of ${total} (expected ${runs + 1}), not all completed`);
    }
    const deep = await timed({ offset: runs - 100, limit: 200 });
    if (deep.page.runs.length !== 101) throw new Error(`bench growth: runs.list at offset ${runs - 100} gave ${deep.page.runs.length} runs, expected 101`);
    // The long run's id, upper-cased: the filter ignores case.
    const filtered = await timed({ status: 'completed', text: longRun.toUpperCase() });
    if (filtered.page.total !== 1 || filtered.page.runs[0]?.runId !== longRun) throw new Error(`bench growth: runs.list filtered to ${longRun} gave ${JSON.stringify(filtered.page.runs.map((r) => r.runId))} of ${filtered.page.total}`);
    return [
      { name: 'engine (growth) studio runs.list, cold', value: first.ms, unit: `${INTERACTIVE}; the ${listed.length} newest runs (the engine's default page) and the total` },
      { name: 'engine (growth) studio runs.list, the oldest page', value: deep.ms, unit: `${INTERACTIVE}; offset ${runs - 100}` },
      { name: 'engine (growth) studio runs.list, filtered (completed, text)', value: filtered.ms, unit: `${INTERACTIVE}; status 'completed' (no failed step) and one run's id, with the count` },
    ];
  } finally {
    await service.close();
  }
}

function expectCompleted(result: RunResult): void {
  if (result.status !== 'completed') throw new Error(`bench growth: the run ${result.runId} ended ${result.status}, expected completed`);
}

/** File size (with any WAL) after the log was closed, its events, and each table's and index's share. */
function logSize(dbPath: string): { bytes: number; events: number; tables: [string, number][] } {
  const wal = `${dbPath}-wal`;
  const bytes = fs.statSync(dbPath).size + (fs.existsSync(wal) ? fs.statSync(wal).size : 0);
  const db = new Database(dbPath, { readonly: true });
  try {
    const events = (db.prepare('SELECT count(*) AS n FROM reqon_events').get() as { n: number }).n;
    const rows = db.prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC LIMIT 4').all() as { name: string; bytes: number }[];
    return { bytes, events, tables: rows.map((r) => [r.name, r.bytes]) };
  } finally {
    db.close();
  }
}

interface Timing {
  wallMs: number;
  cpuMs: number;
}

/** `reqon ARGS` (piped into `head -n HEAD` when given) in a shell: its wall time and its processes' CPU time, its output checked. */
async function timedCli(args: string[], head: number | undefined, check: (stdout: string) => void): Promise<Timing> {
  const quoted = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  // bash's `times` prints the CPU time of the shell's children (user, then sys) on its second line.
  const script = `${quoted}${head === undefined ? '' : ` | head -n ${head}`}; times >&2`;
  const started = performance.now();
  const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    execFile('bash', ['-c', script], { maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`bench growth: reqon ${args.join(' ')} failed: ${error.message}\n${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
  const wallMs = performance.now() - started;
  const children = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(stderr);
  if (!children) throw new Error(`bench growth: no CPU times from bash's times in ${JSON.stringify(stderr.slice(-200))}`);
  const [, um, us, sm, ss] = children.map(Number) as [number, number, number, number, number];
  check(stdout);
  return { wallMs, cpuMs: (um * 60 + us + sm * 60 + ss) * 1000 };
}

function expectLines(stdout: string, count: number, pattern: RegExp, what: string): void {
  const lines = stdout.trimEnd().split('\n');
  if (lines.length !== count || !lines.every((l) => pattern.test(l))) {
    throw new Error(`bench growth: ${what} printed ${lines.length} lines (expected ${count} matching ${pattern}); first: ${lines[0]}`);
  }
}

function expectJsonRuns(stdout: string, count: number): void {
  const runs = JSON.parse(stdout) as { status: string }[];
  if (runs.length !== count || runs.some((r) => r.status !== 'completed')) throw new Error(`bench growth: reqon runs --json listed ${runs.length} runs, expected ${count} completed`);
}

function expectShown(stdout: string, runId: string): void {
  if (!stdout.startsWith(`run       ${runId}\n`) || !/^status {4}completed$/m.test(stdout)) throw new Error(`bench growth: reqon show ${runId} printed ${JSON.stringify(stdout.slice(0, 300))}`);
}

function expectEvents(stdout: string, runId: string, count: number): void {
  const events = stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { runId?: string; seq: number });
  if (events.length !== count || events.some((e, i) => e.seq !== i + 1)) {
    throw new Error(`bench growth: reqon events ${runId} --json | head printed ${events.length} events, expected seq 1..${count}`);
  }
}
