/**
 * Failures a run goes on after, on missions and an API that are not the demo's: a loopback API
 * that answers every POST with 422, and a `validate` that fails for one record inside a loop.
 * Both missions are run by the engine into the studio's log before the page opens. The runs
 * table says "completed with N failures" in its own colour and has a filter for it; the failed
 * step's event names the value and the record; State at the failure shows the loop variable —
 * the record being processed.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createRealEnv } from '../engine/env/real-env.js';
import { startRun } from '../engine/executor/run-mission.js';
import type { StoredEvent } from '../engine/log/events.js';
import { launchBrowser, openPage } from './support/browser.js';
import { startStudio, type Studio } from './support/studio.js';
import { screenshot } from './support/screenshots.js';

const ITEMS = [
  { id: 'a', qty: 2 },
  { id: 'b', qty: -1 },
  { id: 'c', qty: 3 },
];

const SHIP = `mission Shipments {
  source Depot { auth: none, base: "http://127.0.0.1:1" }
  store sent: memory("sent")
  action Ship {
    get "/items"
    for item in response {
      post "/shipments" { body: { sku: item.id, qty: item.qty } }
      store { id: item.id, status: response.status } -> sent { key: .id }
    }
  }
  run Ship
}
`;

const CHECK = `mission Stock {
  source Depot { auth: none, base: "http://127.0.0.1:1" }
  store ok: memory("ok")
  action Check {
    get "/items"
    for line in response {
      validate line {
        assume .qty > 0
      }
      store line -> ok { key: .id }
    }
  }
  run Check
}
`;

/** Answers GET /items with ITEMS and every POST with 422, on 127.0.0.1. */
async function startDepot(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'GET' && req.url === '/items') res.end(JSON.stringify(ITEMS));
      else if (req.method === 'POST') {
        res.statusCode = 422;
        res.end(JSON.stringify({ error: 'unprocessable', detail: 'unknown sku' }));
      } else {
        res.statusCode = 404;
        res.end('{}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

let studio: Studio;
let browser: Browser;
let page: Page;
let errors: string[];
let shipId = '';
let checkId = '';
let checkEvents: StoredEvent[] = [];
let shipEvents: StoredEvent[] = [];

beforeAll(async () => {
  const depot = await startDepot();
  try {
    studio = await startStudio({
      seed: async (log, dir) => {
        const deps = { log, env: createRealEnv({}), dataDir: `${dir}/data`, progress: () => {} };
        const run = async (name: string, text: string) => {
          const entry = `${dir}/${name}.vague`;
          const result = await startRun({ entry, files: [{ path: entry, text }] }, { sources: { Depot: depot.url }, env: {} }, deps);
          if (result.status !== 'completed') throw new Error(`${name} ended ${result.status}`);
          return result.runId;
        };
        shipId = await run('shipments', SHIP);
        checkId = await run('stock', CHECK);
        shipEvents = await log.read(shipId);
        checkEvents = await log.read(checkId);
      },
    });
  } finally {
    await depot.close();
  }
  browser = await launchBrowser();
  ({ page, errors } = await openPage(browser, studio.url));
});

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

const row = (runId: string) => page.locator(`tr[data-run-id="${runId}"]`);
const visibleRunIds = () => page.locator('tr[data-run-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));

describe('a run that went on after failures', () => {
  it('reads "completed with N failures" in the runs table, in its own colour', async () => {
    await row(shipId).waitFor();
    // The table's column is narrow: the badge says the count, its title the whole sentence.
    expect(await row(shipId).locator('.status-badge').textContent()).toBe('⚠ 3 failures');
    expect(await row(shipId).locator('.status-badge').getAttribute('title')).toBe('completed with 3 failures');
    expect(await row(checkId).locator('.status-badge').getAttribute('title')).toBe('completed with 1 failure');
    // Nothing cut off: the badge fits its cell.
    const fits = await row(shipId).locator('.status-badge').evaluate((b) => b.scrollWidth <= b.clientWidth + 1 && b.getBoundingClientRect().right <= b.closest('td')!.getBoundingClientRect().right + 1);
    expect(fits).toBe(true);
    const colours = await page.locator('.status-badge').evaluateAll((badges) => badges.map((b) => getComputedStyle(b).color));
    // Not the green of a clean completion (both badges share the failures colour).
    expect(new Set(colours).size).toBe(1);
    expect(await row(shipId).locator('.status-badge').getAttribute('data-status')).toBe('completed-with-failures');
  });

  it('is found by the "completed with failures" filter and not by "completed"', async () => {
    const filter = page.getByLabel('Status filter');
    await filter.selectOption('completed-with-failures');
    await expect.poll(visibleRunIds).toEqual(expect.arrayContaining([shipId, checkId]));
    await filter.selectOption('completed');
    await expect.poll(visibleRunIds).toEqual([]);
    await filter.selectOption('all');
    await expect.poll(async () => (await visibleRunIds()).length).toBe(2);
  });

  it('the header of the run says it too', async () => {
    await row(shipId).click();
    await expect.poll(() => page.locator('.run-header .status-badge').textContent()).toBe('completed with 3 failures');
    await screenshot(page, 'failed-run');
  });

  it('a failed step says what it sent, what the API answered and why it failed; "Event →" opens the failure', async () => {
    await page.goto(`${studio.url}#run=${shipId}&tab=timeline`);
    const failedBar = page.locator('.timeline-bar.bar-failed').first();
    await failedBar.click();
    const did = page.getByLabel('What the step did');
    await expect.poll(() => did.textContent()).toContain('POST /shipments → 422');
    expect(await did.textContent()).toContain('failed with 422');
    expect(await did.textContent()).toContain('unknown sku');
    await screenshot(page, 'failed-step');
    await page.getByRole('button', { name: 'Show event at selection' }).click();
    const failure = shipEvents.find((e) => e.type === 'step.failed' && e.stepPath === 'Ship/1[0]/0')!;
    await expect.poll(() => page.locator('[role="option"][aria-selected="true"]').getAttribute('data-seq')).toBe(String(failure.seq));
    await expect.poll(() => page.getByLabel('Payload JSON').textContent()).toContain('http-status');
  });

  it('State at the failed POST shows the request, the 422 body and the message; the next position does not', async () => {
    const failure = shipEvents.find((e) => e.type === 'step.failed' && e.stepPath === 'Ship/1[0]/0')!;
    await page.goto(`${studio.url}#run=${shipId}&tab=state`);
    const slider = page.getByRole('slider', { name: 'Position' });
    await slider.waitFor();
    await slider.fill(String(failure.seq));
    const panel = page.getByRole('region', { name: 'Failure at position' });
    await expect.poll(() => panel.textContent()).toContain('Ship/1[0]/0');
    const text = (await panel.textContent())!;
    expect(text).toMatch(/POST http:\/\/127\.0\.0\.1:\d+\/shipments → 422/);
    expect(text).toContain('http-status');
    // The bodies, both ways: what was sent (the record's sku) and what the API answered.
    const json = page.getByLabel('Failure JSON');
    await expect.poll(() => json.textContent()).toContain('unknown sku');
    expect(await json.textContent()).toContain('"a"');
    await screenshot(page, 'failed-step-state');
    // The failure travels up to the loop's own step.failed only if it ended the loop; the event
    // after the failure (the loop carrying on) shows no failure.
    await slider.fill(String(failure.seq + 1));
    await expect.poll(() => page.locator('.scrubber-state .seq-chip').textContent()).toBe(`#${failure.seq + 1}`);
    const next = shipEvents.find((e) => e.seq === failure.seq + 1)!;
    expect(await panel.count()).toBe(next.type === 'step.failed' ? 1 : 0);
    expect(errors).toEqual([]);
  });

  it('the failed validation names the value and the record that failed', async () => {
    const failed = checkEvents.find((e) => e.type === 'step.failed')!;
    await page.goto(`${studio.url}#run=${checkId}&tab=events`);
    await page.locator(`[role="option"][data-seq="${failed.seq}"]`).click();
    await expect
      .poll(() => page.getByLabel('Payload JSON').textContent())
      .toContain('Validation failed: `.qty > 0` (line 8) is false: `.qty` is number (-1) for the record with id \\"b\\"');
  });

  it('State at the failure shows the loop variable: the record being processed', async () => {
    const failed = checkEvents.find((e) => e.type === 'step.failed')!;
    await page.goto(`${studio.url}#run=${checkId}&tab=state`);
    const slider = page.getByRole('slider', { name: 'Position' });
    await slider.waitFor();
    await slider.fill(String(failed.seq));
    const variables = page.getByRole('region', { name: 'Variables', exact: true });
    await expect.poll(() => variables.textContent()).toContain('line:');
    expect(await variables.textContent()).toContain('"b"');
    expect(await variables.textContent()).toContain('-1');
    // One step earlier in the log (the first record's store), the loop held the first record.
    const firstStore = checkEvents.find((e) => e.type === 'store.write')!;
    await slider.fill(String(firstStore.seq));
    await expect.poll(() => variables.textContent()).toContain('"a"');
    expect(errors).toEqual([]);
  });
});
