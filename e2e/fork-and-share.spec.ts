/**
 * Fork, export and import through the UI, on a mission and an API that are not the demo's (the
 * ledger of support/changing-api.ts, whose every answer changes): "Fork from seq N" on a selected
 * event starts a fork that opens, names its parent, and sends only the effects after the fork
 * point — once each, under keys of its own; "Export" downloads a bundle; "Open bundle…" opens it
 * in another studio's log read-only, with the events and the state of the original.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { LEDGER_MISSION, startChangingApi, type ChangingApi } from './support/changing-api.js';
import { requireCli } from './support/demo.js';
import { screenshot } from './support/screenshots.js';

let studio: Studio;
let other: Studio;
let api: ChangingApi;
let browser: Browser;
let page: Page;
let parentId: string;
let forkSeq: number;

async function finished(s: Studio, runId: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const run = await s.service.handle('run.get', { runId }).catch(() => null);
    if (run && run.status !== 'running') return run.status;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`run ${runId} did not finish`);
}

beforeAll(async () => {
  requireCli();
  api = await startChangingApi(4);
  studio = await startStudio();
  other = await startStudio();
  ({ runId: parentId } = await studio.service.handle('run.start', { missionText: LEDGER_MISSION, sources: { Ledger: api.url } }));
  expect(await finished(studio, parentId)).toBe('completed');
  const events = await studio.service.handle('run.events', { runId: parentId });
  // After the second account's transfer was stored.
  forkSeq = events.filter((e) => e.type === 'store.write' && (e.payload as { store: string }).store === 'transfers')[1]!.seq;
  browser = await launchBrowser();
  ({ page } = await openPage(browser, `${studio.url}#run=${parentId}&tab=events&seq=${forkSeq}`));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
  await other?.stop();
  await api?.close();
});

describe('fork from here', () => {
  it('forks at the selected event: the fork opens, names its parent, and redoes only what came after', async () => {
    const keysBefore = new Set(api.applied.keys());
    const fork = page.getByRole('button', { name: 'Fork from here' });
    await expect.poll(() => fork.textContent()).toContain(`seq ${forkSeq}`);
    await screenshot(page, 'fork-from-here');
    await fork.click();
    await expect
      .poll(async () => `${await page.getByLabel('Run id').textContent()} ${await page.locator('.run-header-share [role=status]').textContent({ timeout: 100 }).catch(() => '')}`, { timeout: 20_000 })
      .not.toMatch(new RegExp(`^${parentId} `));
    const forkId = (await page.getByLabel('Run id').textContent())!;
    await expect.poll(() => page.getByTestId('forked-from').textContent()).toContain(`forked from ${parentId} at seq ${forkSeq}`);
    expect(await finished(studio, forkId)).toBe('completed');
    // Accounts 3 and 4 only, each once, under keys the parent never used.
    const newKeys = [...api.applied.keys()].filter((k) => !keysBefore.has(k));
    expect(newKeys).toHaveLength(2);
    for (const k of newKeys) expect(api.requestsByKey.get(k)).toBe(1);
    for (const k of keysBefore) expect(api.applied.get(k)).toBe(1);
    await screenshot(page, 'fork-opened');

    // The parent link goes back.
    await page.getByTestId('forked-from').getByRole('button').click();
    await expect.poll(() => page.getByLabel('Run id').textContent()).toBe(parentId);
  }, 60_000);
});

describe('export and open a bundle', () => {
  it('exports the run and opens the bundle read-only in another studio, with its events and state', async () => {
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export run' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toBe(`${parentId}.reqonrun`);
    const saved = path.join(other.dir, file.suggestedFilename());
    await file.saveAs(saved);
    expect(JSON.parse(fs.readFileSync(saved, 'utf8'))).toMatchObject({ reqonRunBundle: 1, run: { runId: parentId } });

    const { page: second } = await openPage(browser, other.url);
    await second.getByLabel('Run bundle file').setInputFiles(saved);
    await expect.poll(() => second.getByLabel('Run id').textContent(), { timeout: 15_000 }).toBe(parentId);
    await second.getByTestId('imported').waitFor();
    expect(await second.getByRole('button', { name: 'Kill run process' }).count()).toBe(0);
    const imported = await other.service.handle('run.events', { runId: parentId });
    expect(imported).toEqual(await studio.service.handle('run.events', { runId: parentId }));
    const last = imported.length;
    expect(await other.service.handle('run.stateAt', { runId: parentId, seq: last })).toEqual(await studio.service.handle('run.stateAt', { runId: parentId, seq: last }));
    await screenshot(second, 'bundle-opened');

    // Every view works on it: timeline, state, events, and a replay verification that passes.
    const tab = (name: string) => second.getByRole('tab', { name });
    await tab('Timeline').click();
    await second.getByRole('list', { name: 'Timeline lanes' }).getByRole('listitem').first().waitFor();
    await tab('State').click();
    await second.getByLabel('State scrubber').waitFor();
    await tab('Events').click();
    await second.getByRole('listbox', { name: 'Events' }).getByRole('option').first().waitFor();
    await tab('Replay diff').click();
    await second.getByRole('button', { name: 'Verify replay' }).click();
    await expect.poll(() => second.getByTestId('verify-verdict').getAttribute('class'), { timeout: 15_000 }).toContain('ok');

    // A file that is no bundle is refused, saying why.
    const junk = path.join(other.dir, 'junk.reqonrun');
    fs.writeFileSync(junk, '{"not": "a bundle"}');
    await second.getByLabel('Run bundle file').setInputFiles(junk);
    await expect.poll(() => second.getByTestId('import-status').textContent()).toMatch(/junk\.reqonrun: .*not a run bundle the studio can open: reqonRunBundle: expected 1/);
  }, 60_000);
});
