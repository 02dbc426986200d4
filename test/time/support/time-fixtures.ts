/**
 * Shared by the time suite's in-process tests: a temp log on either backend (test/support/
 * temp-log.ts; SQLite by default), a mission written to a temp dir, a fake env whose HTTP counts
 * effects per Idempotency-Key, and a worker on that env.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createFakeEnv, jsonResponse, type FakeEnv, type FakeHandler } from '../../../engine/env/fake-env.js';
import type { EventLog, MissionFiles } from '../../../engine/log/log.js';
import { openLog } from '../../../engine/log/open-log.js';
import { Worker } from '../../../engine/worker/worker.js';
import { tempLogTarget, type Backend } from '../../support/temp-log.js';

export interface TimeWorld {
  dir: string;
  dbPath: string;
  log: EventLog;
  env: FakeEnv;
  /** Applied effects per Idempotency-Key (a replayed key is answered, not applied again). */
  applied: Map<string, number>;
  mission(name: string, text: string): MissionFiles;
  worker(owner?: string, progress?: (line: string) => void): Worker;
  cleanup(): Promise<void>;
}

export async function timeWorld(opts: { handler?: FakeHandler; now?: number; backend?: Backend } = {}): Promise<TimeWorld> {
  const target = await tempLogTarget(opts.backend ?? 'sqlite', 'reqon-time-');
  const { dir, target: dbPath } = target;
  let log: EventLog;
  try {
    log = await openLog(dbPath);
  } catch (error) {
    await target.drop();
    throw error;
  }
  const applied = new Map<string, number>();
  const answered = new Set<string>();
  const env = createFakeEnv({
    ...(opts.now !== undefined ? { now: opts.now } : {}),
    handler: async (req) => {
      const key = Object.entries(req.headers).find(([name]) => name.toLowerCase() === 'idempotency-key')?.[1];
      if (key !== undefined && !answered.has(key)) {
        answered.add(key);
        applied.set(key, (applied.get(key) ?? 0) + 1);
      }
      return opts.handler ? opts.handler(req) : jsonResponse(200, { ok: true });
    },
  });
  const workers: Worker[] = [];
  return {
    dir,
    dbPath,
    log,
    env,
    applied,
    mission(name, text) {
      const file = path.join(dir, name);
      fs.writeFileSync(file, text);
      return { entry: file, files: [{ path: file, text }] };
    },
    worker(owner = `test-worker-${workers.length}`, progress) {
      const w = new Worker({ log, env, dataDir: path.join(dir, 'data'), owner, pollMs: 100, ...(progress ? { progress } : {}) });
      workers.push(w);
      return w;
    },
    async cleanup() {
      for (const w of workers) {
        w.stop();
        await w.drain();
      }
      await log.close();
      await target.drop();
    },
  };
}

export const DAY = 86_400_000;
