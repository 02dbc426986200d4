/**
 * assets/language/wait-non-blocking.vague: a `timeout: 0` wait takes the deliveries already in the
 * inbox that pass its filter and never suspends; when none has arrived it carries on with
 * `webhook` null instead of failing with "Webhook timeout"; its eventFilter reads the delivery,
 * not the loop's item. Replays clean, and a run recorded before either rule (its events without
 * `nonBlocking` / `filterOnDelivery`) replays by the rule it ran by.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exportRunText, importBundle, parseBundle } from '../../engine/executor/run-bundle.js';
import { verifyRun } from '../../engine/executor/verify.js';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/wait-non-blocking.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
});

afterEach(async () => {
  await c.close();
});

describe('a `timeout: 0` wait', () => {
  it('carries on with `webhook` null when nothing has arrived', async () => {
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(await c.store(result.runId, 'payments')).toEqual({
      p1: { id: 'p1', checked: true, refunded: false },
      p2: { id: 'p2', checked: true, refunded: false },
      p3: { id: 'p3', checked: true, refunded: false },
    });
    expect(await c.store(result.runId, 'refunds')).toEqual({});
    await c.expectVerified(result.runId);
  });

  it('takes what has arrived for its filter, and leaves the rest in the inbox', async () => {
    const now = Date.now();
    expect(await c.log.deliverWebhook('/webhooks/refund', 'd-p2', { payment: 'p2', type: 'charge.refunded', amount: 12 }, now)).toBe('accepted');
    expect(await c.log.deliverWebhook('/webhooks/refund', 'd-p9', { payment: 'p9', type: 'charge.refunded', amount: 99 }, now)).toBe('accepted');
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(await c.store(result.runId, 'refunds')).toEqual({ p2: { id: 'p2', amount: 12 } });
    expect((await c.store(result.runId, 'payments'))['p2']).toEqual({ id: 'p2', checked: true, refunded: true });
    expect((await c.log.webhookInbox('/webhooks/refund')).map((d) => d.eventId)).toEqual(['d-p9']);
    await c.expectVerified(result.runId);
  });

  it('takes a delivery older than the inbox expiry that no sweep has dropped yet (GUARANTEES, "A bounded inbox")', async () => {
    const eightDaysAgo = Date.now() - 8 * 24 * 60 * 60 * 1000;
    expect(await c.log.deliverWebhook('/webhooks/refund', 'd-old', { payment: 'p1', type: 'charge.refunded', amount: 5 }, eightDaysAgo)).toBe('accepted');
    const result = await c.start(files());
    expect(result.status).toBe('completed');
    expect(await c.store(result.runId, 'refunds')).toEqual({ p1: { id: 'p1', amount: 5 } });
  });

  it('a run recorded before keeps its rules: a `timeout: 0` wait that took nothing failed, a filter read the loop item', async () => {
    const now = Date.now();
    expect(await c.log.deliverWebhook('/webhooks/refund', 'd-p2', { payment: 'p2', type: 'charge.refunded', amount: 12 }, now)).toBe('accepted');
    const result = await c.start(files());
    expect(result.status).toBe('completed');
    let text = '';
    for await (const chunk of exportRunText(c.log, result.runId)) text += chunk;
    const bundle = parseBundle(text);
    const events = bundle.events;
    expect(events.filter((e) => e.type === 'wait.completed').map((e) => (e.payload as { nonBlocking?: true }).nonBlocking)).toEqual([true, undefined, true]);
    expect(events.filter((e) => e.type === 'wait.registered').every((e) => (e.payload as { filterOnDelivery?: true }).filterOnDelivery === true)).toBe(true);
    // The same run as an engine before these rules recorded it: no flags (imported into a log of
    // its own, under its own id: its effect ids are derived from that id).
    const strip = (keys: string[]) => ({
      ...bundle,
      events: events.map((e) => ({ ...e, payload: Object.fromEntries(Object.entries(e.payload as object).filter(([k]) => !keys.includes(k))) })) as typeof events,
    });
    for (const [keys, divergence] of [
      // By the old rule the first wait, which took nothing, fails the step (the run recorded completing it).
      [['nonBlocking'], /"stepPath":"Check\/0\[0\]\/0".*"asked":"a step.failed event"/],
      [['filterOnDelivery'], /eventFilter no longer passes the delivery d-p2/],
    ] as const) {
      const other = await openConformance();
      try {
        const imported = await importBundle(other.log, strip([...keys]));
        const report = await verifyRun(other.log, imported.runId, { env: other.env });
        expect(report.ok, keys.join()).toBe(false);
        expect(JSON.stringify(report.divergence)).toMatch(divergence);
      } finally {
        await other.close();
      }
    }
  });

});
