/**
 * What the engine bench runs against: the missions (as text, generated with the sizes the bench
 * asks for), a local HTTP server on 127.0.0.1 (a POST sink and a deterministic paginated list),
 * and the temp folder for the logs — on the same disk as the working directory, because the disk
 * that holds the database is the one whose fsync rate is the yardstick.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MissionFiles } from '../../engine/log/log.js';

/** A temp folder on the working directory's filesystem (os.tmpdir() when it is the same device). */
export function benchDir(cwd: string = process.cwd()): string {
  const tmp = os.tmpdir();
  const base = fs.statSync(tmp).dev === fs.statSync(cwd).dev ? tmp : path.join(cwd, '.reqon');
  fs.mkdirSync(base, { recursive: true });
  return fs.mkdtempSync(path.join(base, 'reqon-bench-'));
}

export function missionFiles(dir: string, name: string, text: string): MissionFiles {
  const entry = path.join(dir, `${name}.vague`);
  return { entry, files: [{ path: entry, text }] };
}

/** One run storing `count` records into a sql store, one `store` step (one commit) per record. */
export function storeMission(count: number): string {
  return `mission BenchStore {
  store items: sql("bench_items")
  action Load {
    for i in range(0, ${count}) {
      store { id: i, name: "item", price: i * 3 } -> items { key: .id }
    }
  }
  run Load
}
`;
}

/** One run sending `count` POSTs, each a durable effect with its own Idempotency-Key. */
export function postMission(count: number): string {
  return `mission BenchPost {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  action Send {
    for i in range(0, ${count}) {
      post "/things" { body: { n: i } }
    }
  }
  run Send
}
`;
}

/** `iterations` sql store writes (4 events each: loop.iteration, step.started, store.write, step.completed), then a pause. */
export function replayMission(iterations: number): string {
  return `mission BenchReplay {
  store items: sql("bench_replay")
  action Load {
    for i in range(0, ${iterations}) {
      store { id: i, name: "item" } -> items { key: .id }
    }
    pause { resumeOn: webhook "/bench/go" }
  }
  run Load
}
`;
}

/** The common incremental-sync shape: a paginated GET, then the whole response into a sql store. */
export function syncMission(pageSize: number): string {
  return `mission BenchSync {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store records: sql("bench_records")
  action Sync {
    get "/records" { paginate: offset(offset, ${pageSize}) }
    store response -> records { key: .id }
  }
  run Sync
}
`;
}

/**
 * Pure steps only: per iteration one `let`, one `map` and one `validate`. Under `trace: full` each
 * writes step.started + step.completed (and the loop a loop.iteration per item); under
 * `trace: minimal` none of them writes an event.
 */
export function pureMission(iterations: number, trace: 'full' | 'minimal' = 'full'): string {
  return `mission BenchPure {
  trace: ${trace}
  schema Out { v: number, w: number }
  action Compute {
    for i in range(0, ${iterations}) {
      let x = i * 2
      map { v: x } -> Out { v: .v, w: .v + 1 }
      validate response { assume .v >= 0, assume .w > .v }
    }
  }
  run Compute
}
`;
}

/** The pure steps per iteration of pureMission (for steps/s). */
export const PURE_STEPS_PER_ITERATION = 3;

export interface BenchServer {
  url: string;
  /** POSTs received (all paths) and distinct Idempotency-Keys among them, so far. */
  stats(): Promise<{ posts: number; keys: number }>;
  close(): Promise<void>;
}

/**
 * Starts the bench API (bench-server.ts) in a child process, as a real API would be: its CPU does
 * not count against the engine under test, which runs in the bench's own process.
 */
export async function startBenchServer(total: number, pageSize: number): Promise<BenchServer> {
  const script = fileURLToPath(new URL('./bench-server.js', import.meta.url));
  const child = spawn(process.execPath, [script, String(total), String(pageSize)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bench server exited with code ${code} before listening`)));
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^listening (\d+)$/m.exec(out);
      if (match) resolve(Number(match[1]));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    stats: async () => {
      const res = await fetch(`${url}/stats`);
      return (await res.json()) as { posts: number; keys: number };
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
