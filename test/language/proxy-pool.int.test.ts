/**
 * assets/language/proxy-pool.vague against a FakeApi on 127.0.0.1: a source's `proxy:` pool
 * (upstream's fpl-sharded examples) is not sent through yet. With every entry unset the request
 * goes directly, as upstream's example allows; with any entry set the request fails, saying so,
 * instead of leaving from this host's own address as it silently did (the pool was parsed and
 * ignored). docs/language.md, "Not done yet".
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/proxy-pool.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /items', { body: [{ id: 1 }, { id: 2 }] });
});

afterEach(async () => {
  await c.close();
});

describe('a source proxy pool', () => {
  it('sends directly when every proxy is unset', async () => {
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(Object.keys(await c.store(result.runId, 'items'))).toEqual(['1', '2']);
  });

  it('fails the request, naming no proxy URL, when one is set', async () => {
    const result = await c.start(files(), { env: { EGRESS_1: 'http://user:s3cret@127.0.0.1:9' } });
    expect(result.status).toBe('failed');
    const message = result.status === 'failed' ? result.error.message : '';
    expect(message).toContain('source "Api" sets 1 of its 2 proxies: sending through proxies is not supported yet');
    expect(message).not.toContain('s3cret');
    expect(c.api.requests).toHaveLength(0);
  });
});
