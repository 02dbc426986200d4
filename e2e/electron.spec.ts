/**
 * The desktop app: the same renderer inside Electron (dist/electron/main.js), talking to the
 * studio service over the preload's `window.reqon` instead of HTTP. Runs only where an Electron
 * binary is installed (`require('electron')` resolves to an existing file); elsewhere the spec is
 * skipped and says why, so a skip is never mistaken for a pass.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { _electron, type ElectronApplication, type Page } from 'playwright-core';
import { openLog } from '../engine/log/open-log.js';
import { REPO_ROOT, seedDemoRun } from './support/seed-runs.js';
import { BASE_AT } from './support/fixtures.js';
import { CLI_PATH } from './support/studio.js';
import { screenshot } from './support/screenshots.js';

const MAIN = path.join(REPO_ROOT, 'dist', 'electron', 'main.js');

function electronBinary(): { path: string | null; reason: string } {
  try {
    const resolved = createRequire(import.meta.url)('electron') as unknown;
    if (typeof resolved === 'string' && fs.existsSync(resolved)) return { path: resolved, reason: '' };
    return { path: null, reason: `require('electron') gave ${JSON.stringify(resolved)}, which is not an existing file` };
  } catch (e) {
    return { path: null, reason: `require('electron') failed: ${(e as Error).message.split('\n')[0]}` };
  }
}

const binary = electronBinary();
const missing = binary.path === null ? binary.reason : !fs.existsSync(MAIN) ? `${MAIN} is not built (npm run build:studio)` : null;
if (missing) console.log(`[e2e] electron.spec.ts skipped: ${missing}`);

describe.skipIf(missing !== null)('desktop app (Electron)', () => {
  let app: ElectronApplication;
  let page: Page;
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-e2e-electron-'));
    const dbPath = path.join(dir, 'reqon.db');
    const log = await openLog(dbPath);
    await seedDemoRun(log, { runId: 'run-electron-0001', startAt: BASE_AT, outcome: 'completed', orders: 5 });
    await log.close();
    app = await _electron.launch({
      executablePath: binary.path!,
      args: ['--no-sandbox', MAIN],
      env: { ...process.env, REQON_DB: dbPath, REQON_STUDIO_CWD: dir, REQON_STUDIO_CLI: CLI_PATH },
    });
    page = await app.firstWindow();
  });

  afterAll(async () => {
    await app?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('uses the preload bridge and shows the seeded run', async () => {
    expect(await page.evaluate(() => typeof (window as unknown as { reqon?: unknown }).reqon)).toBe('object');
    await page.locator('tr[data-run-id="run-electron-0001"]').waitFor();
    expect(await page.getByTestId('connection-state').getAttribute('data-state')).toBe('open');
    await page.locator('.timeline-bar').first().waitFor();
    await screenshot(page, 'electron');
  });
});
