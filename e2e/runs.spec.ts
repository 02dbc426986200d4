/**
 * Runs view: the live runs table lists every run with its status badge and counters, filters by
 * text and status, sorts, and updates live when a run changes ('runs.changed' pushes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { BASE_AT, RUN_COMPLETED, RUN_FAILED, RUN_LIVE, RUN_SUSPENDED, seedStandardRuns, type StandardRuns } from './support/fixtures.js';
import { demoLines, finishSettle, SEED_OWNER, seedDemoRun } from './support/seed-runs.js';
import { screenshot } from './support/screenshots.js';
import { pruneLog } from '../engine/log/prune.js';

let studio: Studio;
let browser: Browser;
let page: Page;
let errors: string[];
let runs: StandardRuns;

beforeAll(async () => {
  studio = await startStudio({ seed: async (log) => void (runs = await seedStandardRuns(log)) });
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, studio.url));
});

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

const row = (runId: string) => page.locator(`tr[data-run-id="${runId}"]`);
const visibleRunIds = () => page.locator('tr[data-run-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));

describe('runs table', () => {
  it('lists every seeded run with its status and counters', async () => {
    await row(RUN_COMPLETED).waitFor();
    expect(await row(RUN_COMPLETED).locator('.status-badge').textContent()).toBe('completed');
    expect(await row(RUN_SUSPENDED).locator('.status-badge').textContent()).toBe('suspended');
    expect(await row(RUN_FAILED).locator('.status-badge').textContent()).toBe('failed');
    expect(await row(RUN_LIVE).locator('.status-badge').textContent()).toBe('running');
    // The completed run survived one crash: its crash column says 1.
    const cells = await row(RUN_COMPLETED).locator('td').allTextContents();
    expect(cells[0]).toContain('DemoOrders');
    expect(cells[6]).toBe('1');
    expect(Number(cells[4])).toBeGreaterThan(10);
  });

  it('opens the newest run and shows it in the header', async () => {
    await page.locator('.run-header h1').waitFor();
    expect(await page.getByLabel('Run id').textContent()).toBe(RUN_LIVE);
    expect(await row(RUN_LIVE).getAttribute('aria-selected')).toBe('true');
  });

  it('opens another run from the keyboard: ↓ moves between rows, Enter opens the focused one (helper 83)', async () => {
    await row(RUN_LIVE).focus();
    const ids = await visibleRunIds();
    const next = ids[ids.indexOf(RUN_LIVE) + 1]!;
    await page.keyboard.press('ArrowDown');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-run-id'))).toBe(next);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByLabel('Run id').textContent()).toBe(next);
    // Back to the live run, as the tests after this one expect it.
    await row(RUN_LIVE).focus();
    await page.keyboard.press(' ');
    await expect.poll(() => page.getByLabel('Run id').textContent()).toBe(RUN_LIVE);
  });

  it('opens the run a hash edited by hand names, on the tab it names (helper 83: the page kept the old run)', async () => {
    await page.evaluate((id) => void (window.location.hash = `#run=${id}&tab=events`), RUN_FAILED);
    await expect.poll(() => page.getByLabel('Run id').textContent()).toBe(RUN_FAILED);
    await expect.poll(() => page.getByRole('tablist', { name: 'Run views' }).getByRole('tab', { selected: true }).textContent()).toBe('Events');
    // Back to the live run on its timeline, as the tests after this one expect it.
    await page.evaluate((id) => void (window.location.hash = `#run=${id}&tab=timeline`), RUN_LIVE);
    await expect.poll(() => page.getByLabel('Run id').textContent()).toBe(RUN_LIVE);
    expect(errors).toEqual([]);
  });

  it('offers to kill a running run and reports why it cannot when no process runs it', async () => {
    // The live run is owned by a live-looking process on another host (the seeder's owner): not
    // orphaned, so Kill is offered, and the studio refuses to kill what it did not start, naming the owner.
    expect(await page.getByTestId('orphaned').count()).toBe(0);
    await page.getByRole('button', { name: 'Kill run process' }).click();
    await expect.poll(() => page.locator('.run-header-kill [role="status"]').textContent()).toBe(
      `conflict: run ${RUN_LIVE} is executed by ${SEED_OWNER}, a process this studio did not start; stop it where it runs`,
    );
    const refused = errors.findIndex((e) => /^http 4\d\d: POST \/api\/run\.crash$/.test(e));
    expect(refused).toBeGreaterThanOrEqual(0);
    errors.splice(refused, 1);
  });

  it('filters by text and by status', async () => {
    await page.getByLabel('Filter runs').fill('failed-0003');
    await expect.poll(visibleRunIds).toEqual([RUN_FAILED]);
    await page.getByLabel('Filter runs').fill('');
    await page.getByLabel('Status filter').selectOption('suspended');
    await expect.poll(visibleRunIds).toEqual([RUN_SUSPENDED]);
    await page.getByLabel('Status filter').selectOption('all');
    await expect.poll(async () => (await visibleRunIds()).length).toBe(4);
  });

  it('sorts by a column when its header is clicked', async () => {
    // The engine sorts (the runs are paged there): the rows come back with the next page, so wait.
    const asc = [RUN_COMPLETED, RUN_SUSPENDED, RUN_FAILED, RUN_LIVE];
    await page.getByRole('button', { name: 'Sort by Started' }).click();
    await expect.poll(visibleRunIds).toEqual(asc);
    await page.getByRole('button', { name: 'Sort by Started' }).click();
    await expect.poll(visibleRunIds).toEqual([...asc].reverse());
  });

  it('updates a row live when the run finishes', async () => {
    await row(RUN_COMPLETED).click();
    await screenshot(page, 'runs');
    const lines = demoLines();
    runs.live.tick(3000);
    await finishSettle(runs.live, lines.summary, lines.storeSummary, 3);
    await expect.poll(() => row(RUN_LIVE).locator('.status-badge').textContent(), { timeout: 10_000 }).toBe('completed');
    expect(errors).toEqual([]);
  });

  it('shows a lost connection, reconnects with backoff, and reloads the runs it missed', async () => {
    const state = page.getByTestId('connection-state');
    expect(await state.getAttribute('data-state')).toBe('open');
    await studio.dropServer();
    await expect.poll(() => state.getAttribute('data-state'), { timeout: 10_000 }).not.toBe('open');
    await expect.poll(() => state.textContent(), { timeout: 10_000 }).toMatch(/disconnected — retrying in|reconnecting/);
    // A run that appears while the studio is away must show up after the reconnect.
    await seedDemoRun(studio.log, { runId: 'run-while-away-0005', startAt: BASE_AT + 240_000, outcome: 'completed', orders: 2 });
    await studio.restartServer();
    await expect.poll(() => state.getAttribute('data-state'), { timeout: 20_000 }).toBe('open');
    await row('run-while-away-0005').waitFor({ timeout: 10_000 });
    // The requests that failed while the server was down are expected; nothing else is.
    expect(errors.filter((e) => !e.startsWith('http') && !e.includes('runs.list failed') && !e.includes('ERR_CONNECTION_REFUSED'))).toEqual([]);
  });

  it('keeps the keyboard focus on its run when a new run arrives above it (helper 90: Enter opened the run that moved into its place)', async () => {
    await row(RUN_COMPLETED).focus();
    await seedDemoRun(studio.log, { runId: 'run-arrived-0006', startAt: BASE_AT + 360_000, outcome: 'completed', orders: 2 });
    await row('run-arrived-0006').waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-run-id'))).toBe(RUN_COMPLETED);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByLabel('Run id').textContent()).toBe(RUN_COMPLETED);
  });

  it('a run pruned while it is open: its next request shows the run-missing page, not a header of a run that is gone (helper 90)', async () => {
    await row(RUN_COMPLETED).click();
    await expect.poll(() => page.getByLabel('Run id').textContent()).toBe(RUN_COMPLETED);
    await page.getByRole('tab', { name: 'Replay diff' }).click();
    // Every finished run goes (this is the spec's last test).
    const pruned = await pruneLog(studio.log, { finishedBefore: Date.now() + 3_600_000, now: () => Date.now() + 3_600_000 });
    expect(pruned.runs).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Verify replay' }).click();
    await page.getByTestId('run-missing').waitFor({ timeout: 10_000 });
    expect(await page.getByTestId('run-missing').textContent()).toContain(RUN_COMPLETED);
    expect(await page.locator('.run-header').count()).toBe(0);
  });
});
