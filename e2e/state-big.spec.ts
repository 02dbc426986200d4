/**
 * State on a 100k-event run whose `response` is 25k records (seeded straight into the log, see
 * test/bench/studio-big-run.ts): the engine sends the response as a window of 500 records and
 * the tree says so ("items 0–499 of 25,000"), keeping only the rows in sight in the DOM; a record
 * opens on click and stays open while scrubbing; "go to item" reaches the last record; the loop
 * variable is the record the loop is at. How fast it is lives in
 * `npm run bench` (studio-state.bench.ts), not here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { bigOrder, seedBigRun, type BigRun } from '../test/bench/studio-big-run.js';

const RUN_ID = 'big-state-100k';
const RECORDS = 25_000;

let studio: Studio;
let browser: Browser;
let page: Page;
let errors: string[];
let run: BigRun;

beforeAll(async () => {
  studio = await startStudio({ seed: async (log) => void (run = await seedBigRun(log, { runId: RUN_ID, total: 100_000, records: RECORDS })) });
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, `${studio.url}#run=${RUN_ID}&tab=state`));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

const response = () => page.getByLabel('Response JSON');
const position = async () => Number(/#(\d+) \//.exec((await page.getByTestId('scrub-position').textContent()) ?? '')?.[1]);

describe('State on a 100k-event run with a 25k-record response', () => {
  it('lists the 25k records with only the rows in sight in the DOM', async () => {
    expect(run.lastSeq).toBe(100_000);
    const slider = page.getByRole('slider', { name: 'Position' });
    await slider.waitFor({ timeout: 60_000 });
    const inLoop = run.responseSeq + 600;
    await slider.fill(String(inLoop));
    await expect.poll(position, { timeout: 30_000 }).toBe(inLoop);
    await expect.poll(() => response().locator('.json-row').first().textContent(), { timeout: 30_000 }).toBe(`▾[${RECORDS} items]items 0–499 of 25,000◀▶`);
    expect(Number(await response().getAttribute('data-rows'))).toBe(500 + 1);
    const inDom = await response().locator('.json-row').count();
    expect(inDom).toBeGreaterThan(5);
    expect(inDom).toBeLessThan(100);
  });

  it('shows the record the loop is at as the loop variable', async () => {
    const variables = page.getByRole('region', { name: 'Variables', exact: true });
    // Iterations start three events after the response, six events each: seq responseSeq + 600 is in iteration 99.
    await expect.poll(() => variables.textContent()).toContain(`order:{5 keys}id:"${String(bigOrder(99).id)}"`);
  });

  it('opens a record on click, keeps it open while scrubbing, and scrolls to the last record', async () => {
    const second = response().locator('.json-row', { hasText: /^▸1:/ });
    await second.click();
    await expect.poll(() => response().locator('.json-row', { hasText: new RegExp(`^id:"${String(bigOrder(1).id)}"$`) }).count()).toBe(1);
    const before = await position();
    await page.getByRole('slider', { name: 'Position' }).focus();
    await page.keyboard.press('ArrowRight');
    await expect.poll(position).toBe(before + 1);
    await expect.poll(() => page.locator('.scrubber-state .seq-chip').textContent()).toBe(`#${before + 1}`);
    expect(await response().locator('.json-row', { hasText: new RegExp(`^id:"${String(bigOrder(1).id)}"$`) }).count()).toBe(1);
    expect(Number(await response().getAttribute('data-rows'))).toBe(500 + 1 + Object.keys(bigOrder(1)).length);

    // The last record: go to it (the engine sends the window that holds it), then scroll down.
    const goTo = page.getByLabel('Go to item of $');
    await goTo.fill(String(RECORDS - 1));
    await goTo.press('Enter');
    await expect.poll(() => response().locator('.json-row').first().textContent()).toContain('items 24,500–24,999 of 25,000');
    await response().evaluate((el) => (el.scrollTop = el.scrollHeight));
    const last = String(RECORDS - 1);
    await expect.poll(() => response().locator('.json-row', { hasText: new RegExp(`^▸${last}:\\{id: "${String(bigOrder(RECORDS - 1).id)}"`) }).count()).toBe(1);
    // Back a window with ◀ (in the array's own row, at the top).
    await response().evaluate((el) => (el.scrollTop = 0));
    await page.getByLabel('Previous items of $').click();
    await expect.poll(() => response().locator('.json-row').first().textContent()).toContain('items 24,000–24,499 of 25,000');
    expect(await response().locator('.json-row').count()).toBeLessThan(100);
    expect(errors).toEqual([]);
  });
});
