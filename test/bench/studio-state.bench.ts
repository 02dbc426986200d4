/**
 * The State tab on a long run with a big `response`, in a real browser: a temp log holding a
 * 100k-event run whose GET answered 25k records (studio-big-run.ts), the studio server on
 * 127.0.0.1 serving renderer/dist, headless Chromium on the run's timeline (its first view). Figures, taken by
 * the page's own clock (`performance.now()`), from the input to the first animation frame after
 * the view shows the answer:
 *  - open: a click on the State tab → the Response tree has rows and the position shows the seq;
 *  - scrub step: ArrowRight on the scrubber → the state panel shows the next seq and is not busy
 *    (p50 and p95 of STEPS steps, starting inside the loop, where `response` is the 25k records).
 * Goals (printed, not asserted): open < 300 ms, scrub step < 150 ms. The scrubber waits 60 ms for
 * the position to settle before it asks (Scrubber.tsx), which the step figure includes.
 *
 * Invariant: everything started here (log, service, server, browser, temp dir) is stopped in a
 * `finally`, and a missing Chromium is a printed skip, never a failure.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import type { EventLog } from '../../engine/log/log.js';
import { openLog } from '../../engine/log/open-log.js';
import { createStudioService, type StudioService } from '../../engine/server/studio-service.js';
import { startStudioServer, type StudioServer } from '../../engine/server/studio-server.js';
import type { BenchResult } from './bench-types.js';
import { seedBigRun } from './studio-big-run.js';
import { repoRoot } from './studio-paint.bench.js';
import { CHROMIUM_ARGS, locateChromium } from '../support/chromium.js';

const EVENTS = 100_000;
const RECORDS = 25_000;
const STEPS = 30;
const RUN_ID = 'bench-state-100k';
const NAME = 'studio State tab (100k events, 25k-record response)';
const TIMEOUT_MS = 20_000;

/**
 * In the page: `window.__until(check)` resolves with `performance.now()` in the first animation
 * frame after `check()` holds, watching DOM mutations (no polling from outside). A string,
 * because this module compiles without DOM types.
 */
const UNTIL = `(() => {
  window.__until = (check, timeoutMs) => new Promise((resolve, reject) => {
    const done = () => requestAnimationFrame(() => resolve(performance.now()));
    if (check()) return done();
    const timer = setTimeout(() => { observer.disconnect(); reject(new Error('timed out')); }, timeoutMs);
    const observer = new MutationObserver(() => {
      if (check()) { observer.disconnect(); clearTimeout(timer); done(); }
    });
    observer.observe(document, { childList: true, subtree: true, characterData: true, attributes: true });
  });
})();`;

/** The state panel shows `seq` and has no request in flight. */
const SHOWS_SEQ = `(seq) => {
  const panel = document.querySelector('.scrubber-state');
  const chip = panel && panel.querySelector('.seq-chip');
  return !!chip && chip.textContent === '#' + seq && panel.getAttribute('aria-busy') === 'false'
    && !!document.querySelector('[aria-label="Response JSON"] .json-row');
}`;

/**
 * A production build of the renderer of its own: renderer/dist may hold a development build (the
 * e2e global setup builds under vitest, where React's development bundle is chosen), which is
 * several times slower to render and would make the figures meaningless.
 */
