/**
 * Screenshots of each view: into assets/screenshots/<view>.png (committed, shown by the README)
 * and test-results/<view>.png (the run's artefacts).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { REPO_ROOT } from './seed-runs.js';

export async function screenshot(page: Page, view: string): Promise<string> {
  if (!/^[a-z0-9-]+$/.test(view)) throw new Error(`screenshot name must be kebab-case, got: "${view}"`);
  const png = await page.screenshot({ fullPage: false });
  const targets = [path.join(REPO_ROOT, 'assets', 'screenshots', `${view}.png`), path.join(REPO_ROOT, 'test-results', `${view}.png`)];
  for (const target of targets) {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, png);
  }
  return targets[0]!;
}
