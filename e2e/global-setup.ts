/**
 * Runs once before the e2e specs: checks that a Chromium exists (failing loudly with the install
 * command otherwise) and builds the renderer so every spec serves the current code.
 *
 * The build goes to a directory of this run's own (provided to the specs as `rendererDist`), not
 * renderer/dist: Vite empties its output before writing, so a shared renderer/dist vanishes under
 * any studio a concurrent e2e run (another checkout user, another terminal) is serving from it,
 * and every locator of that run's page times out. REQON_E2E_SKIP_BUILD=1 serves renderer/dist
 * as built.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'vite';
import type { TestProject } from 'vitest/node';
import { findChromium } from './support/browser.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The built renderer the specs' studios serve. */
    rendererDist: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => void) | void> {
  const chromium = findChromium();
  console.log(`[e2e] Chromium: ${chromium}`);
  const root = path.resolve(import.meta.dirname, '..');
  if (process.env.REQON_E2E_SKIP_BUILD === '1') {
    project.provide('rendererDist', path.join(root, 'renderer', 'dist'));
    return;
  }
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-e2e-renderer-'));
  try {
    await build({ configFile: path.join(root, 'renderer', 'vite.config.ts'), logLevel: 'warn', build: { outDir, emptyOutDir: true } });
  } catch (error) {
    fs.rmSync(outDir, { recursive: true, force: true });
    throw error;
  }
  console.log(`[e2e] renderer built into ${outDir}`);
  project.provide('rendererDist', outDir);
  return () => fs.rmSync(outDir, { recursive: true, force: true });
}
