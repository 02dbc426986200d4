/**
 * `reqon verify --mission` of a failed run compares the failure: an edit that fails the run at
 * the same step for another reason (`abort` with another message), or with another kind of step
 * (a failing `validate` in place of the `abort`), is a divergence. Both were taken by path and
 * type and reported as a match (helper 61). An edit that only moves the failing step (a comment
 * line above it) still verifies: where it failed is not what failed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import type { StoredEvent } from '../../engine/log/events.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const MISSION = (failing: string, above = '') => `mission M {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  store out: memory("out")
  action A {
    store { id: "a", n: 1 } -> out { key: .id }
${above}    ${failing}
  }
  run A
}
`;

describe.each(backends)('%s: verify of a failed run against an edited mission', (backend) => {
  let c: Conformance;
  beforeEach(async () => {
    c = await openConformance({ backend });
  });
  afterEach(async () => {
    await c.close();
  });

  const verifyWith = async (runId: string, text: string) => verifyRun(c.log, runId, { env: c.env, missionFiles: c.mission('edited', text) });

  it('names another failure of the same step, or a failing step of another kind', async () => {
    const run = await c.start(c.mission('m', MISSION('abort "original reason"')));
    expect(run.status).toBe('failed');
    await c.expectVerified(run.runId);

    const reason = await verifyWith(run.runId, MISSION('abort "another reason"'));
    expect(reason.ok).toBe(false);
    expect(reason.divergence?.change).toBe('the step failed otherwise: Flow failing (aborted: original reason) became Flow failing (aborted: another reason)');

    const kind = await verifyWith(run.runId, MISSION('validate { n: 1 } { assume .n == 2 }'));
    expect(kind.ok).toBe(false);
    expect(kind.divergence?.change).toMatch(/^the step failed otherwise: Flow failing \(aborted: original reason\) became Validate failing \(validation-failed: /);

    // Moved two lines down by comments: the same failure, verified.
    const moved = await verifyWith(run.runId, MISSION('abort "original reason"', '    // why this aborts\n    // (a second line)\n'));
    expect(moved.divergence).toBeNull();
    expect(moved.ok).toBe(true);
  });

  it('a concurrent loop whose iterations fail otherwise, the first to fail live not the first replayed: the untouched run verifies', async () => {
    // Helper 63: live, the slow answer's iteration failed last; replayed, every answer comes at
    // once and another iteration's failure reached the loop first. What the loop recorded is the
    // first in time, so only each iteration's own failure, at its own path, is compared.
    c.api.on('GET /items/1', async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { body: { id: 1 } };
    });
    c.api.on('GET /items/2', { body: { id: 2 } });
    const loop = (reason: string) => `mission M {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  action A {
    for i in [1, 2] concurrency 2 onError abort {
      get "/items/{i}"
      abort ${reason}
    }
  }
  run A
}
`;
    const run = await c.start(c.mission('loop', loop('concat("item ", response.id)')));
    expect(run.status).toBe('failed');
    await c.expectVerified(run.runId);
    // An iteration's own failure edited is still named.
    const edited = await verifyWith(run.runId, loop('concat("thing ", response.id)'));
    expect(edited.ok).toBe(false);
    expect(edited.divergence?.change).toMatch(/^the step failed otherwise: Flow failing \(aborted: item \d\) became Flow failing \(aborted: thing \d\)$/);
    // Helper 65: so is the failure of an iteration that fails after the one that ends the
    // replayed loop (item 2 failed first live, item 1 first replayed): its divergence was
    // dropped with the rest of the loop's, and verify said the log matched.
    const second = await verifyWith(run.runId, loop('(response.id == 2 ? "thing 2" : concat("item ", response.id))'));
    expect(second.ok).toBe(false);
    expect(second.divergence?.stepPath).toBe('A/0[1]/1');
    expect(second.divergence?.change).toBe('the step failed otherwise: Flow failing (aborted: item 2) became Flow failing (aborted: thing 2)');
    // And the failure that iteration recorded, edited in the log, is reported.
    const events = await c.log.read(run.runId);
    const tampered = events.map((e) =>
      e.type === 'step.failed' && e.stepPath === 'A/0[1]/1' ? { ...e, payload: { ...e.payload, error: { ...(e.payload as { error: object }).error, message: 'item 2 is fine' } } } : e,
    ) as StoredEvent[];
    const report = await verifyRun(c.log, run.runId, { env: c.env, events: tampered });
    expect(report.ok).toBe(false);
    expect(report.divergence?.stepPath).toBe('A/0[1]/1');
  });

  it('an abort reason is compared exactly: its words, its white space, a line number in it', async () => {
    // Helper 65: every "line N" and all white space were taken out of the message compared.
    const run = await c.start(c.mission('m', MISSION('abort "order too big, see line 5"')));
    expect(run.status).toBe('failed');
    for (const reason of ['"order too big, see line 9"', '"ordertoobig, see line 5"', '"order too  big, see line 5"']) {
      const report = await verifyWith(run.runId, MISSION(`abort ${reason}`));
      expect(report.ok, reason).toBe(false);
      expect(report.divergence?.change, reason).toMatch(/^the step failed otherwise: Flow failing \(aborted: order too big, see line 5\) became Flow failing/);
    }
  });

  it('a failure passed up (the run\'s, an action\'s, a stage\'s) that no step failed with is a damaged log', async () => {
    // Helper 65: run.failed edited in the log was what `reqon show` printed, and verify passed it.
    const run = await c.start(c.mission('m', MISSION('abort "order too big"')));
    expect(run.status).toBe('failed');
    const events = await c.log.read(run.runId);
    for (const type of ['run.failed', 'action.failed', 'stage.failed']) {
      const at = events.find((e) => e.type === type)!;
      const tampered = events.map((e) => (e === at ? { ...e, payload: { ...e.payload, error: { code: 'aborted', message: 'all fine' } } } : e)) as StoredEvent[];
      const report = await verifyRun(c.log, run.runId, { env: c.env, events: tampered });
      expect(report.ok, type).toBe(false);
      expect(report.divergence?.seq, type).toBe(at.seq);
      expect(report.divergence?.explanation, type).toContain(`its ${type} at seq ${at.seq}`);
      expect(report.divergence?.explanation, type).toContain('says it failed with "aborted: all fine", which no step of the run failed with (changed outside the engine)');
    }
    // Untouched, the same events verify.
    expect((await verifyRun(c.log, run.runId, { env: c.env, events })).ok).toBe(true);
  });

  it('a failed validate reformatted (white space only) verifies; its condition edited is named', async () => {
    const run = await c.start(c.mission('m', MISSION('validate { n: 1 } { assume .n == 2 }')));
    expect(run.status).toBe('failed');
    expect((await verifyWith(run.runId, MISSION('validate { n: 1 } { assume .n==2 }'))).divergence).toBeNull();
  });

  it('names a failed validate whose message changed with an edited condition', async () => {
    const run = await c.start(c.mission('m', MISSION('validate { n: 1 } { assume .n == 2 }')));
    expect(run.status).toBe('failed');
    await c.expectVerified(run.runId);
    const edited = await verifyWith(run.runId, MISSION('validate { n: 1 } { assume .n == 3 }'));
    expect(edited.ok).toBe(false);
    expect(edited.divergence?.change).toMatch(/^the step failed otherwise: Validate failing \(validation-failed: .*\.n == 2.*\) became Validate failing \(validation-failed: .*\.n == 3/);
  });

  it('a parallel stage whose branches both fail verifies untouched, and against the mission moved by a comment', async () => {
    // Helper 67: the stage's failure names every failed branch with its place; replayed, another
    // iteration of a branch's concurrent loop fails first, and against a moved mission every place
    // differs: verify called the untouched log damaged.
    c.api.on('GET /items/1', async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return { body: { id: 1 } };
    });
    c.api.on('GET /items/2', { body: { id: 2 } });
    const mission = (above: string) => `mission P {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  action A {
${above}    for i in [1, 2] concurrency 2 onError abort {
      get "/items/{i}"
      abort concat("not ok ", response.id)
    }
  }
  action B {
    abort "B fails too"
  }
  run [A, B]
}
`;
    const run = await c.start(c.mission('parallel', mission('')));
    expect(run.status).toBe('failed');
    expect(run.status === 'failed' && run.error.code).toBe('parallel-failed');
    await c.expectVerified(run.runId);
    const moved = await verifyWith(run.runId, mission('    // a comment moves every line below\n'));
    expect(moved.divergence).toBeNull();
    // Its failure edited to something no branch failed with is still a damaged log.
    const events = await c.log.read(run.runId);
    const at = events.find((e) => e.type === 'stage.failed')!;
    const tampered = events.map((e) => (e === at ? { ...e, payload: { ...e.payload, error: { code: 'parallel-failed', message: 'Parallel stage failed: A: all fine' } } } : e)) as StoredEvent[];
    const report = await verifyRun(c.log, run.runId, { env: c.env, events: tampered });
    expect(report.divergence?.seq).toBe(at.seq);
    // Helper 68: one branch's failure kept, another's edited, or a real failure inside an invented
    // message — holding one branch's failure was enough to verify.
    const recorded = (at.payload as { error: { message: string } }).error.message;
    for (const message of [recorded.replace('B fails too', 'all fine'), `all fine, though "not ok 2" once`, `${recorded}; C: invented`]) {
      const edited = events.map((e) => (e === at ? { ...e, payload: { ...e.payload, error: { code: 'parallel-failed', message } } } : e)) as StoredEvent[];
      const verdict = await verifyRun(c.log, run.runId, { env: c.env, events: edited });
      expect(verdict.ok, message).toBe(false);
      expect(verdict.divergence?.seq, message).toBe(at.seq);
    }
  });

  it("a run's failure edited to an iteration's failure its loop tolerated is a damaged log", async () => {
    // Helper 67: every step failure met was a failure the run could have passed up, tolerated ones too.
    c.api.on('GET /items/2', { status: 500, body: { error: 'boom 2' } });
    c.api.on('GET /items/1', { body: { id: 1 } });
    const run = await c.start(
      c.mission(
        'tolerated',
        `mission T {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  action A {
    for i in [1, 2] onError continue {
      get "/items/{i}" { retry: { maxAttempts: 1 } }
    }
    abort "finished with failures"
  }
  run A
}
`,
      ),
    );
    expect(run.status).toBe('failed');
    await c.expectVerified(run.runId);
    const events = await c.log.read(run.runId);
    const tolerated = events.find((e) => e.type === 'step.failed' && e.stepPath.startsWith('A/0['))!;
    const toleratedError = (tolerated.payload as { error: unknown }).error;
    const tampered = events.map((e) => (e.type === 'run.failed' || e.type === 'action.failed' ? { ...e, payload: { ...e.payload, error: toleratedError } } : e)) as StoredEvent[];
    const report = await verifyRun(c.log, run.runId, { env: c.env, events: tampered });
    expect(report.ok).toBe(false);
    expect(report.divergence?.explanation).toContain('which no step of the run failed with');
  });
});
