/**
 * Figure (soak): REQON_BENCH_SOAK_MINUTES (default 10) of mixed runs at a steady rate
 * (REQON_BENCH_SOAK_RATE runs/s, default 20) on one SQLite log, in one process as a worker runs
 * them: each run stores 5 records, POSTs, pauses on a 1 s timer, and POSTs again — started by
 * `startRun` (which runs it to its pause), woken and finished by a `Worker` (the one `reqon worker`
 * runs) polling the log.
 *
 * Sampled each second: RSS and heap, the event loop's delay (p99 and max, perf_hooks' histogram),
 * the WAL's size and the log's. Printed: minute 1 against the last minute, for runs finished,
 * RSS, heap, event-loop delay p99, the largest WAL seen and the time from a run's start to its
 * end; a last/first ratio past GROWTH_FLAG is marked "GROWS" in the unit (printed, never
 * asserted), and the last minute against the middle one, so that caches filling in the first
 * minutes are told apart from a steady leak. At the end every run must have completed, every POST reached the server once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { RealEnv } from '../../engine/env/real-env.js';
import { startRun, type RunResult } from '../../engine/executor/run-mission.js';
import { openLog } from '../../engine/log/open-log.js';
import { Worker } from '../../engine/worker/worker.js';
import type { BenchResult } from './bench-types.js';
import { median } from './stats.js';
import { missionFiles, type BenchServer } from './engine-fixtures.js';

const MINUTES = Number(process.env['REQON_BENCH_SOAK_MINUTES'] ?? '10');
const RATE = Number(process.env['REQON_BENCH_SOAK_RATE'] ?? '20');
const STORES_PER_RUN = 5;
const POSTS_PER_RUN = 2;
/** A last/first ratio beyond this (or below its inverse, for throughput) is flagged. */
const GROWTH_FLAG = 1.25;
/** How long the end may take for the last runs' timers and POSTs before the figure fails. */
const DRAIN_MS = 120_000;

function soakMission(): string {
  return `mission BenchSoak {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store items: sql("soak_items")
  action Mixed {
    for i in range(0, ${STORES_PER_RUN}) {
      store { id: i, name: "item" } -> items { key: .id }
    }
    post "/things" { body: { n: 1 } }
    pause { duration: "1s" }
    post "/things" { body: { n: 2 } }
  }
  run Mixed
}
`;
}

interface Minute {
  finished: number;
  rssMb: number[];
  heapMb: number[];
  lagP99Ms: number;
  lagMaxMs: number;
  walMaxMb: number;
  logMb: number;
  runMs: number[];
}

export async function soakFigures(dir: string, env: RealEnv, server: BenchServer): Promise<BenchResult[]> {
  if (!(MINUTES > 0) || !(RATE > 0)) throw new Error(`bench soak: REQON_BENCH_SOAK_MINUTES and REQON_BENCH_SOAK_RATE must be positive numbers, got ${MINUTES} and ${RATE}`);
  const dbPath = path.join(dir, 'soak.db');
  const log = await openLog(dbPath, { debugChecks: false });
  const files = missionFiles(dir, 'bench-soak', soakMission());
  const options = { sources: { Api: server.url }, env: {} };
  const deps = { log, env, dataDir: path.join(dir, 'data') };
  const startedAt = new Map<string, number>();
  const failures: string[] = [];
  let minute = newMinute();
  const minutes: Minute[] = [];
  const worker = new Worker({
    ...deps,
    owner: `bench-soak:${process.pid}`,
    concurrency: 64,
    pollMs: 100,
    onRunEnd: (result: RunResult) => {
      if (result.status !== 'completed') failures.push(`${result.runId} ended ${result.status}`);
      const t0 = startedAt.get(result.runId);
      if (t0 !== undefined) minute.runMs.push(performance.now() - t0);
      startedAt.delete(result.runId);
      minute.finished++;
    },
  });
  const postsBefore = await server.stats();
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const looping = worker.loop(false);
  let started = 0;
  let pending = 0;
  const runsStarting = new Set<Promise<void>>();
  const t0 = performance.now();
  const endAt = t0 + MINUTES * 60_000;
  let nextSample = t0 + 1000;
  let nextMinute = t0 + 60_000;
  const closeMinute = () => {
    minute.lagP99Ms = lag.percentile(99) / 1e6;
    minute.lagMaxMs = lag.max / 1e6;
    lag.reset();
    minutes.push(minute);
    process.stderr.write(`bench soak: minute ${minutes.length}: ${describeMinute(minute)}\n`);
    minute = newMinute();
    nextMinute += 60_000;
  };
  try {
    // A steady rate: the n-th run starts at t0 + n / RATE seconds, however long the last one took.
    while (performance.now() < endAt) {
      const now = performance.now();
      if (now >= nextSample) {
        sample(minute, dbPath);
        nextSample += 1000;
      }
      if (now >= nextMinute) closeMinute();
      const due = t0 + (started * 1000) / RATE;
      if (now >= due) {
        started++;
        pending++;
        const begun = performance.now();
        const p: Promise<void> = startRun(files, options, deps).then(
          (r) => {
            pending--;
            if (r.status === 'suspended') startedAt.set(r.runId, begun);
            else failures.push(`${r.runId} ended ${r.status} before its pause`);
            runsStarting.delete(p);
          },
          (error: unknown) => {
            pending--;
            failures.push(`a run failed to start: ${error instanceof Error ? error.message : String(error)}`);
            runsStarting.delete(p);
          },
        );
        runsStarting.add(p);
        continue;
      }
      await env.clock.sleep(Math.max(1, Math.min(due, nextSample) - performance.now()));
      if (failures.length > 0) throw new Error(`bench soak: ${failures.slice(0, 3).join('; ')}`);
    }
    // The last whole minute ends with the loop (at endAt, where its boundary falls).
    if (minutes.length < Math.floor(MINUTES)) closeMinute();
    // Let the last runs' timers fire and their POSTs land, then stop the worker.
    await Promise.all(runsStarting);
    const drainUntil = performance.now() + DRAIN_MS;
    while ((startedAt.size > 0 || pending > 0) && performance.now() < drainUntil) await env.clock.sleep(100);
    if (startedAt.size > 0) throw new Error(`bench soak: ${startedAt.size} runs still unfinished ${DRAIN_MS / 1000} s after the last start`);
  } finally {
    lag.disable();
    worker.stop();
    await looping;
    await log.close();
  }
  if (failures.length > 0) throw new Error(`bench soak: ${failures.slice(0, 3).join('; ')}`);
  const after = await server.stats();
  const posts = after.posts - postsBefore.posts;
  const keys = after.keys - postsBefore.keys;
  if (posts !== started * POSTS_PER_RUN || keys !== posts) {
    throw new Error(`bench soak: the server got ${posts} POSTs with ${keys} distinct keys, expected ${started * POSTS_PER_RUN} of each`);
  }
  return report(minutes, started);
}

