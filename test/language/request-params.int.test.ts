/**
 * assets/language/request-params.vague against a FakeApi on 127.0.0.1: `params: { … }` on a
 * request (upstream's docs, http/requests) is the URL's query — after the path's own, before the
 * page's; a null value sends nothing, an array repeats the parameter. The URL is the request's
 * replay identity, so a mission that changes a parameter diverges on replay (issue 15).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { languageMissionFiles, openConformance, type Conformance } from '../conformance/harness.js';
import { verifyRun } from '../../engine/executor/verify.js';
import { createFakeEnv } from '../../engine/env/fake-env.js';

const files = (edit?: (text: string) => string) => languageMissionFiles('request-params', edit);

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api
    .on('GET /users?v=2&status=active&limit=2&tags=a&tags=b&page=1', { body: [{ id: 1 }, { id: 2 }] })
    .on('GET /users?v=2&status=active&limit=2&tags=a&tags=b&page=2', { body: [{ id: 3 }] });
});

afterEach(async () => {
  await c.close();
});

describe('params on a request', () => {
  it('are sent as the query, and are part of the request identity', async () => {
    const result = await c.start(files());
    expect(result.status === 'completed' ? 'completed' : JSON.stringify(result)).toBe('completed');
    expect(c.api.lines()).toEqual([
      'GET /users?v=2&status=active&limit=2&tags=a&tags=b&page=1',
      'GET /users?v=2&status=active&limit=2&tags=a&tags=b&page=2',
    ]);
    expect(Object.keys(await c.store(result.runId, 'users')).sort()).toEqual(['1', '2', '3']);
    await c.expectVerified(result.runId);

    // A param edited in the request is another request; one edited through a `let` diverges
    // already at the let, whose recorded value verify compares.
    const edited = files((t) => t.replace('params: { status: status,', 'params: { status: "archived",'));
    const report = await verifyRun(c.log, result.runId, { missionFiles: edited, env: createFakeEnv() });
    expect(report.ok).toBe(false);
    expect(JSON.stringify(report.divergence)).toContain('status=archived');
    const viaLet = files((t) => t.replace('let status = "active"', 'let status = "archived"'));
    const atLet = await verifyRun(c.log, result.runId, { missionFiles: viaLet, env: createFakeEnv() });
    expect(atLet.divergence).toMatchObject({ stepPath: 'Fetch/0', cause: 'edit' });
    expect(atLet.divergence!.change).toContain('"value":"archived"');
  });
});
