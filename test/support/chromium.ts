/**
 * Which Chromium the browser tests and the studio-paint bench drive, and with which flags: one
 * place, so the two never look in different places. $REQON_CHROMIUM (or $CHROMIUM_PATH) names it;
 * else Debian's and the usual paths are tried. Nothing here imports playwright.
 */
import fs from 'node:fs';

export const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** Headless in a container: no sandbox, no GPU, nothing that reaches the network on its own. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** The Chromium to use, or why there is none (with the command that installs one). */
export function locateChromium(): { path: string } | { missing: string } {
  const named = [process.env['REQON_CHROMIUM'], process.env['CHROMIUM_PATH']].filter((p): p is string => typeof p === 'string' && p !== '');
  for (const p of named) {
    if (!fs.existsSync(p)) return { missing: `the Chromium named by $REQON_CHROMIUM/$CHROMIUM_PATH does not exist: ${p}` };
  }
  const found = [...named, ...CHROMIUM_CANDIDATES].find((p) => fs.existsSync(p));
  return found
    ? { path: found }
    : {
        missing: `no Chromium found (looked at $REQON_CHROMIUM, $CHROMIUM_PATH, ${CHROMIUM_CANDIDATES.join(', ')}); install it with \`sudo apt-get install -y chromium\` or point REQON_CHROMIUM at a Chromium binary`,
      };
}
