/**
 * The first five minutes: `reqon studio --demo` (what `npm start` runs) opens on a demo run that
 * is still going — long enough to watch — is killed by SIGKILL partway, restarted by the studio's
 * worker, replays its prefix and completes; the page says what the demo does and what to try, and
 * each "try this" link opens its tab. Also: the printed URL's token leaves the address bar.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage } from './support/browser.js';
import { CLI_PATH, RENDERER_DIST } from './support/studio.js';
import { requireCli } from './support/demo.js';
import { screenshot } from './support/screenshots.js';

let dir: string;
let child: ChildProcess;
let output = '';
let browser: Browser;
let page: Page;

beforeAll(async () => {
  requireCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-e2e-demo-'));
  child = spawn(process.execPath, [CLI_PATH, 'studio', '--demo', '--no-open', '--db', path.join(dir, 'reqon.db')], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    // The renderer this e2e run built (not renderer/dist, which a fresh clone does not have).
    env: { ...process.env, REQON_RENDERER_DIR: RENDERER_DIST },
  });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`reqon studio --demo printed no URL:\n${output}`)), 60_000);
    const look = () => {
      const m = /^(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)$/m.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      } else setTimeout(look, 50);
    };
    look();
  });
  browser = await launchBrowser();
  ({ page } = await openPage(browser, url));
}, 90_000);

afterAll(async () => {
  await browser?.close();
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGINT');
    await exited;
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('reqon studio --demo', () => {
  it('opens on the demo run while it runs, with what it does and what to try; the token is gone from the address', async () => {
    const runId = /^demo run (\S+)/m.exec(output)![1]!;
    expect(new URL(page.url()).searchParams.has('token')).toBe(false);
    await page.getByRole('complementary', { name: 'Try this' }).waitFor({ timeout: 15_000 });
    expect(await page.getByLabel('Run id').textContent()).toBe(runId);
    // Still going when the page is up: long enough to watch.
    expect(await page.getByLabel('Run header').locator('.status-badge').getAttribute('data-status')).toBe('running');
    await screenshot(page, 'demo-first-screen');
  }, 30_000);

  it('shows the crash, the restart and the end, every effect once', async () => {
    const stat = (name: string) => page.getByLabel('Run header').locator('dt', { hasText: name }).locator('xpath=following-sibling::dd');
    await expect.poll(() => stat('crashes survived').textContent(), { timeout: 60_000, interval: 250 }).toBe('1');
    await expect.poll(() => page.getByLabel('Run header').locator('.status-badge').getAttribute('data-status'), { timeout: 60_000, interval: 250 }).toBe('completed');
    const api = /^demo API (\S+)$/m.exec(output)![1]!;
    const stats = (await (await fetch(`${api}/__stats`)).json()) as { effects: number; keys: Record<string, { effects: number }> };
    expect(stats.effects).toBe(7);
    for (const k of Object.values(stats.keys)) expect(k.effects).toBe(1);
    await screenshot(page, 'demo-survived');
  }, 90_000);

  it('each "try this" link opens its tab', async () => {
    const hint = page.getByRole('complementary', { name: 'Try this' });
    for (const [link, tab] of [['Crash lab', 'crashlab'], ['State', 'state'], ['Replay diff', 'replay']] as const) {
      await hint.getByRole('button', { name: link, exact: true }).click();
      await page.getByRole('tabpanel', { name: tab }).waitFor();
    }
  }, 30_000);
});
