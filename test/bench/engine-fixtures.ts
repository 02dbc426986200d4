/**
 * What the engine bench runs against: the missions (as text, generated with the sizes the bench
 * asks for), a local HTTP server on 127.0.0.1 (a POST sink and a deterministic paginated list),
 * and the temp folder for the logs — on the same disk as the working directory, because the disk
 * that holds the database is the one whose fsync rate is the yardstick.
 */
import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
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
  /** POSTs received (all paths). */
  posts: number;
  /** Distinct Idempotency-Keys seen on POSTs. */
  keys: Set<string>;
  close(): Promise<void>;
}

/**
 * `POST /things` → 201 `{ok: true}`; `GET /records?offset=N` → the page of `pageSize` records
 * starting at N of a list of `total` records (an empty page past the end). Keeps no record of
 * GETs, so it can serve a million records without growing.
 */
export async function startBenchServer(total: number, pageSize: number): Promise<BenchServer> {
  const state = { posts: 0, keys: new Set<string>() };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'POST') {
      req.resume();
      req.on('end', () => {
        state.posts++;
        const key = req.headers['idempotency-key'];
        if (typeof key === 'string') state.keys.add(key);
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
      return;
    }
    if (req.method === 'GET' && url.pathname === '/records') {
      const offset = Number(url.searchParams.get('offset') ?? '0');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(recordsPage(offset, Math.max(0, Math.min(pageSize, total - offset))));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"not found"}');
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get posts() {
      return state.posts;
    },
    keys: state.keys,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function recordsPage(offset: number, count: number): string {
  const parts: string[] = [];
  for (let i = offset; i < offset + count; i++) {
    parts.push(`{"id":${i},"name":"record ${i}","price":${i % 997},"active":${i % 3 === 0}}`);
  }
  return `[${parts.join(',')}]`;
}
