/**
 * §H6 — transforms (three forms), apply with and without `as`, match-expression guards, spread,
 * `??`, `in`, subscripts, `is`, `any of … where` and the built-ins, through the real engine.
 * p3 matches schema Bank but fails the guard (length 2), so the wildcard variant applies; a null
 * score makes every ordering guard false (V2).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtCli, cliStore, missionFiles, openConformance, parseRunOutput, runCli, type Conformance } from './harness.js';

const PAYMENTS = [
  { id: 'p1', brand: 'visa', last4: '4242', score: 820, tags: ['vip'] },
  { id: 'p2', iban: 'GB00BANK', score: 510 },
  { id: 'p3', iban: 'X1', score: null, tags: ['a', 'b'] },
];
const STATS = { n: 3, lo: 1, hi: 9, fl: 2, ce: 3, ab: 4, pn: 7.5, fu: '1970-01-01T00:00:00.000Z', r: [2, 3, 4] };
const OUT = {
  p1: { kind: 'card', ref: 'visa-4242', id: 'p1', tier: 'gold', tags: ['vip'], first: 'vip', vip: true, scored: true, total: 821, tag: '#p1/3', bank: 'p2', stats: STATS },
  p2: { kind: 'bank', ref: 'GB00BANK', id: 'p2', tier: 'silver', tags: ['none'], first: 'none', vip: false, scored: true, total: 511, tag: '#p2/3', bank: 'p2', stats: STATS },
  p3: { kind: 'unknown', ref: 'n/a', id: 'p3', tier: 'none', tags: ['a', 'b'], first: 'a', vip: false, scored: false, total: 1, tag: '#p3/3', bank: 'p2', stats: STATS },
};

let c: Conformance;

beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /payments', { body: PAYMENTS });
});

afterEach(async () => {
  await c.close();
});

describe('H6 Transforms', () => {
  it('stores p1, p2, p3 exactly as §H6 lists them after one GET', async () => {
    const result = await c.start(missionFiles('h6'));
    expect(result.status).toBe('completed');
    expect(result.actionsRun).toEqual(['Run']);
    expect(result.tolerated).toEqual([]);
    expect(c.api.lines()).toEqual(['GET /payments']);
    expect(await c.store(result.runId, 'out')).toEqual(OUT);
    await c.expectVerified(result.runId);
  });

  it('the built CLI runs it and `reqon store out --json` shows the same records', async () => {
    const cli = await builtCli();
    const run = await runCli(cli, ['run', missionFiles('h6').entry, '--db', c.dbPath, '--source', `Api=${c.api.url}`, '--json', '--quiet'], {
      cwd: c.dir,
      env: { REQON_DATA_DIR: c.dataDir },
    });
    expect(run.code).toBe(0);
    const { runId } = parseRunOutput(run.stdout);
    expect(c.api.lines()).toEqual(['GET /payments']);
    expect(await cliStore(cli, c, runId, 'out')).toEqual(OUT);
  });
});
