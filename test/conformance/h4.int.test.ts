/**
 * §H4 — schema/array/status match arms, allow, skip in a loop, validate-or fallback.
 *
 * Main flow: /orders/2 answers 404, allowed, so the `404 -> skip` arm skips that iteration (sent
 * exactly once: allowed statuses are not retried). Negative variant (`allow: [410]`): the 404 is a
 * failure of the id-2 iteration, tolerated by the V2 default `onError continue`: the run
 * completes, `ok` lacks "2", and the failure is reported in `result.tolerated`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtCli, cliStore, missionFiles, openConformance, parseRunOutput, runCli, type Conformance } from './harness.js';

const REQUESTS = ['GET /orders', 'GET /orders/1', 'GET /orders/2', 'GET /orders/3', 'GET /orders/4'];
const OK = { '1': { id: 1, total: 50 }, '3': { id: 3, total: 5000 }, '4': { id: 4, total: -5 } };
const AUDIT = { '3': { id: 3, total: 5000 }, '4': { id: 4, total: -5 } };

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api
    .on('GET /orders', { body: [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }] })
    .on('GET /orders/1', { body: { id: 1, total: 50 } })
    .on('GET /orders/2', { status: 404, body: { detail: 'nf' } })
    .on('GET /orders/3', { body: { id: 3, total: 5000 } })
    .on('GET /orders/4', { body: { id: 4, total: -5 } });
});

afterEach(async () => {
  await c.close();
});

describe('H4 Dispatch', () => {
  it('dispatches on [Ref], 404, Bad, guarded Good and Good; validate-or audits the negative total', async () => {
    const result = await c.start(missionFiles('h4'));
    expect(result.status).toBe('completed');
    expect(result.actionsRun).toEqual(['Orders']);
    expect(result.tolerated).toEqual([]);
    expect(c.api.lines()).toEqual(REQUESTS);
    expect(await c.store(result.runId, 'ok')).toEqual(OK);
    expect(await c.store(result.runId, 'audit')).toEqual(AUDIT);
    await c.expectVerified(result.runId);
  });

  it('negative variant allow: [410]: the id-2 iteration fails, is tolerated, and the run completes', async () => {
    const result = await c.start(missionFiles('h4', (t) => t.replace('allow: [404]', 'allow: [410]')));
    expect(result.status).toBe('completed');
    expect(result.actionsRun).toEqual(['Orders']);
    // 404 is not retryable: still exactly one request per order.
    expect(c.api.lines()).toEqual(REQUESTS);
    expect(result.tolerated).toHaveLength(1);
    expect(result.tolerated[0]!.message).toMatch(/404/);
    expect(await c.store(result.runId, 'ok')).toEqual(OK);
    expect(await c.store(result.runId, 'ok')).not.toHaveProperty('2');
    expect(await c.store(result.runId, 'audit')).toEqual(AUDIT);
    await c.expectVerified(result.runId);
  });

  it('the built CLI runs the main flow and `reqon store` lists ok and audit', async () => {
    const cli = await builtCli();
    const run = await runCli(cli, ['run', missionFiles('h4').entry, '--db', c.dbPath, '--source', `Api=${c.api.url}`, '--json', '--quiet'], {
      cwd: c.dir,
      env: { REQON_DATA_DIR: c.dataDir },
    });
    expect(run.code).toBe(0);
    const { runId, result } = parseRunOutput(run.stdout);
    expect(result.status).toBe('completed');
    expect(c.api.lines()).toEqual(REQUESTS);
    expect(await cliStore(cli, c, runId, 'ok')).toEqual(OK);
    expect(await cliStore(cli, c, runId, 'audit')).toEqual(AUDIT);
  });
});
