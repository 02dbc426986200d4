/**
 * `reqon studio [--port PORT] [--no-open] [--db PATH] [--demo]` — open Reqon Studio.
 *
 * With an Electron binary installed (`require('electron')` names an existing file) the desktop
 * shell is launched; otherwise one line says so and the browser build is served on 127.0.0.1:
 * the URL (with its session token) is printed, and a browser is opened unless `--no-open`.
 * `--demo` first starts the demo API (assets/demo/demo-api.mjs) and a run of the demo mission
 * against it. The command stays up until SIGINT/SIGTERM and then stops everything it started
 * (runs it spawned keep going: they are durable and independent of their viewer).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { CliError } from '../cli-error.js';
import type { CliIo, CommandModule } from '../command-module.js';
import { EXIT_OK, type ExitCode } from '../exit-codes.js';
import { openFailure } from '../engine-context.js';
import { isPostgresUrl, otherUrlScheme } from '../../log/open-log.js';
import { importEsm } from '../../env/import-esm.js';
import { createStudioService, type StudioService } from '../../server/studio-service.js';
import { startStudioServer } from '../../server/studio-server.js';

interface DemoApi {
  url: string;
  close(): Promise<void>;
}

/** The package root: the folder holding package.json above dist/engine/cli/commands (or engine/cli/commands). */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i += 1) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'assets'))) return dir;
    dir = path.dirname(dir);
  }
  return process.cwd();
}

/** The Electron binary when one is installed, else null (the npm package without its download). */
export function electronBinary(): string | null {
  try {
    const resolved: unknown = createRequire(import.meta.url)('electron');
    return typeof resolved === 'string' && fs.existsSync(resolved) ? resolved : null;
  } catch {
    return null;
  }
}

function parsePort(value: unknown): number {
  if (value === undefined) return 0;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`--port must be an integer between 0 and 65535, got "${String(value)}"`);
  return port;
}

/** Opens `url` in the desktop's browser if an opener exists; never fails the command. */
function openBrowser(url: string, io: CliIo): void {
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'cmd' : 'xdg-open';
  const args = process.platform === 'win32' ? ['/c', 'start', '', url] : [url];
  try {
    const child = spawn(opener, args, { stdio: 'ignore', detached: true });
    child.once('error', () => io.stderr(`reqon studio: could not open a browser (${opener} not found); open the URL above yourself\n`));
    child.unref();
  } catch {
    io.stderr('reqon studio: could not open a browser; open the URL above yourself\n');
  }
}

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const done = (signal: NodeJS.Signals) => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve(signal);
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}

async function startDemoApi(root: string, io: CliIo): Promise<DemoApi> {
  const modulePath = path.join(root, 'assets', 'demo', 'demo-api.mjs');
  const mod = await importEsm<{ startDemoApi: (o?: { port?: number; latencyMs?: number }) => Promise<DemoApi> }>(pathToFileURL(modulePath).href);
  const api = await mod.startDemoApi({ latencyMs: DEMO_LATENCY_MS });
  io.stdout(`demo API ${api.url}\n`);
  return api;
}

/**
 * The demo a newcomer opens the studio on: a run to watch live, about 20 s (every answer of the
 * demo API takes DEMO_LATENCY_MS), killed by SIGKILL right after its third confirmation was sent
 * and before its answer was logged (DEMO_CRASH_AT), then taken over by the studio's worker, which
 * replays the logged prefix — the third confirmation is sent again under its Idempotency-Key and
 * not applied twice — and carries on to the end. The page says what to try next.
 */
const DEMO_LATENCY_MS = 1500;
const DEMO_CRASH_AT = 'after-effect:6';

async function startDemoRun(service: StudioService, missionPath: string, api: DemoApi, io: CliIo): Promise<void> {
  try {
    const { runId } = await service.handle('run.start', { missionPath, sources: { Shop: api.url }, crashAt: DEMO_CRASH_AT });
    io.stdout(`demo run ${runId} (watch it: it is killed at ${DEMO_CRASH_AT} and restarted)\n`);
  } catch (e) {
    // The studio is still useful without the demo run (the runs already in the log), so say why and go on.
    io.stderr(`reqon studio: the demo run did not start: ${(e as Error).message}\n`);
  }
}

export const command: CommandModule = {
  configure(cmd: Command): void {
    cmd
      .option('--port <port>', 'port on 127.0.0.1 for the browser build (default: a free one)')
      .option('--no-open', 'do not open a browser')
      .option('--demo', 'start the demo API and a demo run first');
  },

  async run(_args: unknown[], options: Record<string, unknown>, io: CliIo): Promise<ExitCode> {
    const port = parsePort(options['port']);
    const root = packageRoot();
    const cwd = process.cwd();
    const dbOption = (options['db'] as string | undefined) ?? process.env['REQON_DB'] ?? path.join('.reqon', 'reqon.db');
    // A postgres:// URL is the log many workers share: the studio shows it live like a file.
    // Any other URL is left as it is, for the log to refuse by its scheme (resolved, it was a folder).
    const dbPath = isPostgresUrl(dbOption) || otherUrlScheme(dbOption) !== undefined ? dbOption : path.resolve(cwd, dbOption);
    const cliPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'main.js');

    const electron = electronBinary();
    const demoMissionPath = path.join(root, 'assets', 'demo', 'orders.vague');
    const demo = options['demo'] === true ? await startDemoApi(root, io) : null;
    let service: StudioService;
    try {
      service = await createStudioService({ dbPath, cliPath, cwd, demoApiUrl: demo?.url, demoMissionPath: demo ? demoMissionPath : undefined });
    } catch (e) {
      await demo?.close();
      // The same one-line refusals as every command's (a newer log, another program's database, a device, a locked file …).
      throw openFailure(dbPath, e);
    }
    try {
      if (demo !== null) await startDemoRun(service, demoMissionPath, demo, io);
      if (electron !== null) {
        const main = path.join(root, 'dist', 'electron', 'main.js');
        if (!fs.existsSync(main)) throw new CliError(`the Electron shell is not built (${main}); run npm run build:studio first`);
        await service.close();
        const child = spawn(electron, [main], {
          stdio: 'inherit',
          env: { ...process.env, REQON_DB: dbPath, REQON_STUDIO_CLI: cliPath, REQON_STUDIO_CWD: cwd, REQON_DEMO_API_URL: demo?.url ?? '', REQON_DEMO_MISSION: demo ? demoMissionPath : '' },
        });
        await new Promise<void>((resolve) => child.once('close', () => resolve()));
        return EXIT_OK;
      }

      io.stdout('Electron is not available here; serving the browser build of the studio instead.\n');
      // $REQON_RENDERER_DIR serves another build of the renderer (the e2e suite builds its own).
      const staticDir = process.env['REQON_RENDERER_DIR'] || path.join(root, 'renderer', 'dist');
      const server = await startStudioServer({ service, staticDir, port });
      io.stdout(`${server.url}\n`);
      if (options['open'] !== false) openBrowser(server.url, io);
      await untilSignal();
      await server.close();
      return EXIT_OK;
    } finally {
      await service.close();
      await demo?.close();
    }
  },
};
