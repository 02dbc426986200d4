/**
 * Killed runs are taken over, not left "running" for ever: the studio hosts one scheduler (a
 * `reqon worker` child over its log), which takes over a run whose owner died. Through the UI:
 * "Kill process" on a run the studio started, then again on the same run once the worker executes
 * it (the worker is killed, restarts and takes it over again); and, in a studio without a worker,
 * an orphaned run shows Resume. Each run ends completed with every write applied once, on a slow
 * API that is not the demo's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { requireCli } from './support/demo.js';
import { MARKS_MISSION, startSlowApi, type SlowApi } from './support/slow-api.js';

let api: SlowApi;
let browser: Browser;

beforeAll(async () => {
  requireCli();
  api = await startSlowApi();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

async function start(studio: Studio): Promise<string> {
  const { runId } = await studio.service.handle('run.start', { missionText: MARKS_MISSION, sources: { Slow: api.url } });
  return runId;
}

const status = (page: Page) => page.getByLabel('Run header').locator('.status-badge').getAttribute('data-status');
const stat = async (page: Page, name: string) => Number(await page.getByLabel('Run header').locator('div', { has: page.locator(`dt:text-is("${name}")`) }).locator('dd').textContent());
/** Waits until the run has stored `n` marks (its log has moved past them), so a kill lands mid-run. */
const marksStored = async (studio: Studio, runId: string, n: number) =>
  expect.poll(async () => (await studio.service.handle('run.stateAt', { runId, seq: 1e9 })).stores.find((s) => s.name === 'marks')?.records.length ?? 0, { timeout: 30_000, interval: 100 }).toBeGreaterThanOrEqual(n);

describe('a killed run', () => {
  let studio: Studio;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    studio = await startStudio({ service: { workerPollMs: 100 } });
  });
  afterAll(async () => {
    await studio?.stop();
  });

  it('is taken over by the studio\'s worker after Kill process, and again after a second kill', async () => {
    const runId = await start(studio);
    ({ page, errors } = await openPage(browser, `${studio.url}#run=${runId}&tab=timeline`));
    await marksStored(studio, runId, 2);
    await page.getByRole('button', { name: 'Kill run process' }).click();
    await expect.poll(() => page.getByLabel('Run header').getByRole('status').textContent()).toBe('SIGKILL sent');

    // The worker takes it over: the run moves on (more marks), executed by the worker now.
    await marksStored(studio, runId, 6);
    await page.getByRole('button', { name: 'Kill run process' }).click();
    await expect.poll(() => page.getByLabel('Run header').getByRole('status').textContent()).toMatch(/^killed the studio's worker \(pid \d+\), which executed this run/);

    await expect.poll(() => status(page), { timeout: 60_000, interval: 200 }).toBe('completed');
    expect(await stat(page, 'crashes survived')).toBe(2);
    const marks = (await studio.service.handle('run.stateAt', { runId, seq: 1e9 })).stores.find((s) => s.name === 'marks')!;
    expect(marks.records).toHaveLength(16);
    expect(errors).toEqual([]);
  });

  it('started from New run with "Crash at", dies there and is taken over to the end', async () => {
    const before = await page.getByLabel('Run id').textContent();
    await page.getByRole('button', { name: 'New run' }).click();
    await page.getByLabel('Mission text').fill(MARKS_MISSION);
    await page.getByLabel('Sources').fill(`Slow=${api.url}`);
    await page.getByLabel('Crash at').fill('after-effect:4');
    await page.getByRole('button', { name: 'Start run' }).click();
    // The page opens the new run (same mission as the run before it, another id).
    await expect.poll(() => page.getByLabel('Run id').textContent(), { timeout: 10_000 }).not.toBe(before);
    expect(await page.getByLabel('Run header').locator('h1').textContent()).toBe('Marks');
    await expect.poll(() => status(page), { timeout: 60_000, interval: 200 }).toBe('completed');
    expect(await stat(page, 'crashes survived')).toBe(1);
    for (const n of api.applied.values()) expect(n).toBe(1);
  });

  it('is taken over after the studio itself restarts on the same log', async () => {
    const runId = await start(studio);
    await marksStored(studio, runId, 2);
    // Closing the service stops its worker (the run is released mid-way) but not the run's own
    // process: kill that too, as a closed laptop lid would.
    await studio.service.close();
    const run = await studio.log.getRun(runId);
    expect(run?.status).toBe('running');
    const pid = Number(run?.owner?.split(':')[1]);
    if (Number.isInteger(pid) && pid > 0) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    const again = await startStudio({ service: { workerPollMs: 100, dbPath: studio.dbPath, cwd: studio.dir } });
    try {
      const { page: second } = await openPage(browser, `${again.url}#run=${runId}&tab=timeline`);
      await expect.poll(() => status(second), { timeout: 60_000, interval: 200 }).toBe('completed');
      expect((await again.service.handle('run.get', { runId })).status).toBe('completed');
    } finally {
      await again.stop();
    }
  });
});

describe('an orphaned run in a studio without a worker', () => {
  let studio: Studio;

  beforeAll(async () => {
    studio = await startStudio({ service: { worker: false } });
  });
  afterAll(async () => {
    await studio?.stop();
  });

  it('shows Resume instead of a kill that would say "conflict", and Resume finishes it', async () => {
    const runId = await start(studio);
    const { page, errors } = await openPage(browser, `${studio.url}#run=${runId}&tab=timeline`);
    await marksStored(studio, runId, 2);
    await page.getByRole('button', { name: 'Kill run process' }).click();
    // The badge waits on the killed process's exit reaching the studio and the run view's refresh:
    // under CI's load (e2e after the unit suite, 2 cores) that once took over 10 s.
    await expect.poll(() => page.getByTestId('orphaned').isVisible(), { timeout: 30_000 }).toBe(true);
    expect(await status(page)).toBe('running');
    await page.getByRole('button', { name: 'Resume crashed run' }).click();
    await expect.poll(() => status(page), { timeout: 60_000, interval: 200 }).toBe('completed');
    expect(await stat(page, 'crashes survived')).toBe(1);
    for (const n of api.applied.values()) expect(n).toBe(1);
    expect(errors).toEqual([]);
  });
});
