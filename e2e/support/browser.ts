/**
 * Chromium for the e2e suite: Debian's /usr/bin/chromium (or $REQON_CHROMIUM), launched headless
 * with the flags a container needs. When none is found the suite fails with the command that
 * installs it — a missing browser must never look like a passing suite.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, locateChromium } from '../../test/support/chromium.js';

export function findChromium(): string {
  const located = locateChromium();
  if ('missing' in located) throw new Error(`No Chromium for the e2e suite: ${located.missing}.`);
  return located.path;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: findChromium(), headless: true, args: CHROMIUM_ARGS });
}

/** A page that fails the test on any uncaught page error, and collects console errors. */
export async function openPage(browser: Browser, url: string, viewport = { width: 1600, height: 960 }): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    // Failed requests are reported below with their URL; the console line carries none.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(`console: ${m.text()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`http ${r.status()}: ${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  await page.goto(url);
  return { page, errors };
}
