/**
 * On a resume, loop iterations that the log shows finished are taken as recorded instead of being
 * walked again (Journal.skipFinishedIteration): the run ends exactly as a full re-walk ends it —
 * memory stores rebuilt from the skipped iterations' writes, tolerated failures reported, verify
 * clean — and nothing is skipped where the log cannot vouch for it (a failed iteration, the last
 * one, a run under --crash-at, an edited mission) or where a loop sends requests (their replayed
 * attempts must reach the circuit breaker). On every log backend (test/support/temp-log.ts).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Journal } from '../../engine/journal/journal.js';
import { NondeterminismError } from '../../engine/journal/nondeterminism-error.js';
import type { MissionFiles } from '../../engine/log/log.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const ITEMS = Array.from({ length: 12 }, (_, i) => ({ id: `i${i}`, n: i }));
/** Its `validate` fails; the loop tolerates it (onError continue, the default). */
const FAILING = 5;

const MISSION = `mission Iterations {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store seen: memory("seen")
  store out: sql("iterations_out")
  action Load {
    get "/items"
    for item in response {
      let doubled = item.n * 2
      store { id: item.id, d: doubled } -> seen { key: .id }
      validate item { assume .n != ${FAILING} }
    }
    pause { resumeOn: webhook "/iterations/go" }
    for r in seen {
      store { id: r.id, d: r.d } -> out { key: .id }
    }
  }
  run Load
}
`;

let h: Conformance;

function files(text = MISSION): MissionFiles {
  const entry = `${h.dir}/iterations.vague`;
  return { entry, files: [{ path: entry, text }] };
}

/** Starts the mission to its pause, then resumes it, counting the iterations taken as recorded. */
async function runAndResume(resumeDeps: Parameters<Conformance['resume']>[2] = {}) {
  const first = await h.start(files());
  expect(first.status).toBe('suspended');
  const skip = vi.spyOn(Journal.prototype, 'skipFinishedIteration');
  const resumed = await h.resume(first.runId, { payload: { go: true }, by: 'api' }, resumeDeps);
  const skipped = skip.mock.results.filter((r) => r.type === 'return' && r.value !== undefined).length;
  skip.mockRestore();
  return { first, resumed, skipped };
}

const expectedOut = Object.fromEntries(ITEMS.map((item) => [item.id, { id: item.id, d: item.n * 2 }]));

describe.each(backends)('%s: finished loop iterations on resume', (backend) => {
  beforeEach(async () => {
    h = await openConformance({ backend });
    h.api.on('GET /items', { body: ITEMS });
    h.api.on('POST /sink', { status: 201, body: { ok: true } });
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    await h.close();
  });

  it('are taken as recorded, and the run ends as a full re-walk would end it', async () => {
    const { first, resumed, skipped } = await runAndResume();
    expect(resumed.status, resumed.status === 'failed' ? resumed.error.message : '').toBe('completed');
    // All but the failed iteration (walked: its failure is reported again) and the last one
    // (nothing after it in the log vouches that it finished).
    expect(skipped).toBe(ITEMS.length - 2);
    expect(resumed.tolerated.map((t) => t.stepPath)).toEqual([`Load/1[${FAILING}]`]);
    // The memory store the second loop reads was rebuilt from the skipped iterations' writes.
    const rows = h.log.readTable('sql', 'iterations_out');
    expect(Object.fromEntries((await rows).map((r) => [r.key, r.record]))).toEqual(expectedOut);
    await h.expectVerified(first.runId);
  });

  it('are walked when the loop sets sync_state checkpoints, so every one of them advances at the end of the action', async () => {
    const withCheckpoints = MISSION.replace(
      `      validate item { assume .n != ${FAILING} }\n`,
      `      store { "at": 1704067200000 + item.n } -> sync_state { key: "acct-" + item.id }\n`,
    );
    expect(withCheckpoints).toContain('sync_state');
    const first = await h.start(files(withCheckpoints));
    expect(first.status).toBe('suspended');
    const resumed = await h.resume(first.runId, { payload: { go: true }, by: 'api' }, {});
    expect(resumed.status, resumed.status === 'failed' ? resumed.error.message : '').toBe('completed');
    const advanced = (await h.log.read(first.runId)).filter((e) => e.type === 'checkpoint.advanced').map((e) => (e.payload as { key: string }).key);
    expect(advanced).toEqual(ITEMS.map((item) => `acct-${item.id}`));
    await h.expectVerified(first.runId);
  });

  it('are walked when the loop sends requests (their attempts must reach the circuit breaker), sending none again', async () => {
    const withPost = MISSION.replace(`      validate item { assume .n != ${FAILING} }\n`, `      validate item { assume .n != ${FAILING} }\n      post "/sink" { body: { id: item.id, d: doubled } }\n`);
    expect(withPost).toContain('post "/sink"');
    const first = await h.start(files(withPost));
    expect(first.status).toBe('suspended');
    const skip = vi.spyOn(Journal.prototype, 'skipFinishedIteration');
    const resumed = await h.resume(first.runId, { payload: { go: true }, by: 'api' }, {});
    const skipped = skip.mock.results.filter((r) => r.type === 'return' && r.value !== undefined).length;
    skip.mockRestore();
    expect(skipped).toBe(0);
    expect(resumed.status).toBe('completed');
    // Every POST was sent once, before the pause; none on the resume.
    expect(h.api.lines().filter((l) => l === 'POST /sink')).toHaveLength(ITEMS.length - 1);
    expect([...h.api.applied.values()].every((n) => n === 1)).toBe(true);
    await h.expectVerified(first.runId);
  });

  it('are walked under --crash-at (its counts include replayed passes), to the same end', async () => {
    // Armed for a point this run never passes live after the resume: it only changes the walk.
    const { first, resumed, skipped } = await runAndResume({ crash: { point: 'before-wait', occurrence: 99 } });
    expect(skipped).toBe(0);
    expect(resumed.status).toBe('completed');
    expect(Object.fromEntries((await h.log.readTable('sql', 'iterations_out')).map((r) => [r.key, r.record]))).toEqual(expectedOut);
    await h.expectVerified(first.runId);
  });

  it('are walked against an edited mission, so an edit inside one is still caught', async () => {
    const first = await h.start(files());
    const edited = files(MISSION.replace('d: doubled } -> seen { key: .id }', 'd: doubled } -> seen { key: "k-" + .id }'));
    const resumed = h.resume(first.runId, { payload: { go: true }, by: 'api', missionFiles: edited });
    await expect(resumed).rejects.toThrow(NondeterminismError);
    await expect(resumed).rejects.toThrow(/Load\/1\[0\]\/1/);
  });
});
