/**
 * Resuming a webhook pause and a webhook wait with a payload, from the studio's wait banner and
 * from `reqon resume --payload`: the payload reaches the mission (its `response` after the pause
 * or wait), is stored, and the run completes without a second suspension. Missions of their
 * own, not the demo's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { requireCli, runCli } from './support/demo.js';

const APPROVAL = `mission Approvals {
  store decisions: memory("decisions")
  action Decide {
    pause { resumeOn: webhook "/approve" }
    store { id: "d1", approved: response.approved, by: response.by } -> decisions { key: .id }
  }
  run Decide
}
`;

const SIGNAL = `mission Signals {
  store signals: memory("signals")
  action Listen {
    wait { path: "/signal", timeout: 86400000 }
    store { id: "s1", body: response } -> signals { key: .id }
  }
  run Listen
}
`;

let studio: Studio;
let browser: Browser;

beforeAll(async () => {
  requireCli();
  studio = await startStudio();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

/** Starts a mission with the CLI; it suspends at once (exit 10). */
async function suspended(name: string, text: string): Promise<string> {
  const file = path.join(studio.dir, `${name}.vague`);
  fs.writeFileSync(file, text);
  const run = await runCli(['run', file, '--db', studio.dbPath], studio.dir);
  if (run.code !== 10 || !run.runId) throw new Error(`${name} did not suspend (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
  return run.runId;
}

async function records(runId: string, store: string): Promise<unknown[]> {
  const state = await studio.service.handle('run.stateAt', { runId, seq: 1e9 });
  return state.stores.find((s) => s.name === store)?.records.map((r) => r.record) ?? [];
}

async function resumedEvents(runId: string): Promise<string[]> {
  const events = await studio.service.handle('run.events', { runId });
  return events.filter((e) => e.type === 'run.resumed' || e.type === 'run.suspended' || e.type === 'pause.resumed' || e.type === 'run.completed').map((e) => e.type);
}

async function resumeInPage(page: Page, payload: string): Promise<void> {
  await expect.poll(() => page.getByLabel('Wait banner').isVisible(), { timeout: 10_000 }).toBe(true);
  await page.getByLabel('Resume payload').fill(payload);
  await page.getByRole('button', { name: 'Resume run' }).click();
  // The banner goes away with the wait: the header says how the run ended.
  await expect.poll(() => page.getByLabel('Run header').locator('.status-badge').getAttribute('data-status'), { timeout: 20_000 }).toBe('completed');
  expect(await page.getByRole('alert').count()).toBe(0);
}

describe('resuming with a payload', () => {
  it('delivers the studio payload to a webhook pause', async () => {
    const runId = await suspended('approvals', APPROVAL);
    const { page, errors } = await openPage(browser, `${studio.url}#run=${runId}&tab=timeline`);
    await resumeInPage(page, '{"approved": true, "by": "ana"}');
    expect(await records(runId, 'decisions')).toEqual([{ id: 'd1', approved: true, by: 'ana' }]);
    expect(await resumedEvents(runId)).toEqual(['run.suspended', 'pause.resumed', 'run.resumed', 'run.completed']);
    expect(errors).toEqual([]);
  });

  it('delivers the studio payload to a webhook wait', async () => {
    const runId = await suspended('signals', SIGNAL);
    const { page, errors } = await openPage(browser, `${studio.url}#run=${runId}&tab=timeline`);
    await resumeInPage(page, '{"level": 3}');
    expect(await records(runId, 'signals')).toEqual([{ id: 's1', body: { level: 3 } }]);
    // Delivered once, as the wait's one event, under the resume's own delivery id.
    const events = await studio.service.handle('run.events', { runId });
    const received = events.filter((e) => e.type === 'webhook.received');
    expect(received).toHaveLength(1);
    expect(received[0]!.payload).toMatchObject({ eventId: expect.stringMatching(new RegExp(`^resume:${runId}:\\d+$`)) });
    expect(events.filter((e) => e.type === 'run.suspended')).toHaveLength(1);
    // One resume, one marker (the wait's compare-and-set wrote it; the resumer adds none).
    expect(events.filter((e) => e.type === 'run.resumed')).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it('delivers `reqon resume --payload` to a pause and to a wait', async () => {
    const pause = await suspended('approvals-cli', APPROVAL);
    const wait = await suspended('signals-cli', SIGNAL);
    expect((await runCli(['resume', pause, '--payload', '{"approved":false,"by":"bo"}', '--db', studio.dbPath], studio.dir)).code).toBe(0);
    expect((await runCli(['resume', wait, '--payload', '{"level":7}', '--db', studio.dbPath], studio.dir)).code).toBe(0);
    expect(await records(pause, 'decisions')).toEqual([{ id: 'd1', approved: false, by: 'bo' }]);
    expect(await records(wait, 'signals')).toEqual([{ id: 's1', body: { level: 7 } }]);
    expect(await resumedEvents(wait)).toEqual(['run.suspended', 'run.resumed', 'run.completed']);
  });
});
