/**
 * The runs table over a log of many runs (RUNS, written straight through the log API): the engine
 * filters, pages and counts (`runs.list`), so the table's height is every run, scrolling to its end
 * loads the oldest, and a run far older than the newest 200 (the old capped list's page) is found
 * by text and by status and opened — at 1600 px and at 1024 px wide.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { CommitEntry, EventLog } from '../engine/log/log.js';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { BASE_AT } from './support/fixtures.js';

const RUNS = 6_000;
/** Created at the same time in parallel: the log's group commit shares their fsyncs. */
const BATCH = 500;
const MISSIONS = ['Orders', 'Billing', 'Refunds', 'Stock'];
/** The run to find: the 41st oldest, with a mission no other run has and a failure its loop went on after. */
const TARGET_INDEX = 40;
const runIdOf = (i: number) => `run-many-${String(i).padStart(5, '0')}`;
const TARGET = runIdOf(TARGET_INDEX);
const OLDEST = runIdOf(0);

async function seedMany(log: EventLog): Promise<void> {
  const seedOne = async (i: number) => {
    const at = BASE_AT + i * 1000;
    const mission = i === TARGET_INDEX ? 'LedgerAudit' : MISSIONS[i % MISSIONS.length]!;
    const { lease } = await log.createRun(
      { runId: runIdOf(i), mission, missionHash: 'h', missionFiles: { entry: 'm.vague', files: [{ path: 'm.vague', text: `mission ${mission} {}` }] }, options: { sources: {}, env: {} }, createdAt: at },
      'e2e-seeder',
      600_000,
      [{ type: 'run.started', stepPath: '', payload: { mission, missionHash: 'h' }, recordedAt: at }],
    );
    const entries: CommitEntry[] = [
      { kind: 'event', event: { type: 'step.started', stepPath: 'Load/0', payload: { stepType: 'let', line: 3 }, recordedAt: at + 5 } },
      { kind: 'event', event: { type: 'step.completed', stepPath: 'Load/0', payload: { stepType: 'let' }, recordedAt: at + 9 } },
    ];
    if (i === TARGET_INDEX) entries.push({ kind: 'event', event: { type: 'step.failed', stepPath: 'Load/1[2]/0', payload: { stepType: 'post', error: { code: 'http-status', message: 'POST /ledger failed with 422' } }, recordedAt: at + 20 } });
    entries.push({ kind: 'event', event: { type: 'run.completed', stepPath: '', payload: { actionsRun: ['Load'] }, recordedAt: at + 30 } });
    await log.commit(lease, entries, { durable: false, status: { status: 'completed', releaseLease: true } });
  };
  for (let from = 0; from < RUNS; from += BATCH) await Promise.all(Array.from({ length: Math.min(BATCH, RUNS - from) }, (_, k) => seedOne(from + k)));
}

let studio: Studio;
let browser: Browser;

beforeAll(async () => {
  studio = await startStudio({ seed: seedMany, service: { worker: false } });
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

const rowIds = (page: Page) => page.locator('tr[data-run-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));
const row = (page: Page, runId: string) => page.locator(`tr[data-run-id="${runId}"]`);

describe.each([
  { width: 1600, height: 960 },
  { width: 1024, height: 700 },
])('the runs table over $width px, with 6,000 runs', (viewport) => {
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    ({ page, errors } = await openPage(browser, studio.url, viewport));
    await row(page, runIdOf(RUNS - 1)).waitFor();
  });

  afterAll(async () => {
    await page?.context().close();
  });

  it('is as tall as every run, shows only the rows on screen, and says how many runs the log holds', async () => {
    expect(await page.getByLabel('Runs table').getAttribute('aria-rowcount')).toBe(String(RUNS));
    expect((await rowIds(page))[0]).toBe(runIdOf(RUNS - 1));
    // Virtualised: a screenful of rows (and the overscan) in the DOM, not 6,000.
    expect(await page.locator('tr[data-run-id]').count()).toBeLessThan(80);
    expect(await page.getByRole('status', { name: 'Connection' }).textContent()).toContain(`${RUNS} runs`);
    // Sorting by a column the engine does not order by needs every run loaded: not offered yet.
    expect(await page.getByRole('button', { name: 'Sort by Mission' }).isDisabled()).toBe(true);
  });

  it('loads the oldest runs when scrolled to the end', async () => {
    await page.locator('.runs-table-scroll').evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await row(page, OLDEST).waitFor({ timeout: 15_000 });
    const ids = await rowIds(page);
    expect(ids[ids.length - 1]).toBe(OLDEST);
    await page.locator('.runs-table-scroll').evaluate((el) => el.scrollTo(0, 0));
    await row(page, runIdOf(RUNS - 1)).waitFor();
  });

  it('finds a run far older than the newest 200 by its mission and opens it', async () => {
    await page.getByLabel('Filter runs').fill('ledgeraudit');
    await expect.poll(() => rowIds(page), { timeout: 10_000 }).toEqual([TARGET]);
    expect(await page.getByLabel('Runs table').getAttribute('aria-rowcount')).toBe('1');
    expect(await row(page, TARGET).locator('.status-badge').textContent()).toBe('⚠ 1 failure');
    await row(page, TARGET).click();
    await expect.poll(() => page.getByLabel('Run id').textContent()).toBe(TARGET);
    await expect.poll(() => page.locator('.run-header .status-badge').textContent()).toBe('completed with 1 failure');
    expect(await row(page, TARGET).getAttribute('aria-selected')).toBe('true');
    // One run listed is every run the filter takes: the table may sort it by any column now.
    expect(await page.getByRole('button', { name: 'Sort by Mission' }).isDisabled()).toBe(false);
    // The table holds its columns inside the sidebar at this width.
    const overflow = await page.locator('.runs-table-scroll').evaluate((el) => el.scrollWidth - el.clientWidth);
    expect(overflow).toBeLessThanOrEqual(1);
  });

  it('finds it by status too, and by its run id', async () => {
    await page.getByLabel('Filter runs').fill('');
    await page.getByLabel('Status filter').selectOption('completed-with-failures');
    await expect.poll(() => rowIds(page), { timeout: 10_000 }).toEqual([TARGET]);
    await page.getByLabel('Status filter').selectOption('completed');
    await expect.poll(async () => page.getByLabel('Runs table').getAttribute('aria-rowcount'), { timeout: 10_000 }).toBe(String(RUNS - 1));
    expect(await rowIds(page)).not.toContain(TARGET);
    await page.getByLabel('Status filter').selectOption('all');
    await page.getByLabel('Filter runs').fill(TARGET.toUpperCase());
    await expect.poll(() => rowIds(page), { timeout: 10_000 }).toEqual([TARGET]);
    await page.getByLabel('Filter runs').fill('');
    await expect.poll(async () => page.getByLabel('Runs table').getAttribute('aria-rowcount'), { timeout: 10_000 }).toBe(String(RUNS));
    expect(errors).toEqual([]);
  });
});
