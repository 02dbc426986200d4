/**
 * §H10 — OpenAPI `call`, operation path templates, a validation failure that stops the pipeline.
 *
 * The `Store` source (from pets.yaml, whose server is http://fake.test/api) is overridden to
 * http://127.0.0.1:PORT/api. Check's `validate` fails on pet b's empty name: the run fails with a
 * "Validation failed" error, actionsRun is [List, Detail], Check's stage failed, and NeverRuns is
 * never started (no GET /unused).
 * The reference's `errors` entry "action Check, step ValidateStep" is, in our log, the
 * `action.failed` of Check and the `step.failed` of its Validate step; the "final mission entry"
 * is the run's `run.failed` and the result's `error`.
 *
 * The reference's dry-run variant (`dryRun: true`) is not tested: no dry-run mode exists in our
 * CLI contract (ARCHITECTURE.md "Contracts"), so there is nothing to run it with.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtCli, cliStore, missionFiles, openConformance, parseRunOutput, runCli, type Conformance } from './harness.js';

const REQUESTS = ['GET /api/pets', 'GET /api/pets/a', 'GET /api/pets/b', 'GET /api/pets/b'];
const PETS = { a: { id: 'a', name: 'Rex' }, b: { id: 'b', name: '' } };

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api
    .on('GET /api/pets', { body: { pets: [{ id: 'a', name: 'Rex' }, { id: 'b', name: '' }], next: null } })
    .on('GET /api/pets/a', { body: { id: 'a', name: 'Rex' } })
    .on('GET /api/pets/b', { body: { id: 'b', name: '' } })
    .on('GET /api/unused', { body: {} })
    .on('GET /unused', { body: {} });
});

afterEach(async () => {
  await c.close();
});

describe('H10 Pets', () => {
  it('lists and details pets through the spec, then fails Check validation and never runs NeverRuns', async () => {
    const result = await c.start(missionFiles('h10'), { sources: { Store: `${c.api.url}/api` } });
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error.message).toMatch(/Validation failed/);
    expect(result.actionsRun).toEqual(['List', 'Detail']);
    expect(c.api.lines()).toEqual(REQUESTS);
    expect(await c.store(result.runId, 'pets')).toEqual(PETS);
    expect(await c.store(result.runId, 'details')).toEqual(PETS);

    const events = await c.events(result.runId);
    const failedActions = events.filter((e) => e.type === 'action.failed').map((e) => e.payload as { action: string; error: { message: string } });
    expect(failedActions.map((a) => a.action)).toEqual(['Check']);
    expect(failedActions[0]!.error.message).toMatch(/Validation failed/);
    const failedSteps = events.filter((e) => e.type === 'step.failed').map((e) => (e.payload as { stepType: string }).stepType);
    expect(failedSteps).toEqual(['Validate']);
    const failedStages = events.filter((e) => e.type === 'stage.failed').map((e) => (e.payload as { index: number }).index);
    expect(failedStages).toEqual([2]);
    const started = events.filter((e) => e.type === 'action.started').map((e) => (e.payload as { action: string }).action);
    expect(started).toEqual(['List', 'Detail', 'Check']);
    expect(events.at(-1)!.type).toBe('run.failed');
    await c.expectVerified(result.runId);
  });

  it('the built CLI exits 1 with the validation failure; `reqon store` shows pets and details', async () => {
    const cli = await builtCli();
    const run = await runCli(cli, ['run', missionFiles('h10').entry, '--db', c.dbPath, '--source', `Store=${c.api.url}/api`, '--json', '--quiet'], {
      cwd: c.dir,
      env: { REQON_DATA_DIR: c.dataDir },
    });
    expect(run.code).toBe(1);
    const { runId, result } = parseRunOutput(run.stdout);
    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error.message).toMatch(/Validation failed/);
    expect(result.actionsRun).toEqual(['List', 'Detail']);
    expect(c.api.lines()).toEqual(REQUESTS);
    expect(await cliStore(cli, c, runId, 'pets')).toEqual(PETS);
    expect(await cliStore(cli, c, runId, 'details')).toEqual(PETS);
    await c.expectVerified(runId);
  });
});
