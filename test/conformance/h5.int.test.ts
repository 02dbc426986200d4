/**
 * §H5 — action-level flow control: `retry`, `jump`, `queue`; a parallel stage and a conditional one.
 *
 * Main flow: Poll retries until /job is done (3 GETs), Check jumps over Normal to Recover, Recover
 * queues its failed report to `dlq` (the store after the queue arm does not run), NotifyA and
 * NotifyB post in parallel, and Final's condition is false (REQON_CONF_FINAL unset). Variant: /job
 * stays pending: three GETs, then "Action Poll exhausted 3 retry attempt(s)" and nothing more.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtCli, missionFiles, openConformance, parseRunOutput, runCli, type Conformance } from './harness.js';

const PENDING = { body: { id: 'j1', state: 'pending' } };

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api
    .on('GET /health', { body: { ok: false } })
    .on('GET /report', { body: { id: 'r1', state: 'failed' } })
    .on('POST /notify', { body: { ok: true } })
    .on('GET /normal', { body: {} })
    .on('GET /final', { body: {} });
});

afterEach(async () => {
  await c.close();
});

describe('H5 Flow', () => {
  it('retries Poll, jumps over Normal, queues the report, notifies in parallel, skips Final', async () => {
    c.api.on('GET /job', [PENDING, PENDING, { body: { id: 'j1', state: 'done' } }]);
    const result = await c.start(missionFiles('h5'));
    expect(result.status).toBe('completed');
    expect(result.tolerated).toEqual([]);

    const lines = c.api.lines();
    expect(lines.slice(0, 5)).toEqual(['GET /job', 'GET /job', 'GET /job', 'GET /health', 'GET /report']);
    expect(lines.slice(5)).toEqual(['POST /notify', 'POST /notify']);
    const bodies = c.api.requests.slice(5).map((r) => r.body);
    expect(bodies).toEqual(expect.arrayContaining([{ channel: 'a' }, { channel: 'b' }]));
    expect(lines).not.toContain('GET /normal');
    expect(lines).not.toContain('GET /final');
    // Each POST carries its own Idempotency-Key (two different effects).
    const keys = c.api.requests.slice(5).map((r) => r.headers['idempotency-key']);
    expect(keys.every((k) => typeof k === 'string' && k !== '')).toBe(true);
    expect(new Set(keys).size).toBe(2);

    expect([...result.actionsRun].sort()).toEqual(['NotifyA', 'NotifyB', 'Poll', 'Recover']);
    expect(result.actionsRun.slice(0, 2)).toEqual(['Poll', 'Recover']);
    expect(await c.store(result.runId, 'jobs')).toEqual({ j1: { id: 'j1', state: 'done' } });
    expect(await c.store(result.runId, 'dlq')).toEqual({ r1: { id: 'r1', state: 'failed' } });
    const skipped = (await c.events(result.runId)).filter((e) => e.type === 'stage.skipped');
    expect(skipped.map((e) => (e.payload as { actions: string[] }).actions)).toEqual([['Final']]);
    await c.expectVerified(result.runId);
  });

  it('with REQON_CONF_FINAL=yes (a run --env) the conditional stage runs Final', async () => {
    c.api.on('GET /job', { body: { id: 'j1', state: 'done' } });
    const result = await c.start(missionFiles('h5'), { env: { REQON_CONF_FINAL: 'yes' } });
    expect(result.status).toBe('completed');
    expect(c.api.lines().at(-1)).toBe('GET /final');
    expect(c.api.lines()).toHaveLength(6);
    expect(result.actionsRun.at(-1)).toBe('Final');
    await c.expectVerified(result.runId);
  });

  it('variant: /job pending three times → 3 requests, then "Action Poll exhausted 3 retry attempt(s)"', async () => {
    c.api.on('GET /job', PENDING);
    const result = await c.start(missionFiles('h5'));
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error.message).toBe('Action Poll exhausted 3 retry attempt(s)');
    expect(result.actionsRun).toEqual([]);
    expect(c.api.lines()).toEqual(['GET /job', 'GET /job', 'GET /job']);
    expect(await c.store(result.runId, 'jobs')).toEqual({});
    const last = (await c.events(result.runId)).at(-1)!;
    expect(last.type).toBe('run.failed');
    await c.expectVerified(result.runId);
  });

  it('the built CLI: the variant exits 1 with the failure in its JSON result', async () => {
    c.api.on('GET /job', PENDING);
    const cli = await builtCli();
    const run = await runCli(cli, ['run', missionFiles('h5').entry, '--db', c.dbPath, '--source', `Api=${c.api.url}`, '--json', '--quiet'], {
      cwd: c.dir,
      env: { REQON_DATA_DIR: c.dataDir },
    });
    expect(run.code).toBe(1);
    const { result } = parseRunOutput(run.stdout);
    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error.message).toBe('Action Poll exhausted 3 retry attempt(s)');
    expect(c.api.lines()).toEqual(['GET /job', 'GET /job', 'GET /job']);
  });
});
