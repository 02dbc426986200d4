/**
 * State view (the scrubber): a slider over seq with keyboard stepping (←/→, Shift ×10, Home/End);
 * at each position the folded stores, variables and response; the mission source with the current
 * step's line highlighted; and "compare with…" showing the state diff between two positions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { RUN_COMPLETED, seedStandardRuns } from './support/fixtures.js';
import { demoMissionText } from './support/seed-runs.js';
import { screenshot } from './support/screenshots.js';

let studio: Studio;
let browser: Browser;
let page: Page;
let errors: string[];
let lastSeq = 0;
let postSeq = 0;

beforeAll(async () => {
  studio = await startStudio({
    seed: async (log) => {
      await seedStandardRuns(log);
      lastSeq = (await log.getRun(RUN_COMPLETED))!.lastSeq;
      const events = await log.read(RUN_COMPLETED);
      postSeq = events.find((e) => e.type === 'http.request' && e.stepPath === 'Sync/1[3]/3')!.seq;
    },
  });
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, `${studio.url}#run=${RUN_COMPLETED}&tab=state`));
});

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

const position = async () => Number(/#(\d+) \//.exec((await page.getByTestId('scrub-position').textContent()) ?? '')?.[1]);
const storeCount = async (name: string) => Number(await page.getByRole('tab', { name: new RegExp(`^${name}`) }).locator('.count').textContent());
const lineOf = (needle: string) => demoMissionText().split('\n').findIndex((l) => l.includes(needle)) + 1;

describe('state scrubber', () => {
  it('starts at the end of the run with every store filled', async () => {
    await page.getByLabel('Stores').waitFor();
    expect(await position()).toBe(lastSeq);
    await expect.poll(() => storeCount('orders')).toBe(7);
    expect(await storeCount('confirmations')).toBe(7);
    expect(await storeCount('summary')).toBe(1);
    expect(await page.getByLabel('Checkpoints').textContent()).toContain('orders-sync');
  });

  it('steps with the keyboard and shows the state at each seq', async () => {
    await page.getByRole('slider', { name: 'Position' }).focus();
    await page.keyboard.press('Home');
    await expect.poll(position).toBe(1);
    await expect.poll(() => storeCount('orders')).toBe(0);
    await page.keyboard.press('ArrowRight');
    await expect.poll(position).toBe(2);
    await page.keyboard.press('Shift+ArrowRight');
    await expect.poll(position).toBe(12);
    await page.keyboard.press('ArrowLeft');
    await expect.poll(position).toBe(11);
    await page.keyboard.press('End');
    await expect.poll(position).toBe(lastSeq);
  });

  it('highlights the current step in the mission source and scrolls it into view', async () => {
    // Jump to the POST of the fourth order (the slider takes a typed value like any range input).
    const postLine = lineOf('post "/confirmations"');
    await page.getByRole('slider', { name: 'Position' }).fill(String(postSeq));
    await expect.poll(position).toBe(postSeq);
    await expect.poll(() => page.locator('.source-line.current').getAttribute('data-line')).toBe(String(postLine));
    const inView = await page.locator('.source-line.current').evaluate((el) => {
      const box = el.getBoundingClientRect();
      const parent = el.closest('.source-code')!.getBoundingClientRect();
      return box.top >= parent.top && box.bottom <= parent.bottom;
    });
    expect(inView).toBe(true);
    expect(await page.getByRole('region', { name: 'Variables', exact: true }).textContent()).not.toBe('');
    await page.getByRole('tab', { name: /^orders/ }).click();
    await page.locator('.records-row').first().click();
    await expect.poll(() => page.getByLabel(/^Record o-/).count()).toBe(1);
    await screenshot(page, 'state');
  });

  it('compares two positions with the engine state diff', async () => {
    await page.getByRole('slider', { name: 'Position' }).focus();
    await page.keyboard.press('Home');
    await expect.poll(position).toBe(1);
    await page.getByRole('button', { name: 'Compare with…' }).click();
    await page.getByRole('slider', { name: 'Position' }).focus();
    await page.keyboard.press('End');
    await expect.poll(() => page.getByLabel('Diff entries').locator('tbody tr').count()).toBeGreaterThan(7);
    const text = await page.getByLabel('State diff').textContent();
    expect(text).toContain('o-1001');
    expect(text).toContain('added');
    await screenshot(page, 'state-compare');
    await page.getByRole('button', { name: 'Stop comparing' }).click();
    await page.getByLabel('Stores').waitFor();
    expect(errors).toEqual([]);
  });
});
