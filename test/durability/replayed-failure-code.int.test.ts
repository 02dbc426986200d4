/**
 * A request's failure replayed from the log (a fork cut after it, a crash between the answer and
 * the step's failure) ends with the code and `retryable` the live failure had — it became
 * `fetch-failed`, not retryable, whatever the log said (probe 106 K4), so the same failure read
 * `http-status` in the parent and `fetch-failed` in its fork, and a script keyed on the code saw
 * another failure after a replay. On both backends.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { forkRun } from '../../engine/executor/fork-run.js';
import type { StoredEvent } from '../../engine/log/events.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const MISSION = `mission Fails {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  action A {
    get "/down" { retry: { maxAttempts: 2, initialDelay: 1 } }
  }
  run A
}
`;

const ended = (events: StoredEvent[]) => events.filter((e) => e.type.endsWith('.failed')).map((e) => [e.type, (e as StoredEvent<'run.failed'>).payload.error.code, (e as StoredEvent<'run.failed'>).payload.error.retryable]);

describe.each(backends)('%s: a replayed request failure keeps its code', (backend) => {
  let h: Conformance;
  beforeEach(async () => {
    h = await openConformance({ backend });
  });
  afterEach(async () => {
    await h.close();
  });

  it.each([
    ['a 500 after every attempt (retried, so retryable)', { status: 500, body: { error: 'down' } }, 'http-status', true],
    ['a 404 (never retried)', { status: 404, body: { error: 'no' } }, 'http-status', false],
    ['a 200 whose body is not JSON', { status: 200, raw: '<html>maintenance</html>', headers: { 'content-type': 'text/html' } }, 'invalid-body', false],
  ] as const)('%s: a fork cut before the step failed ends with the parent\'s code', async (_name, answer, code, retryable) => {
    h.api.on('GET /down', answer);
    const parent = await h.start(h.mission('fails', MISSION));
    expect(parent.status).toBe('failed');
    const events = await h.events(parent.runId);
    expect(ended(events).at(-1)).toEqual(['run.failed', code, retryable]);
    // Cut at the last answer: the fork replays it and fails the step itself.
    const answered = events.filter((e) => e.type === 'http.response').at(-1)!;
    const fork = await forkRun(parent.runId, { atSeq: answered.seq }, h.deps());
    expect(fork.status === 'failed' && [fork.error.code, fork.error.retryable]).toEqual([code, retryable]);
    const forked = await h.events(fork.runId);
    expect(ended(forked).filter(([type]) => type !== 'run.failed')).toEqual(ended(events).filter(([type]) => type !== 'run.failed'));
  });
});
