/**
 * One studio per spec: a temp directory with its own SQLite log, seeded by the spec, and the real
 * studio server (engine/server) started in this process on 127.0.0.1 with a port picked by the
 * OS, serving the renderer the e2e global setup built (its own directory, `rendererDist`). `stop()` closes the server, the service and
 * the seeding log, and removes the temp directory.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import type { EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { createStudioService, type StudioService, type StudioServiceOptions } from '../../engine/server/studio-service.js';
import { startStudioServer, type StudioServer } from '../../engine/server/studio-server.js';
import { REPO_ROOT } from './seed-runs.js';

export const RENDERER_DIST = inject('rendererDist');
export const CLI_PATH = path.join(REPO_ROOT, 'dist', 'engine', 'cli', 'main.js');

export interface Studio {
  url: string;
  dir: string;
  dbPath: string;
  /** A second connection to the same log, for seeding and live appends. */
  log: EventLog;
  service: StudioService;
  server: StudioServer;
  /** Closes the HTTP/WebSocket server (the service keeps running), as if the studio went away. */
  dropServer(): Promise<void>;
  /** Starts the server again on the same port and token, so open pages can reconnect. */
  restartServer(): Promise<void>;
  stop(): Promise<void>;
}

export interface StudioOptions {
  seed?: (log: EventLog, dir: string) => Promise<void>;
  service?: Partial<StudioServiceOptions>;
}

export async function startStudio(options: StudioOptions = {}): Promise<Studio> {
  if (!fs.existsSync(path.join(RENDERER_DIST, 'index.html'))) {
    throw new Error(`${RENDERER_DIST}/index.html is missing: the e2e global setup builds the renderer there (with REQON_E2E_SKIP_BUILD=1 it is renderer/dist: npm run build:renderer).`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-e2e-'));
  const dbPath = path.join(dir, 'reqon.db');
  const log = await openLog(dbPath);
  let service: StudioService | null = null;
  let server: StudioServer | null = null;
  try {
    await options.seed?.(log, dir);
    service = await createStudioService({ dbPath, cliPath: CLI_PATH, cwd: dir, pollIntervalMs: 100, ...options.service });
    server = await startStudioServer({ service, staticDir: RENDERER_DIST, port: 0 });
  } catch (e) {
    await server?.close();
    await service?.close();
    await log.close();
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  let s = server;
  let up = true;
  const svc = service;
  return {
    url: s.url,
    dir,
    dbPath,
    log,
    service: svc,
    get server() {
      return s;
    },
    async dropServer() {
      if (up) await s.close();
      up = false;
    },
    async restartServer() {
      if (up) return;
      s = await startStudioServer({ service: svc, staticDir: RENDERER_DIST, port: s.port, token: s.token });
      up = true;
    },
    async stop() {
      if (up) await s.close();
      await svc.close();
      await log.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
