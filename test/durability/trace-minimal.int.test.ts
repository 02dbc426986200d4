/**
 * `trace: minimal`: pure steps (let, map, apply, validate, match, for) write no events of their
 * own, and replay stays exact — the run, suspended half-way and resumed (a full re-walk from the
 * top against the log, including concurrent iterations that replay out of log order), ends with
 * the same stores and every POST sent once, as under `trace: full`. Also: the log's chunked bulk
 * read returns every event of a run longer than one chunk, in order. On every log backend
 * (test/support/temp-log.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyRun } from '../../engine/executor/verify.js';
import { readRunFailures } from '../../engine/log/run-failures.js';
import { StopRequested } from '../../engine/steps/signals.js';
import { openConformance, type Conformance } from '../conformance/harness.js';
import { backends } from '../support/temp-log.js';

const ITEMS = Array.from({ length: 12 }, (_, i) => ({ id: `i${i}`, n: i }));

function mission(trace: 'full' | 'minimal'): string {
  return `mission TraceModes {
  trace: ${trace}
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store out: memory("out")
  schema Doubled { id: string, d: number }
  action Load {
    get "/items"
    for item in response concurrency 3 {
      let doubled = item.n * 2
      map { id: item.id, d: doubled } -> Doubled { id: .id, d: .d }
      validate response { assume .d >= 0 }
      match response {
        Doubled -> continue,
        _ -> abort "not doubled"
      }
      store response -> out { key: .id }
      post "/sink" { body: { id: item.id, d: doubled } }
    }
    pause { resumeOn: webhook "/trace/go" }
    let stamp = now()
    store { id: "stamp", at: stamp, total: 12 } -> out { key: .id }
  }
  run Load
}
`;
}

let h: Conformance;

function files(trace: 'full' | 'minimal') {
  const entry = `${h.dir}/trace-${trace}.vague`;
  return { entry, files: [{ path: entry, text: mission(trace) }] };
}

/** Runs to the pause, resumes (replaying everything before it), and returns the finished run. */
async function runAndResume(trace: 'full' | 'minimal') {
  const first = await h.start(files(trace));
  expect(first.status).toBe('suspended');
  const resumed = await h.resume(first.runId, { payload: { go: true }, by: 'api' });
  expect(resumed.status, resumed.status === 'failed' ? resumed.error.message : '').toBe('completed');
  return { runId: first.runId, events: await h.events(first.runId), out: await h.store(first.runId, 'out') };
}

