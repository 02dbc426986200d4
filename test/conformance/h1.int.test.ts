/**
 * §H1 — lexical basics, let, for/where, map, store partial, match expression — through the real
 * engine against a real HTTP server: one GET, no Authorization, people 1 and 3 (2 filtered by
 * `where`) with every mapped field, actionsRun ["Load"], and a replay that verifies.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtCli, cliStore, missionFiles, openConformance, parseRunOutput, runCli, type Conformance } from './harness.js';

const PEOPLE = [
  { id: 1, first: 'Ada', last: 'L', age: 36 },
  { id: 2, first: 'Tim', last: 'B', age: 12 },
  { id: 3, first: 'Old', last: 'Timer', age: 70 },
];

const EXPECTED = {
  '1': { id: 1, label: 'Ada L', quoted: 'say "hi"', left: 64, quarter: 9, half: 18, working: true, kind: 'adult', grade: 'l-team', _partial: true },
  '3': { id: 3, label: 'Old Timer', quoted: 'say "hi"', left: 30, quarter: 17.5, half: 35, working: false, kind: 'senior', grade: 'other', _partial: true },
};

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /v1/people', { body: PEOPLE });
});

afterEach(async () => {
  await c.close();
});

describe('H1 Basics', () => {
  it('runs Load once: one GET without Authorization, people 1 and 3 mapped, verified', async () => {
    // The base keeps its `/v1/` path and drops the trailing slash, so the override carries `/v1/` too.
    const result = await c.start(missionFiles('h1'), { sources: { Api: `${c.api.url}/v1/` } });
    expect(result.status).toBe('completed');
    expect(result.actionsRun).toEqual(['Load']);
    expect(result.tolerated).toEqual([]);

    expect(c.api.lines()).toEqual(['GET /v1/people']);
    expect(c.api.requests[0]!.headers.authorization).toBeUndefined();
    expect(c.api.requests[0]!.headers.accept).toBe('application/json');

    const people = await c.store(result.runId, 'people');
    expect(people).toEqual(EXPECTED);
    expect(people).not.toHaveProperty('2');
    await c.expectVerified(result.runId);
  });

  it('the built CLI runs it end to end: `reqon run --json` then `reqon store --json`', async () => {
    const cli = await builtCli();
    const run = await runCli(cli, ['run', missionFiles('h1').entry, '--db', c.dbPath, '--source', `Api=${c.api.url}/v1/`, '--json', '--quiet'], {
      cwd: c.dir,
      env: { REQON_DATA_DIR: c.dataDir },
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const { runId, result } = parseRunOutput(run.stdout);
    expect(result.runId).toBe(runId);
    expect(result.status).toBe('completed');
    expect(result.actionsRun).toEqual(['Load']);
    expect(c.api.lines()).toEqual(['GET /v1/people']);
    expect(await cliStore(cli, c, runId, 'people')).toEqual(EXPECTED);
    await c.expectVerified(runId);
  });
});