function newMinute(): Minute {
  return { finished: 0, rssMb: [], heapMb: [], lagP99Ms: 0, lagMaxMs: 0, walMaxMb: 0, logMb: 0, runMs: [] };
}

function sample(m: Minute, dbPath: string): void {
  const mem = process.memoryUsage();
  m.rssMb.push(mem.rss / 2 ** 20);
  m.heapMb.push(mem.heapUsed / 2 ** 20);
  const wal = fileMb(`${dbPath}-wal`);
  m.walMaxMb = Math.max(m.walMaxMb, wal);
  m.logMb = fileMb(dbPath) + wal;
}

function fileMb(file: string): number {
  try {
    return fs.statSync(file).size / 2 ** 20;
  } catch {
    return 0;
  }
}

function describeMinute(m: Minute): string {
  return `${m.finished} runs finished, RSS ${median(m.rssMb).toFixed(0)} MB, heap ${median(m.heapMb).toFixed(0)} MB, loop delay p99 ${m.lagP99Ms.toFixed(1)} ms, WAL ≤ ${m.walMaxMb.toFixed(1)} MB, log ${m.logMb.toFixed(0)} MB, start→end ${median(m.runMs).toFixed(0)} ms`;
}

function report(minutes: Minute[], started: number): BenchResult[] {
  if (minutes.length === 0) throw new Error('bench soak: not one whole minute measured; set REQON_BENCH_SOAK_MINUTES ≥ 1');
  const first = minutes[0]!;
  const last = minutes[minutes.length - 1]!;
  const n = minutes.length;
  const out: BenchResult[] = [{ name: `engine (soak) runs started, ${n} min at ${RATE}/s`, value: started, unit: `runs (each ${STORES_PER_RUN} stores, ${POSTS_PER_RUN} POSTs, a 1 s timer); all completed` }];
  const metrics: { name: string; unit: string; of: (m: Minute) => number; higherIsWorse: boolean }[] = [
    { name: 'runs finished', unit: 'runs/min', of: (m) => m.finished, higherIsWorse: false },
    { name: 'RSS (median)', unit: 'MB', of: (m) => median(m.rssMb), higherIsWorse: true },
    { name: 'heap used (median)', unit: 'MB', of: (m) => median(m.heapMb), higherIsWorse: true },
    { name: 'event-loop delay p99', unit: 'ms', of: (m) => m.lagP99Ms, higherIsWorse: true },
    { name: 'largest WAL', unit: 'MB', of: (m) => m.walMaxMb, higherIsWorse: true },
    { name: 'a run, start to end (median)', unit: 'ms (1 s of it its timer)', of: (m) => median(m.runMs), higherIsWorse: true },
  ];
  const mid = minutes[Math.floor((n - 1) / 2)]!;
  for (const metric of metrics) {
    const a = metric.of(first);
    const b = metric.of(last);
    const ratio = b / a;
    const grows = metric.higherIsWorse ? ratio > GROWTH_FLAG : ratio < 1 / GROWTH_FLAG;
    out.push({ name: `engine (soak) ${metric.name}, minute 1`, value: a, unit: metric.unit });
    if (n === 1) continue;
    out.push({ name: `engine (soak) ${metric.name}, minute ${n}`, value: b, unit: metric.unit });
    out.push({ name: `engine (soak) ${metric.name}, minute ${n} / minute 1`, value: ratio, unit: grows ? `× GROWS (flagged past ${GROWTH_FLAG} ×)` : '× (flat)' });
    // Memory that fills caches in the first minutes and then stays is not a leak: the second half alone tells.
    if (metric.higherIsWorse && n >= 4) {
      const late = metric.of(last) / metric.of(mid);
      out.push({ name: `engine (soak) ${metric.name}, minute ${n} / minute ${Math.floor((n - 1) / 2) + 1}`, value: late, unit: late > GROWTH_FLAG ? `× GROWS in the second half` : '× (flat in the second half)' });
    }
  }
  out.push({ name: `engine (soak) the log after ${n} min`, value: last.logMb, unit: 'MB (grows with the runs kept: nothing is pruned)' });
  return out;
}
