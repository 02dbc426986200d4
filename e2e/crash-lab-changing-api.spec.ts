/**
 * The crash lab on a mission and an API that are not the demo's: a ledger API whose every answer
 * changes between calls (an instant and a serial number in each body). The lab's verdict must be
 * right anyway — its two runs are served the same answers by its proxy — and say what it compared.
 * Sources come from the run's own `--source`, never the demo API's URL (this studio has none).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { requireCli, runCli } from './support/demo.js';
import { LEDGER_MISSION, startChangingApi, type ChangingApi } from './support/changing-api.js';

let studio: Studio;
let api: ChangingApi;
let browser: Browser;
let page: Page;
let errors: string[];
let runId: string;

const phase = () => page.getByLabel('Lab phases').getAttribute('data-phase');
const labId = () => page.getByLabel('Lab phases').getAttribute('data-lab-id');
/** The phase of a lab other than `before` (the one on screen when it was started), or 'starting'. */
const phaseOfNewLab = (before: string | null) => async () => ((await labId()) === before ? 'starting' : await phase());

beforeAll(async () => {
  requireCli();
  api = await startChangingApi();
  studio = await startStudio();
  const mission = path.join(studio.dir, 'ledger.vague');
  fs.writeFileSync(mission, LEDGER_MISSION);
  const run = await runCli(['run', mission, '--source', `Ledger=${api.url}`, '--db', studio.dbPath], studio.dir);
  if (run.code !== 0 || !run.runId) throw new Error(`the ledger run did not complete (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
  runId = run.runId;
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, `${studio.url}#run=${runId}&tab=crashlab`));
});

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
  await api?.close();
});

describe('crash lab on an API whose answers change', () => {
  it("prefills Sources with the run's own --source, not a demo URL", async () => {
    await expect.poll(() => page.getByLabel('Lab sources').inputValue(), { timeout: 10_000 }).toBe(`Ledger=${api.url}`);
    await expect.poll(() => page.getByLabel('Crash point').locator('option').count()).toBeGreaterThan(0);
  });

  it('survives a crash after the third answer, judged on the answers the crash-free run got', async () => {
    const keysBefore = api.applied.size;
    await page.getByLabel('Crash point').selectOption('after-effect');
    await page.getByLabel('Occurrence').fill('3');
    await page.getByRole('button', { name: 'Start armed run' }).click();
    await expect.poll(phase, { timeout: 90_000, interval: 250 }).toBe('done');
    expect(await page.getByTestId('lab-verdict').textContent()).toBe('✓ survived');
    const checks = await page.getByLabel('Checks').locator('li').allTextContents();
    expect(checks).toEqual([
      '✓ the run ended "completed"',
      expect.stringMatching(/^✓ final stores equal the crash-free run \S+, which was served the same answers \(run ids, the values now\(\)\/random\(\) returned and the ids generateId\(\) derived taken out\)$/),
      "✓ 4 write(s) by Idempotency-Key at the lab's proxy: 4 matched one write of the reference run",
      expect.stringMatching(/^✓ every request matched one the reference run made/),
      expect.stringMatching(/^✓ its log replays to the same step paths and effect ids/),
    ]);
    const endings = await page.getByLabel('Processes table').locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-signal')));
    expect(endings[0]).toBe('SIGKILL');
    // The API's own truth: only the lab's reference run wrote to it (4 new keys, each applied once);
    // the armed run's writes, resent after the crash, were answered by the proxy.
    expect(api.applied.size - keysBefore).toBe(4);
    expect([...api.requestsByKey.values()].every((n) => n === 1)).toBe(true);
  });

  it('chaos mode crashes only at points the run reaches, shows them, and survives every one', async () => {
    await page.getByLabel('Max crashes').fill('4');
    // The previous test's lab is still on screen, already 'done': wait for this lab's own phase.
    const previous = await labId();
    await page.getByRole('button', { name: 'Chaos mode' }).click();
    await expect.poll(phaseOfNewLab(previous), { timeout: 120_000, interval: 250 }).toMatch(/^(done|failed)$/);
    expect(await phase()).toBe('done');
    const picks = ((await page.getByLabel('Crash picks').textContent()) ?? '').replace('Armed, one per process: ', '').split(' → ');
    expect(picks).toHaveLength(4);
    for (const pick of picks) expect(pick).toMatch(/^(before-effect|after-effect|mid-store|after-checkpoint|before-wait):\d+$/);
    const killed = await page.getByLabel('Processes table').locator('tbody tr[data-signal="SIGKILL"]').count();
    expect(killed).toBe(4);
    expect(await page.getByTestId('lab-verdict').textContent()).toBe('✓ survived');
    expect(await page.getByLabel('Verdict').textContent()).toContain('4 crashes');
    expect(errors).toEqual([]);
  });
});
