/**
 * Replay diff of a folder mission's run (mission.vague beside a file of actions): the edit box
 * edits any of the run's files, picked by name, and a change in an action file is compared as a
 * change in the entry is (helper 83: only the entry could be edited, so an action's edit could
 * not be checked in the studio at all). A mission and an API of the spec's own, not the demo's.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { requireCli, runCli } from './support/demo.js';

const ENTRY = 'mission Folder {\n  source Api { auth: none, base: "http://127.0.0.1:9" }\n  store s: memory("s")\n  run Pull\n}\n';
const PULL = 'action Pull {\n  post "/orders" { body: { n: 1 } }\n  store response -> s { key: .id }\n}\n';

let studio: Studio;
let api: http.Server;
let browser: Browser;
let page: Page;
let errors: string[];
let runId: string;

beforeAll(async () => {
  requireCli();
  api = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{"id":"o1"}');
    });
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  studio = await startStudio();
  const folder = path.join(studio.dir, 'folder');
  fs.mkdirSync(folder);
  fs.writeFileSync(path.join(folder, 'mission.vague'), ENTRY);
  fs.writeFileSync(path.join(folder, 'pull.vague'), PULL);
  const run = await runCli(['run', folder, '--source', `Api=http://127.0.0.1:${(api.address() as AddressInfo).port}`, '--db', studio.dbPath], studio.dir);
  if (run.code !== 0 || !run.runId) throw new Error(`the folder mission's run did not complete (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
  runId = run.runId;
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, `${studio.url}#run=${runId}&tab=replay`));
});

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
  await new Promise((resolve) => api?.close(resolve));
});

describe("replay diff of a folder mission's run", () => {
  it('edits its action file, picked by name: a moved request diverges there; put back, the edit matches', async () => {
    await page.getByLabel('Use an edited mission').check();
    const picker = page.getByLabel('Edited file');
    await expect.poll(() => picker.locator('option').allTextContents()).toEqual(['mission.vague', 'pull.vague']);
    await picker.selectOption({ label: 'pull.vague' });
    const editor = page.getByLabel('Edited mission text');
    expect(await editor.inputValue()).toBe(PULL);
    await editor.fill(PULL.replace('"/orders"', '"/audit"'));
    await page.getByRole('button', { name: 'Verify replay' }).click();
    await expect.poll(() => page.getByTestId('verify-verdict').textContent(), { timeout: 30_000 }).toContain('the edit diverges');
    expect(await page.getByRole('alert', { name: 'Divergence' }).textContent()).toContain('Pull/0');
    expect(await picker.locator('option').allTextContents()).toEqual(['mission.vague', 'pull.vague (edited)']);

    // The entry is still the recorded one in the box; the action file put back, the edit matches.
    await picker.selectOption({ label: 'mission.vague' });
    expect(await editor.inputValue()).toBe(ENTRY);
    await picker.selectOption({ label: 'pull.vague (edited)' });
    await editor.fill(`// reviewed\n${PULL}`);
    await page.getByRole('button', { name: 'Verify replay' }).click();
    await expect.poll(() => page.getByTestId('verify-verdict').textContent(), { timeout: 30_000 }).toContain('✓ replay matches');
    expect(errors).toEqual([]);
  });
});