describe.each(backends)('%s: trace: minimal', (backend) => {
  beforeEach(async () => {
    h = await openConformance({ backend });
    h.api.on('GET /items', { body: ITEMS });
    h.api.on('POST /sink', { status: 201, body: { ok: true } });
  });

  afterEach(async () => {
    await h.close();
  });

  it('writes no step events for pure steps, keeps effects and inputs, and replays to the same stores as trace: full', async () => {
    const minimal = await runAndResume('minimal');
    const types = minimal.events.map((e) => e.type);
    // Every step event that remains belongs to an effectful step (get, post, store, pause).
    const stepTypes = minimal.events.filter((e) => e.type === 'step.started').map((e) => (e.payload as { stepType: string }).stepType);
    expect(stepTypes.filter((t) => !['Fetch', 'Call', 'Store', 'Pause'].includes(t))).toEqual([]);
    expect(stepTypes).toContain('Store');
    expect(stepTypes).toContain('Pause');
    expect(types).not.toContain('loop.iteration');
    expect(types.filter((t) => t === 'store.write')).toHaveLength(ITEMS.length + 1);
    expect(minimal.events.some((e) => e.type === 'value.recorded' && (e.payload as { source: string }).source === 'now')).toBe(true);

    const postsAfterMinimal = h.api.requests.filter((r) => r.method === 'POST');
    expect(postsAfterMinimal).toHaveLength(ITEMS.length);
    expect(new Set(postsAfterMinimal.map((r) => r.headers['idempotency-key'])).size).toBe(ITEMS.length);

    const full = await runAndResume('full');
    expect(full.events.length).toBeGreaterThan(minimal.events.length);
    // Same stores (the stamp is a recorded now(), so compare it by shape).
    const strip = (out: Record<string, unknown>) => ({ ...out, stamp: { ...(out['stamp'] as object), at: typeof (out['stamp'] as { at: unknown }).at } });
    expect(strip(minimal.out)).toEqual(strip(full.out));
    expect(minimal.out['i7']).toEqual({ id: 'i7', d: 14 });
    // The resume replayed every POST from the log: none was sent again.
    expect(h.api.requests.filter((r) => r.method === 'POST')).toHaveLength(2 * ITEMS.length);

    const report = await verifyRun(h.log, minimal.runId, { env: h.env });
    expect(report.divergence).toBeNull();
    expect(report.replayed.length).toBe(report.original.length);
    // Its own mission given back is no edit: the same report, nothing said unchecked (helper 96).
    const same = await verifyRun(h.log, minimal.runId, { env: h.env, missionFiles: files('minimal') });
    expect(same.unchecked).toEqual(report.unchecked);
    expect(same.divergence).toBeNull();

    // An edit of a pure step whose value reaches no effect: nothing in the log can show it, so
    // verify says what it did not compare rather than "verified".
    const edited = files('minimal');
    edited.files[0]!.text = edited.files[0]!.text.replace('validate response { assume .d >= 0 }', 'validate response { assume .d >= -1000 }');
    const editReport = await verifyRun(h.log, minimal.runId, { env: h.env, missionFiles: edited });
    expect(editReport.divergence).toBeNull();
    expect(editReport.unchecked).toContainEqual(expect.stringMatching(/^the values of the pure steps \(let, map, apply, validate\): the run was recorded under `trace: minimal`/));
  });

  it('refuses to resume with the mission switched to trace: full (the pure steps ask for events the log never had)', async () => {
    const first = await h.start(files('minimal'));
    expect(first.status).toBe('suspended');
    const before = await h.events(first.runId);
    await expect(h.resume(first.runId, { payload: { go: true }, by: 'api', missionFiles: files('full') })).rejects.toThrow(/Non-determinism/);
    expect(await h.events(first.runId)).toEqual(before);
    // The original mission still resumes it.
    const resumed = await h.resume(first.runId, { payload: { go: true }, by: 'api' });
    expect(resumed.status).toBe('completed');
  });

  it('fails a run on a failed validate (no fallback) exactly as trace: full does, and runs a fallback when there is one', async () => {
    const text = (trace: 'full' | 'minimal', fallback: boolean) => `mission Checks {
  trace: ${trace}
  store out: memory("out")
  action Check {
    let doubled = 4 * 2
    validate { v: doubled } { assume .v < 6 }${fallback ? ` or {
      store { id: "over", at: doubled } -> out { key: .id }
    }` : ''}
    store { id: "after", v: doubled } -> out { key: .id }
  }
  run Check
}
`;
    const outcome = async (trace: 'full' | 'minimal', fallback: boolean) => {
      const entry = `${h.dir}/checks-${trace}-${fallback}.vague`;
      const run = await h.start({ entry, files: [{ path: entry, text: text(trace, fallback) }] });
      return { status: run.status, error: run.status === 'failed' ? run.error.message : '', out: await h.store(run.runId, 'out') };
    };
    const minimal = await outcome('minimal', false);
    expect(minimal.status).toBe('failed');
    expect(minimal.error).toMatch(/Validation failed: `\.v < 6` \(line 6\) is false/);
    expect(minimal).toEqual(await outcome('full', false));
    // With a fallback, the failed validate runs it instead of failing the run.
    const fallback = await outcome('minimal', true);
    expect(fallback.status).toBe('completed');
    expect(fallback.out).toEqual({ over: { id: 'over', at: 8 }, after: { id: 'after', v: 8 } });
    expect(fallback).toEqual(await outcome('full', true));
  });

  it("records a loop's tolerated failure of a pure step, so the run's summary says it completed with it, as trace: full does", async () => {
    // Helper 79: "completed with 1 failure" printed live, then plain "completed" in `reqon runs`,
    // `show` and `resume`: the failing validate logged nothing.
    const text = (trace: 'full' | 'minimal') => `mission Tolerated {
  trace: ${trace}
  store out: memory("out")
  action Check {
    for i in range(0, 3) {
      validate { v: i } { assume .v != 1 }
      store { id: i } -> out { key: .id }
    }
  }
  run Check
}
`;
    for (const trace of ['minimal', 'full'] as const) {
      const entry = `${h.dir}/tolerated-${trace}.vague`;
      const run = await h.start({ entry, files: [{ path: entry, text: text(trace) }] });
      expect(run.status).toBe('completed');
      expect(run.tolerated, trace).toHaveLength(1);
      const failures = await readRunFailures(h.log, run.runId);
      expect(failures.map((f) => [f.stepPath.startsWith('Check/0[1]'), f.message]), trace).toEqual([[true, expect.stringMatching(/Validation failed/)]]);
      expect(Object.keys(await h.store(run.runId, 'out')).sort()).toEqual(['0', '2']);
      const report = await verifyRun(h.log, run.runId, { env: h.env });
      expect(report.divergence, trace).toBeNull();
    }
  });

  it.each(['', ' concurrency 4'])('lets timers in during a long loop%s of synchronous steps: a stop requested from a timer stops it mid-loop', async (concurrency) => {
    // Under minimal, these iterations never await anything; the loop must still yield now and
    // then, or a worker's shutdown (a signal, a timer) and its lease renewal would wait for the
    // whole loop. Millions of steps: seconds of work on any machine, against a yield every 50 ms.
    const iterations = 5_000_000;
    const entry = `${h.dir}/long-loop.vague`;
    const text = `mission LongLoop {
  trace: minimal
  action Spin {
    for i in range(0, ${iterations})${concurrency} {
      let x = i * 2
      validate { x: x } { assume .x >= 0 }
    }
  }
  run Spin
}
`;
    let stop = false;
    let steps = 0;
    let stepsAtStop = 0;
    const shouldStop = () => {
      // Once the loop is under way (the steps before it are few), a timer asks to stop: it can
      // fire only if the loop gives the event loop a turn.
      if (++steps === 1_000) setTimeout(() => ((stop = true), (stepsAtStop = steps)), 0);
      return stop;
    };
    const run = h.start({ entry, files: [{ path: entry, text }] }, {}, { shouldStop });
    await expect(run).rejects.toThrow(StopRequested);
    expect(stepsAtStop).toBeGreaterThan(1_000);
    expect(stepsAtStop).toBeLessThan(2 * iterations);
    // Then it stops at once: the iterations in flight end at their next step, and no other starts.
    expect(steps - stepsAtStop).toBeLessThanOrEqual(8);
  });

  it('reads back a run longer than one read chunk, every event once, in order', async () => {
    const many = Array.from({ length: 1500 }, (_, i) => ({ id: `m${i}`, n: i }));
    h.api.on('GET /items', { body: many });
    const first = await h.start(files('full'));
    expect(first.status).toBe('suspended');
    const events = await h.events(first.runId);
    // 1500 iterations of 7 steps: well over one 4096-event chunk.
    expect(events.length).toBeGreaterThan(4096 * 2);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]!.runId).toBe(first.runId);
    expect(Object.keys(events[events.length - 1]!)).toEqual(['runId', 'seq', 'type', 'stepPath', 'payload', 'recordedAt']);
    const window = await h.log.read(first.runId, { fromSeq: 4000, toSeq: 4200, limit: 150 });
    expect(window.map((e) => e.seq)).toEqual(Array.from({ length: 150 }, (_, i) => 4000 + i));
    expect(window).toEqual(events.slice(3999, 4149));
    const resumed = await h.resume(first.runId, { payload: { go: true }, by: 'api' });
    expect(resumed.status).toBe('completed');
    expect(Object.keys(await h.store(first.runId, 'out'))).toHaveLength(1501);
  }, 60_000);
});
