/**
 * "New run" on the studio's own errors: a mission the engine refuses shows the diagnostic alone —
 * file, line, column, code, message, the source line and its caret — not the studio's wrapping
 * ("spawn-failed: reqon run … exited with code 2 before naming its run: …"); the demo mission is
 * offered the demo API this studio runs as its source.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { demoMissionText } from './support/seed-runs.js';

/** Not a server: the studio only names it; the dialog is checked before anything starts. */
const DEMO_API_URL = 'http://127.0.0.1:45999';

let studio: Studio;
let browser: Browser;
let page: Page;
let errors: string[];

beforeAll(async () => {
  studio = await startStudio({ service: { demoApiUrl: DEMO_API_URL } });
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, studio.url));
});

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

const BROKEN = `mission Broken {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  action A {
    get "/x" { paginate: page(page, }
  }
  run A
}
`;

describe('a refused mission', () => {
  it('shows the diagnostic alone, with its line, column and caret', async () => {
    await page.getByRole('button', { name: 'New run' }).click();
    await page.getByLabel('Mission text').fill(BROKEN);
    await page.getByRole('button', { name: 'Start run' }).click();
    const alert = page.getByRole('dialog', { name: 'Start a run' }).getByRole('alert');
    await alert.waitFor({ timeout: 30_000 });
    const text = (await alert.textContent()) ?? '';
    expect(text).toMatch(/^\S*\.vague:4:\d+: error\[E\d+\]: /);
    expect(text).toContain('^');
    expect(text).not.toContain('spawn-failed');
    expect(text).not.toContain('before naming its run');
    expect(text).not.toContain('internal:');
    // The refused start is the page's only failed request (the server answers it 500 today, not 4xx).
    expect(errors.filter((e) => !/^http \d{3}: POST \/api\/run\.start$/.test(e))).toEqual([]);
  });

  it("offers the demo API's URL as the demo mission's source", async () => {
    await page.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'New run' }).click();
    await page.getByLabel('Mission text').fill(demoMissionText());
    await expect.poll(() => page.getByLabel('Sources').inputValue()).toBe(`Shop=${DEMO_API_URL}`);
    // Another mission is not given it.
    await page.getByLabel('Sources').fill('');
    await page.getByLabel('Mission text').fill(BROKEN);
    expect(await page.getByLabel('Sources').inputValue()).toBe('');
  });
});
