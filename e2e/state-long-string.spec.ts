/**
 * State on a run whose response holds one 20 MB string: the page drew it whole and froze ~40 s.
 * The engine now sends its first TEXT_LIMIT characters (inspect/state-slice.ts) and the row draws
 * ROW_TEXT of them with "… N more characters", a copy button and a character pager; the page
 * answers throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { CommitEntry } from '../engine/log/log.js';
import type { NewEvent } from '../engine/log/events.js';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';

const RUN_ID = 'long-string';
const LENGTH = 20 * 1024 * 1024;

let studio: Studio;
let browser: Browser;
let page: Page;
let errors: string[];

const event = (type: string, stepPath: string, payload: unknown, at: number): CommitEntry => ({ kind: 'event', event: { type, stepPath, payload, recordedAt: at } as NewEvent });

beforeAll(async () => {
  studio = await startStudio({
    seed: async (log) => {
      const missionFiles = { entry: 'load.vague', files: [{ path: 'load.vague', text: 'mission Long {}' }] };
      const run = { runId: RUN_ID, mission: 'Long', missionHash: 'sha256:abc', missionFiles, options: { sources: {}, env: {} }, createdAt: 1_000 };
      const { lease } = await log.createRun(run as never, 'w1', 30_000, [{ type: 'run.started', stepPath: '', payload: { mission: 'Long', missionHash: 'sha256:abc' }, recordedAt: 1_000 }]);
      await log.commit(
        lease,
        [
          event('action.started', 'Load', { action: 'Load' }, 1_001),
          event('step.started', 'Load/0', { stepType: 'fetch', line: 1 }, 1_002),
          event('step.completed', 'Load/0', { stepType: 'fetch', response: { id: 'one', s: 'y'.repeat(LENGTH) } }, 1_003),
        ],
        { durable: true },
      );
    },
  });
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, `${studio.url}#run=${RUN_ID}&tab=state`));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

describe('State with a 20 MB string', () => {
  it('draws a few hundred characters, counts the rest, and pages through them', async () => {
    const response = page.getByLabel('Response JSON');
    const row = response.locator('.json-row', { hasText: /^s:/ });
    await expect.poll(() => row.textContent(), { timeout: 60_000 }).toContain('more characters');
    const text = (await row.textContent()) ?? '';
    expect(text.length).toBeLessThan(1_000);
    expect(text).toContain(`… ${(LENGTH - 500).toLocaleString('en-US')} more characters`);
    expect(text).toContain(`characters 0–4,095 of ${LENGTH.toLocaleString('en-US')}`);
    // The page answers: an evaluate round trip is quick, not stuck behind a 20 MB layout.
    const t0 = Date.now();
    await page.evaluate(() => document.title);
    expect(Date.now() - t0).toBeLessThan(2_000);
    await row.getByRole('button', { name: 'Next characters of $.s' }).click();
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toContain(`characters 4,096–8,191 of ${LENGTH.toLocaleString('en-US')}`);
    expect(errors).toEqual([]);
  });
});
