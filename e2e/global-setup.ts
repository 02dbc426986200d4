/**
 * Runs once before the e2e specs: checks that a Chromium exists (failing loudly with the install
 * command otherwise) and builds the renderer into renderer/dist so every spec serves the current
 * code.
 */
import path from 'node:path';
import { build } from 'vite';
import { findChromium } from './support/browser.js';

export default async function setup(): Promise<void> {
  const chromium = findChromium();
  console.log(`[e2e] Chromium: ${chromium}`);
  if (process.env.REQON_E2E_SKIP_BUILD === '1') return;
  const root = path.resolve(import.meta.dirname, '..');
  await build({ configFile: path.join(root, 'renderer', 'vite.config.ts'), logLevel: 'warn' });
  console.log('[e2e] renderer built into renderer/dist');
}
