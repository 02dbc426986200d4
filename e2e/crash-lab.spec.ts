/**
 * Crash lab, end to end, on the demo: a run made by the CLI; the lab makes its own crash-free
 * reference run and an armed run (`after-effect:N`), both through its answer proxy; the process
 * dies by SIGKILL, the lab restarts it, replay catches up, and the verdict lists what it compared —
 * which the spec checks again against the demo API's own counters (only the reference run's writes
 * reach it). Chaos mode arms points the reference run reached, shown as picks.
 * crash-lab-changing-api.spec.ts does the same on a mission and an API that are not the demo's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { completedDemoRun, requireCli, startDemoApi, type DemoApi } from './support/demo.js';
import { screenshot } from './support/screenshots.js';

let studio: Studio;
let api: DemoApi;
let browser: Browser;
let page: Page;
let errors: string[];
let referenceRunId: string;

beforeAll(async () => {
  requireCli();
  api = await startDemoApi();
  studio = await startStudio({ service: { demoApiUrl: api.url } });
  referenceRunId = await completedDemoRun(studio.dbPath, studio.dir, api);
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, `${studio.url}#run=${referenceRunId}&tab=crashlab`));
});

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
  await api?.close();
});

describe('crash lab', () => {
  it('offers the crash points this run reaches, with their occurrences', async () => {
    const point = page.getByLabel('Crash point');
    await expect.poll(() => point.locator('option').count()).toBeGreaterThan(0);
    const options = await point.locator('option').allTextContents();
    expect(options.some((o) => /^after-effect \(\d+×\)$/.test(o))).toBe(true);
    // The lab's fresh runs need this run's source override: prefilled from the run's own --source.
    await expect.poll(() => page.getByLabel('Lab sources').inputValue(), { timeout: 10_000 }).toBe(`Shop=${api.url}`);
  });

  it('kills an armed run by SIGKILL, restarts it, and proves it survived', async () => {
    await page.getByLabel('Crash point').selectOption('after-effect');
    await page.getByLabel('Occurrence').fill('3');
    await page.getByRole('button', { name: 'Start armed run' }).click();
    // A look at another tab while the lab runs leaves it running here (helper 83: the tab came back
    // empty, its lab still running on the engine, the verdict never shown).
    await page.getByLabel('Lab phases').waitFor({ timeout: 30_000 });
    const labId = await page.getByLabel('Lab phases').getAttribute('data-lab-id');
    await page.getByRole('tab', { name: 'Timeline' }).click();
    await page.getByRole('tab', { name: 'Crash lab' }).click();
    expect(await page.getByLabel('Lab phases').getAttribute('data-lab-id')).toBe(labId);
    await expect.poll(() => page.getByLabel('Lab phases').getAttribute('data-phase'), { timeout: 90_000, interval: 250 }).toBe('done');
    const processes = page.getByLabel('Processes table');
    const endings = await processes.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-signal')));
    expect(endings[0]).toBe('SIGKILL');
    expect(endings.length).toBeGreaterThanOrEqual(2);
    expect(await processes.textContent()).toContain('from the log');
    expect(await page.getByTestId('lab-verdict').textContent()).toContain('survived');
    const verdict = (await page.getByLabel('Verdict').textContent()) ?? '';
    expect(verdict).toMatch(/✓ final stores equal the crash-free run \S+, which was served the same answers/);
    expect(verdict).toMatch(/✓ 7 write\(s\) by Idempotency-Key at the lab's proxy: 7 matched one write of the reference run/);
    expect(verdict).toContain('✓ its log replays');
    await screenshot(page, 'crash-lab');
    // A reload (or another tab) finds the lab again and its verdict (helper 90: it came back empty).
    await page.reload();
    await page.getByLabel('Lab phases').waitFor({ timeout: 15_000 });
    expect(await page.getByLabel('Lab phases').getAttribute('data-lab-id')).toBe(labId);
    expect(await page.getByTestId('lab-verdict').textContent()).toContain('survived');
    // So is the form: the point and occurrence picked (helper 90: they came back at their defaults).
    expect(await page.getByLabel('Crash point').inputValue()).toBe('after-effect');
    expect(await page.getByLabel('Occurrence').inputValue()).toBe('3');

    // The demo API agrees: no idempotency key was applied twice, for either run.
    const stats = api.stats();
    expect(Object.values(stats.keys).every((k) => k.effects === 1)).toBe(true);
  });

  it('survives chaos mode: random crashes until the run gets through', async () => {
    await page.getByLabel('Max crashes').fill('6');
    // The previous test's lab is still on screen, already 'done': wait for this lab's own phase.
    const phases = page.getByLabel('Lab phases');
    const previous = await phases.getAttribute('data-lab-id');
    await page.getByRole('button', { name: 'Chaos mode' }).click();
    const newLabPhase = async () => ((await phases.getAttribute('data-lab-id')) === previous ? 'starting' : await phases.getAttribute('data-phase'));
    await expect.poll(newLabPhase, { timeout: 120_000, interval: 250 }).toMatch(/^(done|failed)$/);
    expect(await page.getByLabel('Lab phases').textContent()).toContain('chaos mode');
    // Every pick is a point the reference run reached, shown before the verdict.
    expect(await page.getByLabel('Crash picks').textContent()).toMatch(/^Armed, one per process: [a-z-]+:\d+/);
    expect(await page.getByTestId('lab-verdict').textContent()).toContain('survived');
    const crashes = Number(/(\d+) crash/.exec((await page.getByLabel('Verdict').textContent()) ?? '')?.[1]);
    expect(crashes).toBeGreaterThan(0);
    expect(Object.values(api.stats().keys).every((k) => k.effects === 1)).toBe(true);
    await screenshot(page, 'crash-lab-chaos');
    expect(errors).toEqual([]);
  });
});
