/**
 * GUARANTEES 14: the values of query parameters and headers whose names mark a credential
 * (`page_token`, `card_token`, `X-Customer-Token`) are hidden from the log by name, yet an edit of
 * one is another request — verify diverges and a resume refuses it, never answering the edited
 * request with the recorded response or sending it under the recorded Idempotency-Key. A setting
 * read through `env()` (a key rotated between the run and its resume) changes nothing, whatever
 * the setting is called. On both backends.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified } from '../../engine/executor/verify-report.js';
import type { MissionFiles } from '../../engine/log/log.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';
import { insertStoredRun, openTempLog, type TempLog } from './support/stored-log.js';

const mission = (pageToken: string, cardToken: string, customer: string) => `mission Charges {
  source Api { auth: none, base: "http://127.0.0.1:9", headers: { "X-Tenant-Token": env("TENANT") } }
  store out: memory("out")
  action A {
    get "/reports" { params: { page_token: ${pageToken}, api_key: env("SHOP") } }
    post "/charges" { params: { card_token: ${cardToken} }, headers: { "X-Customer-Token": ${customer}, "X-Note": "n" }, body: { amount: 5 } }
    store { id: "c", charge: response.id } -> out { key: .id }
  }
  run A
}
`;
const ORIGINAL = mission('"p-100"', '"tok_A"', '"cus_A"');

let c: Conformance | undefined;
const temps: TempLog[] = [];
afterEach(async () => {
  for (const t of temps.splice(0)) await t.close();
  await c?.close();
  c = undefined;
});

describe.each(backends)('%s: credential-named parameters and headers in request identities', (backend) => {
  async function recorded() {
    c = await openConformance({ backend });
    c.api.on('GET /reports?page_token=p-100&api_key=shop-key-1', { status: 200, body: [{ id: 1 }] });
    c.api.on('POST /charges?card_token=tok_A', { status: 201, body: { id: 'ch_1' } });
    const files = c.mission('charges', ORIGINAL);
    const result = await c.start(files, { env: { TENANT: 'tenant-secret-1', SHOP: 'shop-key-1' } });
    expect(result.status).toBe('completed');
    return { runId: result.runId, files };
  }
  const edited = (text: string): MissionFiles => c!.mission('edited', text);

  it('an edited page_token, card_token or X-Customer-Token diverges; the mission as it was verifies whole', async () => {
    const { runId } = await recorded();
    const whole = await verifyRun(c!.log, runId, { env: c!.env });
    expect(fullyVerified(whole)).toBe(true);
    for (const [text, step] of [
      [mission('"p-999"', '"tok_A"', '"cus_A"'), 'A/0'],
      [mission('"p-100"', '"tok_B"', '"cus_A"'), 'A/1'],
      [mission('"p-100"', '"tok_A"', '"cus_B"'), 'A/1'],
    ] as const) {
      const report = await verifyRun(c!.log, runId, { env: c!.env, missionFiles: edited(text) });
      expect(report.ok, text).toBe(false);
      expect(report.divergence).toMatchObject({ stepPath: step, cause: 'edit' });
      expect(report.divergence!.change).toContain('a credential-named query parameter or header');
    }
    // Nothing hidden leaks into the log: the values are in neither the URLs nor the identities.
    const logged = JSON.stringify(await c!.events(runId));
    for (const hidden of ['p-100', 'tok_A', 'cus_A', 'tenant-secret-1', 'shop-key-1']) expect(logged).not.toContain(hidden);
  });

  it('settings rotated between the run and its verify or resume (env values, whatever their names) are the same request', async () => {
    const { runId, files } = await recorded();
    const run = (await c!.log.getRun(runId))!;
    const rotated = await openTempLog(backend, {}, 'reqon-rotated-');
    temps.push(rotated);
    const id = await insertStoredRun(rotated.log, { events: await c!.events(runId), missionFiles: files, options: { ...run.options, env: { TENANT: 'tenant-secret-2', SHOP: 'shop-key-2' } } });
    const report = await verifyRun(rotated.log, id, { env: c!.env });
    expect(report.divergence).toBeNull();
    expect(fullyVerified(report)).toBe(true);
  });
});

describe.each(backends)('%s: a credential-named setting sent in a URL and a body', (backend) => {
  it('is in the log as [REDACTED], and verify redacts it as the run did: the run verifies whole', async () => {
    c = await openConformance({ backend });
    c.api.on('GET /a?k=supersecretvalue123', { status: 200, body: { id: 'a' } });
    c.api.on('POST /b', { status: 201, body: { id: 'b' } });
    const files = c.mission('envsecret', `mission EnvSecret {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    get "/a" { params: { k: env("MY_API_TOKEN") } }
    store response -> out
    post "/b" { body: { note: "hello", secret: env("MY_API_TOKEN") } }
    store response -> out
  }
  run A
}
`);
    const result = await c.start(files, { env: { MY_API_TOKEN: 'supersecretvalue123' } });
    expect(result.status).toBe('completed');
    const events = await c.events(result.runId);
    expect(JSON.stringify(events)).not.toContain('supersecretvalue123');
    expect(JSON.stringify(events)).toContain('[REDACTED]');
    const report = await verifyRun(c.log, result.runId, { env: c.env });
    expect(report.divergence).toBeNull();
    expect(fullyVerified(report)).toBe(true);
  });
});
