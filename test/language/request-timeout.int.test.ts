/**
 * assets/language/request-timeout.vague against a FakeApi on 127.0.0.1: `timeout: N` on a request
 * (upstream's docs, http/requests) gives up on it after N ms, though its source allows 30 s.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/request-timeout.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /slow', () => new Promise((resolve) => setTimeout(() => resolve({ body: [{ id: 1 }] }), 1500)));
});

afterEach(async () => {
  await c.close();
});

describe('timeout on a request', () => {
  it('fails the request after that many ms, over the source timeout', async () => {
    const started = Date.now();
    const result = await c.start(files());
    expect(result.status).toBe('failed');
    expect(Date.now() - started).toBeLessThan(1400);
    expect(result.status === 'failed' && result.error.message.toLowerCase()).toContain('timed out');
  });
});
