/**
 * Failures a run goes on after, and loop variables, as the inspector folds them from real logs:
 * missions run by the executor against a loopback API that answers every POST with 422, and a
 * `validate` that fails for one record inside a loop. The run completes (its status is the log's),
 * the run summary counts the tolerated failures and names the first, the validation message
 * names the value and the record, and State shows the loop's item at every seq inside the loop.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { outlineMission } from '../../engine/inspect/mission-outline.js';
import { RunSummaryHandler, statusLabel } from '../../engine/inspect/run-summary.js';
import { StateAtHandler } from '../../engine/inspect/state-at.js';
import { reportRun } from '../../engine/cli/run-output.js';
import { openConformance, type Conformance } from '../conformance/harness.js';

const ITEMS = [
  { id: 'a', qty: 2 },
  { id: 'b', qty: -1 },
  { id: 'c', qty: 3 },
];

const SHIP = `mission Shipments {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store sent: memory("sent")
  action Ship {
    get "/items"
    for item in response {
      post "/shipments" { body: { sku: item.id, qty: item.qty } }
      store { id: item.id, status: response.status } -> sent { key: .id }
    }
  }
  run Ship
}
`;

const CHECK = `mission Stock {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store ok: sql("ok_items")
  store seen: memory("seen")
  action Load {
    get "/items"
    store response -> ok { key: .id }
  }
  action Check {
    for line in ok {
      validate line {
        assume .qty > 0
      }
      store line -> seen { key: .id }
    }
  }
  run Load then Check
}
`;

let h: Conformance;

beforeEach(async () => {
  h = await openConformance();
  h.api.on('GET /items', { body: ITEMS });
  h.api.on('POST /shipments', { status: 422, body: { error: 'unprocessable', detail: 'sku unknown' } });
});

afterEach(async () => {
  await h.close();
});

async function run(name: string, text: string) {
  const entry = `${h.dir}/${name}.vague`;
  const files = { entry, files: [{ path: entry, text }] };
  const result = await h.start(files);
  return { result, events: await h.events(result.runId), outline: outlineMission(files), entry };
}

describe('tolerated failures in the run summary', () => {
  it('counts every POST that got a 422 in a completed run and names the first', async () => {
    const { result, events } = await run('ship', SHIP);
    expect(result.status).toBe('completed');
    const summary = runFold(new RunSummaryHandler(), events);
    expect(summary.status).toBe('completed');
    expect(summary.failures).toBe(3);
    expect(statusLabel(summary)).toBe('completed with 3 failures');
    const firstFailed = events.find((e) => e.type === 'step.failed')!;
    expect(summary.firstFailure).toEqual({ seq: firstFailed.seq, stepPath: 'Ship/1[0]/0', code: 'http-status', message: expect.stringContaining('422'), at: expect.stringMatching(/ship\.vague:7:7$/) });
  });

  it('names the value and the record a validation failed on, and counts it once', async () => {
    const { result, events } = await run('check', CHECK);
    expect(result.status).toBe('completed');
    const summary = runFold(new RunSummaryHandler(), events);
    expect(summary.failures).toBe(1);
    expect(statusLabel(summary)).toBe('completed with 1 failure');
    expect(summary.firstFailure!.stepPath).toBe('Check/0[1]/0');
    expect(summary.firstFailure!.message).toMatch(/^Validation failed: `\.qty > 0` \(line 12\) is false: `\.qty` is number \(-1\) for the record with id "b": object/);
  });

  it('counts the same failures from the step.failed events alone (what `reqon runs` reads of a completed run)', async () => {
    for (const [name, text, expected] of [['ship', SHIP, 3], ['check', CHECK, 1]] as const) {
      const { result, events } = await run(name, text);
      const failedOnly = await h.log.read(result.runId, { types: ['step.failed'] });
      expect(failedOnly).toEqual(events.filter((e) => e.type === 'step.failed'));
      expect(runFold(new RunSummaryHandler(result.runId), failedOnly).failures).toBe(expected);
      expect(runFold(new RunSummaryHandler(), events).failures).toBe(expected);
    }
  });

  it('a resume of the finished run reports its failures as the run did: "completed with 3 failures"', async () => {
    const { result } = await run('ship', SHIP);
    const again = await h.resume(result.runId, {});
    expect(again.status).toBe('completed');
    // Where each failure began (the POST), as `reqon runs` counts them; the run named its iteration.
    expect(again.tolerated).toEqual(
      [0, 1, 2].map((i) => ({ stepPath: `Ship/1[${i}]/0`, code: 'http-status', message: expect.stringContaining('failed with 422') })),
    );
    const out: string[] = [];
    const err: string[] = [];
    expect(reportRun(again, false, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) })).toBe(0);
    expect(out.join('')).toBe('completed with 3 failures (tolerated, listed above): 1 action(s) run (Ship)\n');
    expect(err.join('')).toContain('tolerated failure at Ship/1[2]/0: POST');
  });

  it('a resume of a failed run lists the failures it went on after, not the one that failed it', async () => {
    h.api.on('POST /done', { status: 409, body: { error: 'conflict' } });
    const { result } = await run('ship-then-fail', SHIP.replace('    }\n  }\n  run Ship', '    }\n    post "/done" { body: { all: true } }\n  }\n  run Ship'));
    expect(result.status).toBe('failed');
    expect(result.tolerated).toHaveLength(3);
    const again = await h.resume(result.runId, {});
    expect(again.status).toBe('failed');
    expect(again.status === 'failed' && again.error.message).toMatch(/POST .*\/done failed with 409/);
    expect(again.tolerated.map((t) => t.stepPath)).toEqual(['Ship/1[0]/0', 'Ship/1[1]/0', 'Ship/1[2]/0']);
  });

  it('a run without failures reads as its status alone', () => {
    expect(statusLabel({ status: 'completed', failures: 0 })).toBe('completed');
    expect(statusLabel({ status: 'failed', failures: 2 })).toBe('failed');
  });
});

describe('loop variables in State', () => {
  it('shows the item of the iteration being run, from the response the loop iterates', async () => {
    const { events, outline, entry } = await run('ship', SHIP);
    const at = (seq: number) => runFold(new StateAtHandler({ ...outline, entryFile: entry }), events.filter((e) => e.seq <= seq));
    for (const [index, item] of ITEMS.entries()) {
      const post = events.find((e) => e.type === 'http.request' && e.stepPath === `Ship/1[${index}]/0`)!;
      expect(at(post.seq).variables).toEqual({ item });
      const failed = events.find((e) => e.type === 'step.failed' && e.stepPath === `Ship/1[${index}]/0`)!;
      expect(at(failed.seq).variables).toEqual({ item });
    }
    // Before the loop and after it, there is no loop variable.
    const loopStart = events.find((e) => e.type === 'step.started' && e.stepPath === 'Ship/1')!;
    expect(at(loopStart.seq - 1).variables).toEqual({});
    expect(at(events.at(-1)!.seq).variables).toEqual({});
  });

  it('takes the item from the store read a loop over a sql store recorded', async () => {
    const { events, outline, entry } = await run('check', CHECK);
    const at = (seq: number) => runFold(new StateAtHandler({ ...outline, entryFile: entry }), events.filter((e) => e.seq <= seq));
    const failed = events.find((e) => e.type === 'step.failed' && e.stepPath === 'Check/0[1]/0')!;
    expect(at(failed.seq).variables).toEqual({ line: { id: 'b', qty: -1 } });
    const stored = events.find((e) => e.type === 'store.write' && e.stepPath === 'Check/0[2]/1')!;
    expect(at(stored.seq).variables).toEqual({ line: { id: 'c', qty: 3 } });
  });
});
