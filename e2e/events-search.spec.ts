/**
 * The Events tab on a 100k-event run of a mission that is not the demo's (BigSync: one GET that
 * answered 25k records, then a loop validating and storing each — test/bench/studio-big-run.ts):
 * filter by type, by step (every iteration with `*`), text found inside a 25k-record payload,
 * jump to a seq the filter hides, "State at this event", the step column resized and its full
 * path on hover — and the filter in the URL, so a reload (or a shared link) shows the same rows.
 * The engine searches; the page holds a window of rows and asks for a handful of pages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { seedBigRun, type BigRun } from '../test/bench/studio-big-run.js';
import { screenshot } from './support/screenshots.js';

const RUN_ID = 'big-events-100k';
let studio: Studio;
let browser: Browser;
let page: Page;
let errors: string[];
let run: BigRun;
const searches: string[] = [];

beforeAll(async () => {
  studio = await startStudio({ seed: async (log) => void (run = await seedBigRun(log, { runId: RUN_ID, total: 100_000, records: 25_000 })) });
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, `${studio.url}#run=${RUN_ID}&tab=events`));
  page.on('request', (r) => {
    if (r.url().endsWith('/api/run.eventSearch')) searches.push(r.postData() ?? '');
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

const count = () => page.getByLabel('Matching events').textContent();
const shownRows = () =>
  page.locator('.event-row[data-seq]').evaluateAll((els) =>
    els.map((e) => ({ seq: Number(e.getAttribute('data-seq')), type: e.querySelector('.event-type')!.textContent!, step: e.querySelector('.step-path')!.getAttribute('title')! })),
  );
const hash = () => page.evaluate(() => decodeURIComponent(window.location.hash));

async function setTypes(...types: string[]) {
  const menu = page.getByRole('group', { name: 'Event types to show' });
  if (!(await menu.isVisible())) await page.getByLabel('Event types', { exact: true }).click();
  for (const box of await menu.locator('label').all()) {
    const type = (await box.locator('code').textContent())!;
    if ((await box.locator('input').isChecked()) !== types.includes(type)) await box.locator('input').click();
  }
  await page.getByLabel('Event types', { exact: true }).click(); // close the menu
}

describe('Events: search, filter and jump on a 100k-event run', () => {
  it('lists every event unfiltered, with each type counted', async () => {
    expect(run.lastSeq).toBe(100_000);
    await expect.poll(count, { timeout: 20_000 }).toBe('100000 events');
    await page.getByLabel('Event types', { exact: true }).click();
    const menu = page.getByRole('group', { name: 'Event types to show' });
    const storeWrite = menu.locator('label', { has: page.locator('code', { hasText: /^store\.write$/ }) });
    expect(await storeWrite.locator('.num').textContent()).toBe(String(run.iterations));
    await page.getByLabel('Event types', { exact: true }).click();
  });

  it('filters by type on the engine side: only store.write rows, counted of the whole log', async () => {
    await setTypes('store.write');
    await expect.poll(count).toBe(`${run.iterations} of 100000`);
    const rows = await shownRows();
    expect(rows.length).toBeGreaterThan(10);
    expect(new Set(rows.map((r) => r.type))).toEqual(new Set(['store.write']));
    // Row n is the n-th store: iteration n's store step, at Sync/1[n]/1.
    expect(rows[0]!.step).toBe('Sync/1[0]/1');
    expect(await hash()).toContain('types=store.write');
  });

  it('jumps to a seq the filter hides: the next matching event is selected and scrolled to', async () => {
    // Seq 50000 is a store (iterations are six events from seq 10, the store fifth): 50001 is not.
    await page.getByLabel('Jump to seq').fill('50001');
    await page.getByRole('button', { name: 'Go' }).click();
    const note = page.locator('.event-filters-note');
    await expect.poll(() => note.textContent()).toMatch(/^#50001 is not among the filtered events: showing #(\d+), the next one that is\.$/);
    const shown = Number(/showing #(\d+)/.exec((await note.textContent())!)![1]);
    expect(shown).toBe(50_006);
    const selected = page.locator('.event-row.selected');
    await expect.poll(() => selected.getAttribute('data-seq')).toBe(String(shown));
    expect(await selected.locator('.event-type').textContent()).toBe('store.write');
    expect(await selected.isVisible()).toBe(true);
    await expect.poll(() => page.getByLabel('Event preview').locator('h3').textContent()).toContain(`#${shown}`);
    // ↓ goes to the next store, not the next event.
    await page.getByRole('listbox', { name: 'Events' }).press('ArrowDown');
    await expect.poll(async () => Number(await page.locator('.event-row.selected').getAttribute('data-seq'))).toBe(shown + 6);
    expect(await hash()).toContain(`seq=${shown + 6}`);
  });

  it('filters by a step with * over every iteration, combined with a type', async () => {
    await setTypes();
    await page.getByLabel('Step path').fill('Sync/1[*]/0');
    await page.getByLabel('Step path').press('Enter');
    // Each iteration's validate step: started and completed.
    await expect.poll(count).toBe(`${2 * run.iterations} of 100000`);
    const rows = await shownRows();
    expect(rows.every((r) => /^Sync\/1\[\d+\]\/0$/.test(r.step))).toBe(true);
    expect(new Set(rows.map((r) => r.type))).toEqual(new Set(['step.started', 'step.completed']));
    await setTypes('step.completed');
    await expect.poll(count).toBe(`${run.iterations} of 100000`);
  });

  it('finds text inside payloads, the 25k-record response included, and keeps it in the URL across a reload', async () => {
    await page.getByRole('button', { name: 'clear' }).click();
    await expect.poll(count).toBe('100000 events');
    // Order 12345's id: in the GET's response body (its http.response and fetch.completed), its
    // loop.iteration's key and its store.write — and nowhere else.
    await page.getByLabel('Search events').fill('O-112345');
    // The first text search of a run reads every payload once (the engine keeps the text): give it time.
    await expect.poll(count, { timeout: 30_000 }).toBe('4 of 100000');
    const rows = await shownRows();
    expect(rows.map((r) => r.type)).toEqual(['http.response', 'fetch.completed', 'loop.iteration', 'store.write']);
    expect(rows.slice(2).map((r) => r.step)).toEqual(['Sync/1[12345]', 'Sync/1[12345]/1']);
    await page.locator('.event-row', { hasText: 'store.write' }).click();
    const storeSeq = rows[3]!.seq;
    expect(await hash()).toContain('q=O-112345');

    await page.reload();
    await expect.poll(count, { timeout: 20_000 }).toBe('4 of 100000');
    expect(await page.getByLabel('Search events').inputValue()).toBe('O-112345');
    await expect.poll(() => page.locator('.event-row.selected').getAttribute('data-seq')).toBe(String(storeSeq));
    await expect.poll(() => page.getByLabel('Event preview').textContent()).toContain('o-112345');
    await screenshot(page, 'events-search');

    // A text nothing holds: an empty list that says so.
    await page.getByLabel('Search events').fill('no such order anywhere');
    await expect.poll(count).toBe('0 of 100000');
    expect(await page.getByText('No event passes the filter.').isVisible()).toBe(true);
    await page.getByLabel('Search events').fill('O-112345');
    await expect.poll(count).toBe('4 of 100000');
  });

  it('opens the State at the selected event', async () => {
    const seq = Number(await page.locator('.event-row.selected').getAttribute('data-seq'));
    await page.getByRole('button', { name: 'State at this event →' }).click();
    await expect.poll(() => page.getByRole('tablist', { name: 'Run views' }).getByRole('tab', { selected: true }).textContent()).toBe('State');
    await expect.poll(() => page.getByTestId('scrub-position').textContent()).toMatch(new RegExp(`^#${seq} /`));
    expect(await hash()).toContain(`tab=state`);
    await page.getByRole('tablist', { name: 'Run views' }).getByRole('tab', { name: 'Events' }).click();
    await expect.poll(count).toBe('4 of 100000');
  });

  it('shows the whole step path on hover, and the step column keeps a dragged width across reloads', async () => {
    await page.getByRole('button', { name: 'clear' }).click();
    await expect.poll(count).toBe('100000 events');
    const cell = page.locator('.event-row[data-seq="30000"] .step-path');
    await page.getByLabel('Jump to seq').fill('30000');
    await page.getByRole('button', { name: 'Go' }).click();
    await cell.waitFor();
    const path = await cell.getAttribute('title');
    expect(path).toMatch(/^Sync\/1(\[\d+\](\/\d)?)?$/);
    expect(await cell.textContent()).toBe(path);

    const before = (await cell.boundingBox())!.width;
    const handle = (await page.getByLabel('Resize the step column').boundingBox())!;
    await page.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2);
    await page.mouse.down();
    await page.mouse.move(handle.x + handle.width / 2 + 120, handle.y + handle.height / 2, { steps: 5 });
    await page.mouse.up();
    await expect.poll(async () => Math.round((await cell.boundingBox())!.width - before)).toBe(120);
    await page.reload();
    await page.locator('.event-row[data-seq="30000"] .step-path').waitFor({ timeout: 20_000 });
    expect(Math.round((await page.locator('.event-row[data-seq="30000"] .step-path').boundingBox())!.width - before)).toBe(120);
  });

  it('never loaded the log whole: a window of rows, a few dozen searches at most', async () => {
    expect(await page.locator('.event-row').count()).toBeLessThan(150);
    expect(searches.length).toBeLessThan(60);
    for (const body of searches) expect(JSON.parse(body).limit).toBeLessThanOrEqual(500);
    expect(errors).toEqual([]);
  });
});
