/**
 * A page whose session the studio no longer accepts (the studio restarted with a new token while
 * the page stayed open) says so on the page — the server's reason and what to do — instead of
 * showing "0 runs · disconnected" and retrying for ever in silence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startStudioServer, type StudioServer } from '../engine/server/studio-server.js';
import { launchBrowser, openPage } from './support/browser.js';
import { RENDERER_DIST, startStudio, type Studio } from './support/studio.js';

let studio: Studio;
let other: StudioServer | null = null;
let browser: Browser;
let page: Page;
let errors: string[];

beforeAll(async () => {
  studio = await startStudio();
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, studio.url));
});

afterAll(async () => {
  await other?.close();
  await browser?.close();
  await studio?.stop();
});

const connection = () => page.getByTestId('connection-state');

describe('a refused session', () => {
  it('is live with the session the printed URL gave it', async () => {
    await expect.poll(() => connection().getAttribute('data-state')).toBe('open');
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('says why when the studio restarted with another token, and what to do', async () => {
    const port = studio.server.port;
    await studio.dropServer();
    other = await startStudioServer({ service: studio.service, staticDir: RENDERER_DIST, port, token: 'a-token-this-page-never-saw' });
    const banner = page.locator('.connection-refused');
    await banner.waitFor({ timeout: 30_000 });
    expect(await banner.textContent()).toContain('unauthorized: no valid session token');
    expect(await banner.textContent()).toContain("open the studio's URL again");
    expect(await connection().textContent()).toMatch(/^not connected: the studio refused this page/);
    // The refused handshakes (the browser logs them) and the page's probes are the only errors.
    expect(errors.filter((e) => !/^http 401: POST \/api\/studio\.info$/.test(e) && !/^console: WebSocket connection to .* failed/.test(e))).toEqual([]);
  });
});
