/**
 * A pipeline stage naming an undeclared action is a warning to `reqon check` (E3036: upstream
 * accepts it) — but a run started by hand would have every stage before it take effect and then
 * fail there. Such a run is refused before anything is sent (helper 53: the POST of the stage
 * before went out, then "Action Bb is not declared", exit 1). A stage behind a condition may never
 * run, so its mission still starts, and fails at the stage only if it runs.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MissionInvalidError } from '../../engine/executor/mission-cache.js';
import { forkRun } from '../../engine/executor/fork-run.js';
import { verifyRun } from '../../engine/executor/verify.js';
import { openConformance, type Conformance } from '../conformance/harness.js';

let c: Conformance;
beforeEach(async () => {
  c = await openConformance();
  c.api.on('POST /charge', { status: 201, body: { key: 'k1' } });
});
afterEach(async () => {
  await c.close();
});

const mission = (stages: string) => `mission Charge {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store s: memory("s")
  action Pay { post "/charge" { body: { amount: 5 } }  store response -> s { key: .key } }
  action Book { store { key: "b" } -> s { key: .key } }
  run ${stages}
}
`;

describe('a pipeline stage naming an undeclared action', () => {
  it('with no condition: the run is refused before the stages before it send anything', async () => {
    const refused = await c.start(c.mission('typo', mission('Pay then Bok'))).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(MissionInvalidError);
    const shown = (refused as MissionInvalidError).rendered;
    expect(shown).toMatch(/typo\.vague:6:\d+: error\[E3036\]: Unknown action `Bok`: the run would fail at this stage/);
    expect(shown).toContain('did you mean `Book`?');
    expect(c.api.lines()).toEqual([]);
    expect(await c.log.listRuns({})).toEqual([]);
  });

  it('behind a condition: the run starts, and the stage that does not run costs nothing', async () => {
    const result = await c.start(c.mission('guarded', mission('Pay then Bok if false then Book')));
    expect(result.status).toBe('completed');
    expect(c.api.lines()).toEqual(['POST /charge']);
  });

  it('in an edited mission: a fork, a resume and a verify with it are refused as `reqon run` refuses it, before anything is sent (helper 85)', async () => {
    // Before: `reqon fork --mission` started it (stage Pay's POST went out, then "Action Bok is not
    // declared", exit 1) and `verify --mission` called it the edit's divergence.
    const parked = mission('Pay then Wait then Book').replace('action Book', 'action Wait { pause { duration: "1h" } }\n  action Book');
    const parent = await c.start(c.mission('parent', parked));
    expect(parent.status).toBe('suspended');
    const sent = c.api.lines();
    const edit = c.mission('edit', parked.replace('then Book', 'then Bok'));
    const refusals = [
      forkRun(parent.runId, { atSeq: 1, missionFiles: edit }, c.deps()),
      c.resume(parent.runId, { missionFiles: edit }),
      verifyRun(c.log, parent.runId, { missionFiles: edit, env: c.env }),
    ];
    for (const refused of await Promise.allSettled(refusals)) {
      expect(refused.status).toBe('rejected');
      const error = (refused as PromiseRejectedResult).reason as MissionInvalidError;
      expect(error).toBeInstanceOf(MissionInvalidError);
      expect(error.rendered).toMatch(/edit\.vague:\d+:\d+: error\[E3036\]: Unknown action `Bok`/);
    }
    expect(c.api.lines()).toEqual(sent);
    expect((await c.log.listRuns({})).map((r) => r.runId)).toEqual([parent.runId]);
    expect((await c.log.getRun(parent.runId))!.status).toBe('suspended');
  });
});
