/**
 * Replay diff: verifying a real run (made by the CLI against the demo API) against its own log
 * matches entry for entry; verifying it against an edited mission shows original and replayed
 * step paths and effect IDs side by side with the divergence highlighted and explained.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { completedDemoRun, requireCli, startDemoApi, type DemoApi } from './support/demo.js';
import { demoMissionText } from './support/seed-runs.js';
import { screenshot } from './support/screenshots.js';

let studio: Studio;
let api: DemoApi;
let browser: Browser;
let page: Page;
let errors: string[];
let runId: string;

beforeAll(async () => {
  requireCli();
  api = await startDemoApi();
  studio = await startStudio({ service: { demoApiUrl: api.url } });
  runId = await completedDemoRun(studio.dbPath, studio.dir, api);
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, `${studio.url}#run=${runId}&tab=replay`));
});

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
  await api?.close();
});

describe('replay diff', () => {
  it('replays the run against its own mission without a divergence', async () => {
    await page.getByRole('button', { name: 'Verify replay' }).click();
    await page.locator('[data-testid="verify-verdict"], .replay-diff .error-box').first().waitFor({ timeout: 60_000 });
    expect(await page.locator('.replay-diff .error-box').count(), (await page.locator('.replay-diff .error-box').allTextContents()).join()).toBe(0);
    await expect.poll(() => page.getByTestId('verify-verdict').textContent()).toContain('replay matches');
    expect(await page.getByTestId('verify-verdict').textContent()).toContain('against the recorded mission');
    const rows = page.locator('.verify-row');
    expect(await rows.count()).toBeGreaterThan(10);
    expect(await page.locator('.verify-row[data-state="divergent"]').count()).toBe(0);
    // Effect IDs line up on both sides.
    const first = page.locator('.verify-row', { has: page.locator('.effect-id:not(:empty)') }).first();
    const ids = await first.locator('.effect-id').allTextContents();
    expect(ids[0]).toBe(ids[1]);
  });

  it('shows where an edited mission diverges, and why', async () => {
    await page.getByLabel('Use an edited mission').check();
    const editor = page.getByLabel('Edited mission text');
    await expect.poll(() => editor.inputValue()).toContain('mission DemoOrders');
    // Confirm before storing: the step order changes, so replay must refuse it.
    const edited = demoMissionText().replace(
      /( *)store response -> orders \{ key: \.id \}\n( *post "\/confirmations".*\n)/,
      (_m, indent: string, post: string) => `${post}${indent}store response -> orders { key: .id }\n`,
    );
    expect(edited).not.toBe(demoMissionText());
    await editor.fill(edited);
    await page.getByRole('button', { name: 'Verify replay' }).click();
    await expect.poll(() => page.getByTestId('verify-verdict').textContent(), { timeout: 30_000 }).toContain('diverges');
    const divergence = page.getByRole('alert', { name: 'Divergence' });
    const text = (await divergence.textContent()) ?? '';
    // An edit is called an edit, not non-determinism.
    expect(text).toContain('The edit changes what the run already did');
    expect(text).toContain('recorded');
    expect(text).toContain('asked');
    expect(await page.locator('.verify-row[data-state="divergent"]').count()).toBe(1);
    // The edit and its diff are still there after a look at another tab (helper 83: both were lost).
    await page.getByRole('tab', { name: 'Timeline' }).click();
    await page.getByRole('tab', { name: 'Replay diff' }).click();
    expect(await page.getByLabel('Edited mission text').inputValue()).toBe(edited);
    expect(await page.getByTestId('verify-verdict').textContent()).toContain('diverges');
    expect(await page.locator('.verify-row[data-state="divergent"]').count()).toBe(1);
    await screenshot(page, 'replay-diff');
    expect(await page.locator('.verify-row[data-state="divergent"] .differs').count()).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  });

  it('words an edited request as the edit it is: line, old and new request', async () => {
    const edited = demoMissionText().replace('post "/confirmations"', 'post "/audit"');
    expect(edited).not.toBe(demoMissionText());
    const line = demoMissionText().split('\n').findIndex((l) => l.includes('post "/confirmations"')) + 1;
    await page.getByLabel('Edited mission text').fill(edited);
    await page.getByRole('button', { name: /Verify/ }).click();
    await expect.poll(() => page.getByTestId('verify-verdict').textContent(), { timeout: 30_000 }).toContain('the edit diverges');
    await expect.poll(() => page.getByTestId('divergence-change').textContent()).toBe(`line ${line}: POST /confirmations became POST /audit`);
    expect(await page.getByTestId('verify-verdict').textContent()).toContain('against the edited mission');
    expect(errors).toEqual([]);
  });

  it('marks a verdict out of date once the text changes, and refuses an empty edit', async () => {
    // A verdict for the text in the box…
    await page.getByLabel('Edited mission text').fill(demoMissionText());
    await page.getByRole('button', { name: 'Verify replay' }).click();
    const verdict = page.getByTestId('verify-verdict');
    await expect.poll(() => verdict.textContent(), { timeout: 30_000 }).toContain('replay matches');
    expect(await verdict.getAttribute('data-stale')).toBe('false');
    // …is no longer the verdict once the text changes: it says so, and is no ✓ colour.
    await page.getByLabel('Edited mission text').fill(`${demoMissionText()}\n`);
    expect(await verdict.textContent()).toContain('the text changed since this verdict');
    expect(await verdict.getAttribute('class')).toContain('stale');
    // What it drew (its table) is dimmed and said to be out of date too, not left as current (helper 90).
    expect(await page.locator('.replay-diff-result').getAttribute('data-stale')).toBe('true');
    expect(await page.getByRole('note', { name: 'Out of date' }).textContent()).toContain('The verdict below is out of date');
    // An empty or blank edit is not verified as the recorded mission: the button says why it cannot.
    await page.getByLabel('Edited mission text').fill('   \n');
    expect(await page.getByRole('button', { name: 'Verify replay' }).isDisabled()).toBe(true);
    expect(await page.getByRole('note', { name: 'Nothing to verify' }).textContent()).toContain('The edited mission is empty');
    expect(await verdict.textContent()).not.toMatch(/^✓[^—]*$/);
    // The edit is kept across a reload (helper 90: it was lost); a verdict is asked for again.
    await page.getByLabel('Edited mission text').fill(`${demoMissionText()}\n// kept\n`);
    await page.reload();
    await expect.poll(() => page.getByLabel('Edited mission text').inputValue(), { timeout: 15_000 }).toBe(`${demoMissionText()}\n// kept\n`);
    expect(await page.getByLabel('Use an edited mission').isChecked()).toBe(true);
    expect(errors).toEqual([]);
  });
});
