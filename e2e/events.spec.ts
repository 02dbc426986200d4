/**
 * Event inspector: the virtualised, paged event list with type, step and time; selecting an event
 * (click or ↑/↓) shows its payload — HTTP requests with their secrets already redacted by the
 * engine — in a JSON viewer; a 100k-event log scrolls without loading it whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { BASE_AT, RUN_COMPLETED, RUN_FAILED, RUN_LIVE, seedStandardRuns, type StandardRuns } from './support/fixtures.js';
import { seedDemoRun } from './support/seed-runs.js';
import { screenshot } from './support/screenshots.js';

const RUN_BIG = 'run-big-0200';
const RUN_HUGE_ANSWER = 'run-huge-answer-0201';
const TAIL_MARKER = 'TAIL-OF-THE-ANSWER-42';
let studio: Studio;
let browser: Browser;
let page: Page;
let errors: string[];
let bigLastSeq = 0;
let runs: StandardRuns;

beforeAll(async () => {
  studio = await startStudio({
    seed: async (log) => {
      runs = await seedStandardRuns(log);
      await seedDemoRun(log, { runId: RUN_BIG, startAt: BASE_AT - 7200_000, outcome: 'completed', orders: 6000, stepMs: 2 });
      bigLastSeq = (await log.getRun(RUN_BIG))!.lastSeq;
      // One answer of about 600 KB: its page of the list leaves the body out (event-search.ts).
      const at = BASE_AT - 3600_000;
      const { lease } = await log.createRun(
        { runId: RUN_HUGE_ANSWER, mission: 'Huge', missionHash: 'seed-huge', missionFiles: { entry: 'huge.vague', files: [{ path: 'huge.vague', text: 'mission Huge {\n  action A { get "/all" }\n  run A\n}\n' }] }, options: { sources: {}, env: {} }, createdAt: at },
        'seed-host-elsewhere:4242:seed01',
        Math.max(0, Date.now() - at) + 24 * 3600_000,
        [{ type: 'run.started', stepPath: '', payload: { mission: 'Huge', missionHash: 'seed-huge' }, recordedAt: at }],
      );
      const body = { items: Array.from({ length: 6_000 }, (_, i) => ({ id: i, text: 'x'.repeat(90) })), last: TAIL_MARKER };
      await log.commit(lease, [
        { kind: 'event', event: { type: 'http.request', stepPath: 'A/0', payload: { effectId: 'e1', attempt: 1, request: { method: 'GET', url: 'http://api/all', headers: {} } }, recordedAt: at + 1 } },
        { kind: 'event', event: { type: 'http.response', stepPath: 'A/0', payload: { effectId: 'e1', attempt: 1, response: { status: 200, headers: {}, body }, durationMs: 5, verdict: 'success' }, recordedAt: at + 2 } },
      ], { durable: false, status: { status: 'completed', releaseLease: true } });
    },
  });
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, `${studio.url}#run=${RUN_COMPLETED}&tab=events`));
});

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

const rowOf = (seq: number) => page.locator(`.event-row[data-seq="${seq}"]`);

describe('event inspector', () => {
  it('lists the events with type, step and time', async () => {
    await rowOf(1).locator('.event-type').waitFor();
    expect(await rowOf(1).locator('.event-type').textContent()).toBe('run.started');
    const types = await page.locator('.event-row .event-type').allTextContents();
    expect(types).toContain('http.request');
    expect(types).toContain('step.started');
  });

  it('shows the selected event payload, with the Authorization header redacted', async () => {
    const request = page.locator('.event-row', { has: page.locator('.event-type', { hasText: /^http\.request$/ }) }).first();
    await request.click();
    const preview = page.getByLabel('Event preview');
    await expect.poll(() => preview.textContent()).toContain('http.request');
    const text = (await preview.textContent()) ?? '';
    expect(text).toContain('authorization');
    expect(text).toContain('[redacted]');
    expect(text).toContain('/orders?page=1');
    // ↓ moves to the next event: the response of that request.
    await page.getByRole('listbox', { name: 'Events' }).press('ArrowDown');
    await expect.poll(() => preview.locator('h3').textContent()).toContain('http.response');
    await screenshot(page, 'events');
  });

  it('shows the error of a failed run', async () => {
    await page.locator(`tr[data-run-id="${RUN_FAILED}"]`).click();
    await rowOf(1).locator('.event-type').waitFor();
    const failed = page.locator('.event-row', { has: page.locator('.event-type', { hasText: /^run\.failed$/ }) });
    await page.getByRole('listbox', { name: 'Events' }).press('End');
    await page.locator('.event-list-scroll').evaluate((el) => (el.scrollTop = el.scrollHeight));
    await failed.first().click();
    await expect.poll(() => page.getByLabel('Event preview').textContent()).toContain('E_HTTP_503');
    expect(await page.getByLabel('Run error').textContent()).toContain('503');
  });

  it('a filtered list of a live run takes in the new matches as its log grows', async () => {
    await page.locator(`tr[data-run-id="${RUN_LIVE}"]`).click();
    const count = page.getByLabel('Matching events');
    // Every text the count shows, however briefly: before the engine answers, it knows no count.
    await count.evaluate((el) => {
      const seen: string[] = ((window as unknown as { countTexts: string[] }).countTexts = [el.textContent ?? '']);
      new MutationObserver(() => seen.push(el.textContent ?? '')).observe(el, { childList: true, characterData: true, subtree: true });
    });
    await page.getByLabel('Search events').fill('live-extra');
    await expect.poll(() => count.textContent()).toMatch(/^0 of \d+$/);
    const before = Number(/of (\d+)/.exec((await count.textContent())!)![1]);
    // The run's process appends: a record stored, and an unrelated step.
    runs.live.sqlWrite('demo_orders', 'orders', 'live-extra-1', { id: 'live-extra-1', amount: 5 }, 'Sync/1[9]/2', 'ef-store-live-extra-1');
    runs.live.event('step.started', 'Sync/2', { stepType: 'post', line: 20 });
    await runs.live.flush();
    await expect.poll(() => count.textContent(), { timeout: 15_000 }).toBe(`1 of ${before + 2}`);
    expect(await page.locator('.event-row[data-seq] .event-type').allTextContents()).toEqual(['store.write']);
    await page.getByRole('button', { name: 'clear' }).click();
    await expect.poll(() => count.textContent()).toBe(`${before + 2} events`);
    const shown = await page.evaluate(() => (window as unknown as { countTexts: string[] }).countTexts);
    expect(shown).toContain('searching…');
    expect(shown.filter((t) => !/^(searching…|loading…|[1-9]\d* events|\d+ of [1-9]\d*)$/.test(t))).toEqual([]);
  });

  it('scrolls a 100k-event log, loading only the pages it shows', async () => {
    expect(bigLastSeq).toBeGreaterThan(100_000);
    const requests: number[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/api/run.eventSearch')) requests.push(1);
    });
    await page.locator(`tr[data-run-id="${RUN_BIG}"]`).click();
    // Unfiltered whatever the test before left behind (a failure there must not fail this one too).
    await page.getByLabel('Search events').fill('');
    await expect.poll(() => page.getByLabel('Matching events').textContent(), { timeout: 20_000 }).toBe(`${bigLastSeq} events`);
    await rowOf(1).locator('.event-type').waitFor();
    await page.locator('.event-list-scroll').evaluate((el) => (el.scrollTop = el.scrollHeight / 2));
    const middle = Math.round(bigLastSeq / 2);
    await expect.poll(async () => {
      const seqs = await page.locator('.event-row .event-type').evaluateAll((els) => els.map((e) => Number(e.parentElement!.getAttribute('data-seq'))));
      return seqs.some((s) => Math.abs(s - middle) < 200);
    }).toBe(true);
    // The list holds a window of rows, not the log.
    expect(await page.locator('.event-row').count()).toBeLessThan(150);
    expect(requests.length).toBeLessThan(10);
    expect(errors).toEqual([]);
  });

  it("shows an answer its list page left out whole, once selected (helper 81: ten 60 MB answers made a page past one JSON text)", async () => {
    await page.goto(`${studio.url}#run=${RUN_HUGE_ANSWER}&tab=events`);
    const response = page.locator('.event-row', { has: page.locator('.event-type', { hasText: /^http\.response$/ }) }).first();
    await response.waitFor();
    await response.click();
    const preview = page.getByLabel('Event preview');
    await expect.poll(() => preview.textContent(), { timeout: 20_000 }).toContain(TAIL_MARKER);
    expect(await preview.textContent()).not.toContain('left out of the list');
    expect(errors).toEqual([]);
  });

  it('walks the run views with ←/→: focus follows the selected tab, so each press moves one further (helper 83)', async () => {
    const tabs = page.getByRole('tablist', { name: 'Run views' });
    await tabs.getByRole('tab', { name: 'Events' }).click();
    await tabs.getByRole('tab', { name: 'Events' }).press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => tabs.getByRole('tab', { selected: true }).textContent()).toBe('Crash lab');
    await page.keyboard.press('ArrowLeft');
    await expect.poll(() => tabs.getByRole('tab', { selected: true }).textContent()).toBe('Replay diff');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Replay diff');
    expect(errors).toEqual([]);
  });
});
