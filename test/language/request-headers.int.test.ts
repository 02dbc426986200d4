/**
 * assets/language/request-headers.vague against a FakeApi on 127.0.0.1: `headers: { … }` on a
 * request (upstream's docs, http/requests) is sent with it, replacing a source header of the same
 * name (case-insensitive) and keeping the others; a null value sends none. They are part of the
 * request's replay identity, as the source's are.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { languageMissionFiles, openConformance, type Conformance } from '../conformance/harness.js';
import { verifyRun } from '../../engine/executor/verify.js';
import { createFakeEnv } from '../../engine/env/fake-env.js';

const files = (edit?: (text: string) => string) => languageMissionFiles('request-headers', edit);

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /items', { body: [{ id: 1 }] });
});

afterEach(async () => {
  await c.close();
});

describe('headers on a request', () => {
  it('are sent over the source headers, and are part of the request identity', async () => {
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    const sent = c.api.requests[0]!.headers;
    expect(sent['x-api-version']).toBe('2.0');
    expect(sent['x-team']).toBe('core');
    expect(sent['accept']).toBe('application/json');
    expect(sent['x-skip']).toBeUndefined();
    await c.expectVerified(result.runId);

    const edited = files((t) => t.replace('let version = "2.0"', 'let version = "3.0"'));
    const report = await verifyRun(c.log, result.runId, { missionFiles: edited, env: createFakeEnv() });
    expect(report.ok).toBe(false);
  });
});
