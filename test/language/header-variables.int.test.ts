/**
 * assets/language/header-variables.vague against a FakeApi on 127.0.0.1: `${NAME}` in a source
 * header's string is the run's setting NAME, as env("NAME") would read it (upstream's
 * reconciliation example sends `"X-Shopify-Access-Token": "${SHOPIFY_TOKEN}"`); before, the text
 * was sent as written. A setting the run lacks fails the request, naming the header and `--env`.
 * The token header is redacted in the log by its name, as any header holding "token".
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/header-variables.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /orders.json', { body: { orders: [{ id: 1 }] } });
});

afterEach(async () => {
  await c.close();
});

describe('${NAME} in a source header', () => {
  it('is the run setting NAME', async () => {
    const result = await c.start(files(), { env: { SHOP_TOKEN: 'shpat_0123456789', TENANT: 'acme' } });
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    const sent = c.api.requests[0]!.headers;
    expect(sent['x-shopify-access-token']).toBe('shpat_0123456789');
    expect(sent['x-tenant']).toBe('acme-eu');
    expect(sent['x-plain']).toBe('no $ variables {here}');
    expect(JSON.stringify(await c.log.read(result.runId))).not.toContain('shpat_0123456789');
    await c.expectVerified(result.runId);
  });

  it('fails the request when the run does not set it, naming the header and --env', async () => {
    const result = await c.start(files(), { env: { SHOP_TOKEN: 'shpat_0123456789' } });
    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error.message).toContain('header "X-Tenant" of source "Api" reads ${TENANT}');
    expect(result.status === 'failed' && result.error.message).toContain('--env TENANT=');
    expect(c.api.requests).toHaveLength(0);
  });
});
