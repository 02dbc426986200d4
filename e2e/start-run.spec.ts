/**
 * Starting and resuming runs: "New run" takes a .vague file dropped on it (or chosen), starts it
 * through the real CLI against the demo API, and opens it; a suspended run shows what it waits on,
 * since when and until when with a live countdown; a malformed resume payload is refused, a good
 * one resumes the run to completion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { RUN_SUSPENDED, seedStandardRuns } from './support/fixtures.js';
import { demoMissionText } from './support/seed-runs.js';
import { requireCli, startDemoApi, type DemoApi } from './support/demo.js';
import { screenshot } from './support/screenshots.js';

let studio: Studio;
let api: DemoApi;
let browser: Browser;
let page: Page;
let errors: string[];

beforeAll(async () => {
  requireCli();
  api = await startDemoApi();
  studio = await startStudio({ seed: async (log) => void (await seedStandardRuns(log)), service: { demoApiUrl: api.url } });
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, `${studio.url}#run=${RUN_SUSPENDED}&tab=timeline`));
});

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
  await api?.close();
});

describe('wait banner', () => {
  it('says what a suspended run waits on, since when, and counts down to its wake-up', async () => {
    const banner = page.getByRole('region', { name: 'Wait banner' });
    await banner.waitFor();
    // The engine names the wait in the run summary ('timer' for a pause with a duration).
    expect(await page.getByTestId('waiting-on').textContent()).toMatch(/^(timer|pause)/);
    const text = (await banner.textContent()) ?? '';
    expect(text).toContain('since');
    expect(text).toContain('until');
    const first = await page.getByTestId('countdown').textContent();
    expect(first).toMatch(/wakes in (1 h 59 m|2 h 00 m)/);
    await page.waitForTimeout(1100);
    await expect.poll(() => page.getByTestId('countdown').textContent()).toMatch(/wakes in/);
    await screenshot(page, 'wait-banner');
  });

  it('refuses a payload that is not JSON, with the parser message', async () => {
    await page.getByLabel('Resume payload').fill('{approved: yes}');
    await page.getByRole('button', { name: 'Resume run' }).click();
    expect(await page.getByRole('alert').first().textContent()).toContain('The payload is not JSON');
  });
});

describe('new run', () => {
  it('starts a dropped .vague mission and resumes its pause to completion', async () => {
    const runsBefore = await studio.log.countRuns();
    await page.getByRole('button', { name: 'New run' }).click();
    const dialog = page.getByRole('dialog', { name: 'Start a run' });
    await dialog.waitFor();
    // Drop the demo mission as a file, the way a user drags it from the file manager.
    const transfer = await page.evaluateHandle((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], 'orders.vague', { type: 'text/plain' }));
      return dt;
    }, demoMissionText().replace('pause { duration: "3s" }', 'pause { duration: "1h" }'));
    await page.getByLabel('Mission drop zone').dispatchEvent('drop', { dataTransfer: transfer });
    await expect.poll(() => page.getByLabel('Mission text').inputValue()).toContain('mission DemoOrders');
    expect(await page.getByLabel('Mission drop zone').textContent()).toContain('orders.vague');
    await page.getByLabel('Sources').fill(`Shop=${api.url}`);
    await screenshot(page, 'start-run');
    await page.getByRole('button', { name: 'Start run' }).click();
    await dialog.waitFor({ state: 'detached', timeout: 30_000 });

    // The new run is open; it fetches the orders, confirms them, then pauses for an hour.
    const runId = (await page.getByLabel('Run id').textContent())!;
    expect(runId).toMatch(/^run_/);
    // The status bar counts the new run without a reload (it stayed at the count the page loaded with).
    await expect.poll(() => page.locator('footer .num', { hasText: / runs$/ }).textContent(), { timeout: 10_000 }).toBe(`${runsBefore + 1} runs`);
    try {
      await expect.poll(() => page.locator('.run-header .status-badge').textContent(), { timeout: 30_000 }).toBe('suspended');
    } catch (e) {
      const events = await studio.log.read(runId);
      console.log(`[e2e] run ${runId} did not suspend; log ends with:`, JSON.stringify(events.slice(-3)), 'page errors:', errors);
      throw e;
    }
    expect(await page.getByTestId('waiting-on').textContent()).toMatch(/^(timer|pause)/);
    expect(await page.getByTestId('countdown').textContent()).toMatch(/wakes in (59 m|1 h)/);
    await page.getByLabel('Resume payload').fill('{"approvedBy": "e2e"}');
    await page.getByRole('button', { name: 'Resume run' }).click();
    try {
      await expect.poll(() => page.locator('.run-header .status-badge').textContent(), { timeout: 30_000 }).toBe('completed');
    } catch (e) {
      console.log('[e2e] run did not complete after resume; banner says:', await page.getByRole('region', { name: 'Wait banner' }).textContent().catch(() => 'no banner'));
      throw e;
    }
    // Every confirmation reached the demo API exactly once.
    const stats = api.stats();
    const keys = Object.values(stats.keys);
    expect(keys.length).toBe(7);
    expect(keys.every((k) => k.effects === 1)).toBe(true);
    expect(errors.filter((e) => !e.includes('http 4'))).toEqual([]);
  });

  it('rejects a file that is not a mission', async () => {
    await page.getByRole('button', { name: 'New run' }).click();
    await page.getByLabel('Mission file').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') });
    expect(await page.getByRole('dialog').getByRole('alert').textContent()).toContain('expected a .vague file');
    await page.getByRole('button', { name: 'Close' }).click();
  });
});
