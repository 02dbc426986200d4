/**
 * State at a failed step's seq carries the failure (engine/inspect/state-at.ts): its message, the
 * request that failed it and the API's answer — also at the step.failed of an enclosing step the
 * failure travelled up through, and for a transport error; a `validate` failure has no request;
 * the next event's state has no failure; a huge answer body is sliced like any response; a fold
 * cache restored from a snapshot gives the same.
 */
import { describe, expect, it } from 'vitest';
import { RunFoldCache } from '../../engine/inspect/fold-cache.js';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { StateAtHandler } from '../../engine/inspect/state-at.js';
import { sliceState, SLICE_LIMIT } from '../../engine/inspect/state-slice.js';
import { EventBuilder } from './event-builder.js';

const BIG = Array.from({ length: 3000 }, (_, i) => ({ field: `f${i}`, problem: 'invalid' }));

function failingRun() {
  const log = new EventBuilder('run-f');
  log.add('run.started', '', { mission: 'Ship', missionHash: 'h' });
  log.add('action.started', 'Ship', { action: 'Ship', attempt: 1 });
  log.add('step.started', 'Ship/0', { stepType: 'For', line: 4 });
  log.add('loop.iteration', 'Ship/0[0]', { index: 0, key: '0' });
  log.add('step.started', 'Ship/0[0]/0', { stepType: 'Fetch', line: 5 });
  log.add('http.request', 'Ship/0[0]/0', { effectId: 'e1', attempt: 1, request: { method: 'POST', url: 'http://127.0.0.1:9/shipments', headers: { authorization: '[redacted]' }, body: { sku: 'b', qty: -1 } } });
  log.add('http.response', 'Ship/0[0]/0', { effectId: 'e1', attempt: 1, response: { status: 422, headers: {}, body: { error: 'unprocessable', detail: 'unknown sku' } }, durationMs: 3, verdict: 'fail' });
  const inner = log.add('step.failed', 'Ship/0[0]/0', { stepType: 'Fetch', error: { code: 'http-status', message: 'POST /shipments failed with 422' } });
  const outer = log.add('step.failed', 'Ship/0', { stepType: 'For', error: { code: 'http-status', message: 'POST /shipments failed with 422' } });
  log.add('step.started', 'Ship/1', { stepType: 'Validate', line: 9 });
  const validate = log.add('step.failed', 'Ship/1', { stepType: 'Validate', error: { code: 'validation', message: 'Validation failed: `.qty > 0`' } });
  log.add('step.started', 'Ship/2', { stepType: 'Fetch', line: 10 });
  log.add('http.request', 'Ship/2', { effectId: 'e2', attempt: 1, request: { method: 'GET', url: 'http://127.0.0.1:9/big', headers: {} } });
  log.add('http.error', 'Ship/2', { effectId: 'e2', attempt: 1, error: { code: 'ECONNREFUSED', message: 'connection refused' }, durationMs: 1, verdict: 'fail' });
  const transport = log.add('step.failed', 'Ship/2', { stepType: 'Fetch', error: { code: 'transport', message: 'GET /big: connection refused' } });
  log.add('step.started', 'Ship/3', { stepType: 'Fetch', line: 11 });
  log.add('http.request', 'Ship/3', { effectId: 'e3', attempt: 1, request: { method: 'PUT', url: 'http://127.0.0.1:9/bulk', headers: {}, body: BIG } });
  log.add('http.response', 'Ship/3', { effectId: 'e3', attempt: 1, response: { status: 400, headers: {}, body: { errors: BIG } }, durationMs: 5, verdict: 'fail' });
  const big = log.add('step.failed', 'Ship/3', { stepType: 'Fetch', error: { code: 'http-status', message: 'PUT /bulk failed with 400' } });
  return { log, inner: inner.seq, outer: outer.seq, validate: validate.seq, transport: transport.seq, big: big.seq };
}

const at = (events: EventBuilder['events'], seq: number) => runFold(new StateAtHandler({}, 'run-f'), events.slice(0, seq));

describe('state at a failed step', () => {
  const run = failingRun();
  const events = run.log.events;

  it('holds the message, the request and the answer at the failed step and at the step it travelled up to', () => {
    const expected = {
      code: 'http-status',
      message: 'POST /shipments failed with 422',
      request: { method: 'POST', url: 'http://127.0.0.1:9/shipments', body: { sku: 'b', qty: -1 } },
      answer: { status: 422, body: { error: 'unprocessable', detail: 'unknown sku' } },
    };
    expect(at(events, run.inner).failure).toEqual({ stepPath: 'Ship/0[0]/0', stepType: 'Fetch', ...expected });
    expect(at(events, run.outer).failure).toEqual({ stepPath: 'Ship/0', stepType: 'For', ...expected });
    // Not before it, and not once the next event is folded.
    expect(at(events, run.inner - 1).failure).toBeUndefined();
    expect(at(events, run.outer + 1).failure).toBeUndefined();
  });

  it('a validate failure has no request (the earlier POST of a sibling step is not its cause); a transport error is its answer', () => {
    expect(at(events, run.validate).failure).toEqual({ stepPath: 'Ship/1', stepType: 'Validate', code: 'validation', message: 'Validation failed: `.qty > 0`', request: null, answer: null });
    expect(at(events, run.transport).failure).toMatchObject({ request: { method: 'GET', url: 'http://127.0.0.1:9/big' }, answer: { error: { code: 'ECONNREFUSED' } } });
  });

  it('a huge request and answer body is sliced like any response', () => {
    const sliced = sliceState(at(events, run.big));
    const failure = sliced.failure!;
    expect((failure.request!.body as unknown[]).length).toBe(SLICE_LIMIT);
    expect(((failure.answer as { body: { errors: unknown[] } }).body.errors).length).toBe(SLICE_LIMIT);
    expect(sliced.slices).toEqual(expect.arrayContaining([
      { where: 'failure', path: '$.request.body', from: 0, count: SLICE_LIMIT, total: BIG.length },
      { where: 'failure', path: '$.answer.body.errors', from: 0, count: SLICE_LIMIT, total: BIG.length },
    ]));
  });

  it('the fold cache, restoring snapshots, answers the same at every seq', () => {
    const cache = new RunFoldCache('run-f', {}, 3);
    cache.append(events);
    for (let seq = 0; seq <= events.length; seq += 1) expect(cache.stateAt(seq), `seq ${seq}`).toEqual(at(events, seq));
  });
});
