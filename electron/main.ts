/**
 * The desktop shell's main process: one window on the renderer's build, and the studio service
 * answering its requests over IPC.
 *
 * The window is locked down (contextIsolation, sandbox, no Node integration, a strict CSP set on
 * every response of the session — the server's, from engine/server/csp.ts — no navigation, no new
 * windows). The page is served from its own privileged scheme (`reqon-studio://app`, see
 * app-protocol.ts), never from file://, and IPC answers only a frame of that origin; the renderer
 * reaches the engine only through the preload's `window.reqon` and only on the channels of
 * protocol.ts. The service
 * lives here, but runs never do: it starts them as CLI child processes, so a crash point kills a
 * run's process and never the app. Configuration comes from `reqon studio` through REQON_* vars.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, ipcMain, protocol, session, type IpcMainInvokeEvent } from 'electron';
import { headerCsp } from '../engine/server/csp.js';
import { isRequestChannel } from '../engine/protocol/channels.js';
import type { RequestChannel } from '../engine/protocol/protocol.js';
import { toProtocolError, StudioError } from '../engine/server/studio-error.js';
import { createStudioService, type StudioService } from '../engine/server/studio-service.js';
import { APP_INDEX_URL, APP_SCHEME, isAppPage, resolveAppRequest } from './app-protocol.js';
import { INVOKE_CHANNEL, PUSH_CHANNEL, type InvokeReply } from './ipc-channels.js';

const here = path.dirname(fileURLToPath(import.meta.url)); // dist/electron
const root = path.resolve(here, '..', '..');
const rendererDist = path.join(root, 'renderer', 'dist');

// Before `ready`: a standard, secure scheme gets an origin of its own, so 'self', fetch of
// relative assets and ES modules behave as on https; no bypass of CSP.
protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } }]);

function env(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

let service: StudioService | null = null;

async function openWindow(studio: StudioService): Promise<void> {
  const win = new BrowserWindow({
    width: 1440,
    height: 900,
    title: 'Reqon Studio',
    backgroundColor: '#0f1115',
    icon: path.join(root, 'assets', 'icons', '512x512.png'),
    webPreferences: {
      preload: path.join(here, 'preload.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
    },
  });
  win.webContents.setWindowOpenHandler(() => ({ action: 'deny' }));
  win.webContents.on('will-navigate', (event) => event.preventDefault());
  const unsubscribe = studio.subscribe((channel, payload) => {
    if (!win.isDestroyed()) win.webContents.send(PUSH_CHANNEL, channel, payload);
  });
  win.on('closed', unsubscribe);
  await win.loadURL(APP_INDEX_URL);
}

/** Only our own page may invoke: a frame of another origin, or that navigated elsewhere, gets nothing. */
function fromOurPage(event: IpcMainInvokeEvent): boolean {
  return isAppPage(event.senderFrame?.url ?? '');
}

async function start(): Promise<void> {
  await app.whenReady();
  protocol.handle(APP_SCHEME, (request) => {
    const file = resolveAppRequest(rendererDist, request.url);
    if (file === null) return new Response('not found', { status: 404, headers: { 'content-type': 'text/plain' } });
    return new Response(new Uint8Array(file.body), {
      status: 200,
      headers: { 'content-type': file.contentType, 'content-security-policy': headerCsp(), 'x-content-type-options': 'nosniff' },
    });
  });
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [headerCsp()] } });
  });
  session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));

  const cwd = env('REQON_STUDIO_CWD') ?? process.cwd();
  service = await createStudioService({
    dbPath: env('REQON_DB') ?? path.join(cwd, '.reqon', 'reqon.db'),
    cliPath: env('REQON_STUDIO_CLI') ?? path.join(root, 'dist', 'engine', 'cli', 'main.js'),
    cwd,
    demoApiUrl: env('REQON_DEMO_API_URL'),
    demoMissionPath: env('REQON_DEMO_MISSION'),
  });
  const studio = service;

  ipcMain.handle(INVOKE_CHANNEL, async (event, channel: unknown, req: unknown): Promise<InvokeReply> => {
    try {
      if (!fromOurPage(event)) throw new StudioError('bad-request', 'requests are accepted from the studio page only');
      if (typeof channel !== 'string' || !isRequestChannel(channel)) throw new StudioError('bad-request', `unknown channel "${String(channel)}"`);
      return { ok: true, value: await studio.handle(channel as RequestChannel, req as never) };
    } catch (e) {
      return { ok: false, error: toProtocolError(e) };
    }
  });

  await openWindow(studio);
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) void openWindow(studio);
  });
}

app.on('window-all-closed', () => {
  void (service?.close() ?? Promise.resolve()).finally(() => app.quit());
});

start().catch((e: unknown) => {
  process.stderr.write(`reqon studio: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  app.exit(1);
});
