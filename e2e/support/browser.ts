/**
 * Chromium for the e2e suite: Debian's /usr/bin/chromium (or $REQON_CHROMIUM), launched headless
 * with the flags a container needs. When none is found the suite fails with the command that
 * installs it — a missing browser must never look like a passing suite.
 */
import fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function findChromium(): string {
  const fromEnv = process.env.REQON_CHROMIUM;
  const found = [fromEnv, ...CANDIDATES].find((p): p is string => typeof p === 'string' && p !== '' && fs.existsSync(p));
  if (!found) {
    throw new Error(
      'No Chromium found for the e2e suite (looked at $REQON_CHROMIUM, ' +
        CANDIDATES.join(', ') +
        '). Install it with `sudo apt-get install -y chromium` or point REQON_CHROMIUM at a Chromium binary.',
    );
  }
  return found;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: findChromium(), headless: true, args: CHROMIUM_ARGS });
}

/** A page that fails the test on any uncaught page error, and collects console errors. */
export async function openPage(browser: Browser, url: string): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1600, height: 960 }, deviceScaleFactor: 1 });
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