function buildRenderer(root: string, outDir: string): string {
  const built = spawnSync('npx', ['vite', 'build', '--config', 'renderer/vite.config.ts', '--outDir', outDir, '--emptyOutDir', '--logLevel', 'warn'], {
    cwd: root,
    stdio: ['ignore', 2, 2],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (built.status !== 0 || !fs.existsSync(path.join(outDir, 'index.html'))) {
    throw new Error(`studio-state bench: vite build of the renderer into ${outDir} failed (exit ${String(built.status)})`);
  }
  return outDir;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Click the State tab, and the time until it shows the end of the run (an expression run in the page). */
function openExpression(lastSeq: number): string {
  return `(async () => {
    const shows = ${SHOWS_SEQ};
    const tab = [...document.querySelectorAll('[role="tab"]')].find((el) => el.textContent.trim() === 'State');
    if (!tab) throw new Error('no State tab');
    const start = performance.now();
    tab.click();
    return (await window.__until(() => shows(${lastSeq}), ${TIMEOUT_MS})) - start;
  })()`;
}

/** One ArrowRight on the scrubber, and the time until the panel shows `seq`. */
function stepExpression(seq: number): string {
  return `(async () => {
    const shows = ${SHOWS_SEQ};
    const slider = document.querySelector('[aria-label="Position"]');
    const start = performance.now();
    slider.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true, cancelable: true }));
    return (await window.__until(() => shows(${seq}), ${TIMEOUT_MS})) - start;
  })()`;
}

async function timed(page: Page, expression: string): Promise<number> {
  const ms = (await page.evaluate(expression)) as unknown;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new Error(`studio-state bench: the page reported no time (got ${String(ms)})`);
  return ms;
}

export async function benchmarks(): Promise<BenchResult[]> {
  const chromium = locateChromium();
  if ('missing' in chromium) {
    process.stderr.write(`studio-state bench: skipped — ${chromium.missing}\n`);
    return [{ name: NAME, value: Number.NaN, unit: 'skipped: no Chromium found' }];
  }
  const root = repoRoot();
  const { chromium: playwright } = await import('playwright-core');

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-bench-state-'));
  const dbPath = path.join(dir, 'reqon.db');
  let log: EventLog | null = null;
  let service: StudioService | null = null;
  let server: StudioServer | null = null;
  let browser: Awaited<ReturnType<typeof playwright.launch>> | null = null;
  try {
    const staticDir = buildRenderer(root, path.join(dir, 'renderer'));
    log = await openLog(dbPath);
    const run = await seedBigRun(log, { runId: RUN_ID, total: EVENTS, records: RECORDS });
    await log.close();
    log = null;
    service = await createStudioService({ dbPath, cliPath: path.join(root, 'dist', 'engine', 'cli', 'main.js'), cwd: dir });
    server = await startStudioServer({ service, staticDir, port: 0 });
    browser = await playwright.launch({ executablePath: chromium.path, headless: true, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    await page.addInitScript({ content: UNTIL });
    // From the run's first view (the timeline), as a user opens State: the log has been read once.
    await page.goto(`${server.url}#run=${encodeURIComponent(RUN_ID)}&tab=timeline`);
    await page.getByRole('tab', { name: 'State' }).waitFor({ timeout: TIMEOUT_MS });
    await page.locator('.timeline-bar').first().waitFor({ state: 'attached', timeout: TIMEOUT_MS });

    const openMs = await timed(page, openExpression(run.lastSeq));

    // Into the loop, where `response` is the 25k records: a typed position, like the e2e spec.
    const from = run.responseSeq + 1000;
    await page.getByRole('slider', { name: 'Position' }).fill(String(from));
    await page.evaluate(`window.__until(() => (${SHOWS_SEQ})(${from}), ${TIMEOUT_MS})`);
    const steps: number[] = [];
    for (let k = 1; k <= STEPS; k += 1) steps.push(await timed(page, stepExpression(from + k)));
    steps.sort((a, b) => a - b);
    // Where the time went, for people reading the table: [server wait ms, download ms, bytes] per run.stateAt.
    const requests = (await page.evaluate(
      `performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/api/run.stateAt')).map((e) => [Math.round(e.responseStart - e.requestStart), Math.round(e.responseEnd - e.responseStart), e.encodedBodySize])`,
    )) as [number, number, number][];
    process.stderr.write(`studio-state bench: run.stateAt on open ${JSON.stringify(requests[0])}, on steps ${JSON.stringify(requests.slice(-5))}\n`);
    const rows = await page.locator('[aria-label="Response JSON"] .json-row').count();
    process.stderr.write(`studio-state bench: ${run.lastSeq} events, ${RECORDS}-record response; ${rows} response rows in the DOM; steps ${steps.map((s) => s.toFixed(0)).join(' ')} ms\n`);
    await context.close();

    return [
      { name: `${NAME}: open`, value: openMs, unit: 'ms (goal < 300)' },
      { name: `${NAME}: scrub step p50`, value: percentile(steps, 50), unit: 'ms (goal < 150)' },
      { name: `${NAME}: scrub step p95`, value: percentile(steps, 95), unit: 'ms (goal < 150)' },
    ];
  } finally {
    await browser?.close();
    await server?.close();
    await service?.close();
    await log?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
