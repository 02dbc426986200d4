/**
 * GUARANTEES 14: under `trace: full`, `reqon verify` compares what a pure step produced (a `let`'s
 * binding, a `map`'s record — its `step.completed`) with what the mission derives now. An edit of
 * `let doubled = x * 2` to `x * 3` re-derived the step's event and verify said every event
 * matched, though the recorded value differed. The mission as it was verifies whole.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import { fullyVerified } from '../../engine/executor/verify-report.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const mission = (factor: string, tag: string) => `mission Pure {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    get "/n"
    let doubled = response.n * ${factor}
    map response -> Tagged { n: .n, tag: "${tag}" }
    store { id: "k", v: 1 } -> out { key: .id }
  }
  run A
}
`;

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe.each(backends)('%s: an edited pure step', (backend) => {
  it('diverges under verify where its recorded result differs', async () => {
    c = await openConformance({ backend });
    c.api.on('GET /n', { body: { n: 1 } });
    const result = await c.start(c.mission('pure', mission('2', 'orig')));
    expect(result.status).toBe('completed');
    expect(fullyVerified(await verifyRun(c.log, result.runId, { env: c.env }))).toBe(true);
    for (const [edit, step] of [[mission('3', 'orig'), 'A/1'], [mission('2', 'edited'), 'A/2']] as const) {
      const report = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', edit) });
      expect(report.ok).toBe(false);
      expect(report.divergence).toMatchObject({ stepPath: step, cause: 'edit' });
      expect(report.divergence!.change).toMatch(/^the step's result changed: /);
    }
  });

  it('diverges where the edit derives a number the log cannot hold (1e400), and a run that would derive one fails and verifies clean', async () => {
    c = await openConformance({ backend });
    c.api.on('GET /n', { body: { n: 1 } });
    const result = await c.start(c.mission('pure', mission('2', 'orig')));
    expect(result.status).toBe('completed');
    for (const factor of ['parseNumber("1e400")', 'parseNumber("1e300") * parseNumber("1e300")']) {
      const report = await verifyRun(c.log, result.runId, { env: c.env, missionFiles: c.mission('edited', mission(factor, 'orig')) });
      expect(report.divergence, factor).toMatchObject({ stepPath: 'A/1', cause: 'edit' });
    }
    // A run whose own `let` would derive Infinity fails there (R4015: it was recorded as JSON
    // writes it, null, and acted on as null), and its log replays clean to that failure.
    const infinite = await c.start(c.mission('infinite', mission('parseNumber("1e300") * parseNumber("1e300")', 'orig')));
    expect(infinite.status === 'failed' ? infinite.error.code : infinite.status).toBe('R4015');
    expect(fullyVerified(await verifyRun(c.log, infinite.runId, { env: c.env }))).toBe(true);
  });
});
