/**
 * The State tab at a seq inside a concurrent loop shows one iteration's state: its loop variable
 * with the variables its own `let`s bound and the response its own fetch got. It showed one frame
 * per action, so iteration o1's loop variable sat beside iteration o2's `let` and response — a
 * combination no iteration held (helper 64). After the loop, the outer variables are as they were.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { outlineMission } from '../../engine/inspect/mission-outline.js';
import { StateAtHandler } from '../../engine/inspect/state-at.js';
import { openConformance, type Conformance } from '../conformance/harness.js';

const MISSION = `mission Conc {
  source Api { auth: none, base: "http://127.0.0.1:9" }
  action A {
    let detail = "before"
    get "/orders"
    for o in response concurrency 3 {
      get "/orders/{o.id}"
      let detail = concat(o.id, ":", response.note)
      let again = detail
    }
    let after = detail
  }
  run A
}
`;

let c: Conformance | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe('the state at a seq inside a concurrent loop', () => {
  it("is one iteration's: its loop variable, its own lets and its own response", async () => {
    c = await openConformance();
    const ids = ['o1', 'o2', 'o3', 'o4', 'o5', 'o6'];
    c.api.on('GET /orders', { body: ids.map((id) => ({ id })) });
    // Answers that come back out of order, so the iterations interleave in the log.
    for (const [i, id] of ids.entries()) {
      c.api.on(`GET /orders/${id}`, async () => {
        await new Promise((resolve) => setTimeout(resolve, ((i * 37) % 5) * 15));
        return { body: { id, note: `n-${id}` } };
      });
    }
    const run = await c.start(c.mission('conc', MISSION));
    expect(run.status).toBe('completed');
    const record = (await c.log.getRun(run.runId))!;
    const events = await c.events(run.runId);
    const fold = (seq: number) => runFold(new StateAtHandler(outlineMission(record.missionFiles), run.runId), events.slice(0, seq));
    let checked = 0;
    let interleaved = false;
    let lastIteration = '';
    for (const event of events) {
      const iteration = /^A\/2\[(\d+)\]/.exec(event.stepPath)?.[1];
      if (iteration !== undefined && lastIteration !== '' && iteration !== lastIteration) interleaved = true;
      if (iteration !== undefined) lastIteration = iteration;
      if (event.type !== 'step.started' || iteration === undefined || event.stepPath === `A/2[${iteration}]/0`) continue;
      // Inside an iteration, after its fetch: everything shown is that iteration's.
      const state = fold(event.seq);
      const o = state.variables['o'] as { id: string };
      expect(state.response, `seq ${event.seq}`).toEqual({ id: o.id, note: `n-${o.id}` });
      if (event.stepPath.endsWith('/2')) expect(state.variables['detail'], `seq ${event.seq}`).toBe(`${o.id}:n-${o.id}`);
      else expect(state.variables['detail'], `seq ${event.seq}`).toBe('before');
      checked += 1;
    }
    expect(checked).toBe(12);
    expect(interleaved).toBe(true);
    // At every event of an iteration's steps — not only their starts — the state is that
    // iteration's, with the binding its step just made: at a step.completed the state showed the
    // iteration started last, without it (helper 65).
    let atEvents = 0;
    for (const event of events) {
      const match = /^A\/2\[(\d+)\]\/([12])$/.exec(event.stepPath);
      if (match === null || event.type === 'step.started') continue;
      const id = ids[Number(match[1])]!;
      const state = fold(event.seq);
      expect(state.variables['o'], `seq ${event.seq} ${event.type}`).toEqual({ id });
      expect(state.response, `seq ${event.seq} ${event.type}`).toEqual({ id, note: `n-${id}` });
      expect(state.currentStep?.stepPath, `seq ${event.seq} ${event.type}`).toBe(event.stepPath);
      if (event.type === 'step.completed') expect(state.variables['detail'], `seq ${event.seq}`).toBe(`${id}:n-${id}`);
      if (event.type === 'step.completed' && match[2] === '2') expect(state.variables['again'], `seq ${event.seq}`).toBe(`${id}:n-${id}`);
      atEvents += 1;
    }
    expect(atEvents).toBe(12);
    // After the loop: the outer detail, as the run's `let after = detail` read it.
    const end = fold(events.length);
    expect(end.variables['after']).toBe('before');
    expect(end.variables['detail']).toBe('before');
  });
});
