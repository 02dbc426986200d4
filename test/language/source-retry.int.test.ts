/**
 * assets/language/source-retry.vague against a FakeApi on 127.0.0.1: a source's `retry: { … }`
 * (upstream's docs, error-handling/retry-strategies) retries its requests that give no `retry:`
 * of their own; one that gives its own keeps it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConformance, REPO, type Conformance } from '../conformance/harness.js';

const ENTRY = path.join(REPO, 'assets/language/source-retry.vague');
const files = () => ({ entry: ENTRY, files: [{ path: ENTRY, text: fs.readFileSync(ENTRY, 'utf8') }] });

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api
    .on('GET /flaky', [{ status: 503, body: {} }, { status: 503, body: {} }, { status: 503, body: {} }, { body: [{ id: 1 }] }])
    .on('GET /once', [{ status: 503, body: {} }, { body: [{ id: 2 }] }]);
});

afterEach(async () => {
  await c.close();
});

describe('retry on a source', () => {
  it('retries the source requests with no retry of their own', async () => {
    const result = await c.start(files());
    expect(result.status).toBe('failed');
    // Four attempts 10 ms apart (the default is three, a second apart), then one for /once.
    expect(c.api.lines()).toEqual(['GET /flaky', 'GET /flaky', 'GET /flaky', 'GET /flaky', 'GET /once']);
    expect(Object.keys(await c.store(result.runId, 'items'))).toEqual(['1']);
  });
});
