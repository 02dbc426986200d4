/**
 * Verify (and `resume --mission`, which verifies first) of a run killed while a concurrent loop's
 * first iteration was still in flight and later iterations had finished: the log ends inside
 * iteration 0, yet holds iterations 1–4 whole. The replay must compare every one of them.
 *
 * Before: the loop's pool stopped starting iterations once iteration 0 reached the end of the log,
 * so verify said "verified … (31 of 44 events re-derived, no divergence)" and exit 0 — even
 * against a mission whose edit changed iteration 3's POST — and `resume --mission` with that edit
 * passed its check, adopted the edited mission, re-sent requests and then diverged live, leaving a
 * run that its (now edited) mission could never resume. A fork with the edit re-sent the requests
 * left in flight, under the parent's Idempotency-Keys, before it diverged.
 *
 * The test kills the run itself (not `--crash-at`): armed, a concurrent loop's POSTs take turns
 * (crash-points.ts), and this API answers the first only after the others.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { backends, type Backend } from '../support/temp-log.js';
import { describeResult, killableRun, REPO, type KillableRun } from './support/cli-build.js';
import { useCliMissions } from './support/cli-missions.js';
import { readRunFacts } from './support/run-facts.js';

const FIXTURES = path.join(REPO, 'test/durability/fixtures');
const MISSION = path.join(FIXTURES, 'concurrent-inflight.vague');
const EDITED = path.join(FIXTURES, 'concurrent-inflight-edited.vague');
const ORDERS = Array.from({ length: 5 }, (_, i) => ({ id: `o-${i + 1}` }));
const TABLES = ['inflight_acks'];

const missions = useCliMissions();

/**
 * The API: o-1's confirmation is held until the four others were answered (and their acks had a
 * moment to be stored); then, the first time, `whileHeld` kills the run, so o-1's POST is in the
 * log with no answer while every later iteration finished.
 */
function inflightApi(whileHeld: () => void): FakeApi {
  let othersAnswered = 0;
  let held = false;
  let releaseFirst!: () => void;
  const othersDone = new Promise<void>((resolve) => (releaseFirst = resolve));
  const server = new FakeApi();
  server.on('GET /orders', { body: ORDERS });
  server.on('POST /confirmations', async (req) => {
    const id = (req.body as { id: string }).id;
    if (id === 'o-1') {
      await othersDone;
      await new Promise((resolve) => setTimeout(resolve, 300));
      if (!held) {
        held = true;
        whileHeld();
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    } else if (++othersAnswered === ORDERS.length - 1) {
      releaseFirst();
    }
    return { status: 201, body: { receipt: `r-${id}` } };
  });
  return server;
}

interface VerifyJson {
  ok: boolean;
  original: unknown[];
  replayed: unknown[];
  unchecked: string[];
  divergence: { stepPath: string } | null;
}

describe.each(backends)('%s: a run killed with a concurrent iteration in flight', (backend: Backend) => {
  it('verifies every recorded iteration, and an edit to a later one is refused by resume and fork before anything is sent', async () => {
    let run: KillableRun | undefined;
    const { cli, target, api, reqon } = await missions.start(backend, 'reqon-inflight-', inflightApi(() => run!.kill()));

    // Killed while o-1's answer is held: the GET and the four other POSTs were answered before it.
    run = killableRun(cli, ['run', MISSION, '--source', `Api=${api.url}`, '--quiet', '--db', target.target], { cwd: target.dir });
    const runId = await run.died;
    const before = await readRunFacts(target.target, runId, TABLES);
    // Iteration 0's request has no outcome in the log; iteration 3's was answered and stored.
    const at = (stepPath: string) => before.events.filter((e) => e.stepPath === stepPath).map((e) => e.type);
    expect(at('Confirm/1[0]/0')).toEqual(['step.started', 'http.request']);
    expect(at('Confirm/1[3]/0')).toContain('http.response');

    // Its own mission: every recorded event re-derived, nothing left unchecked.
    const clean = await reqon('verify', runId, '--json');
    expect(clean.code, describeResult(clean)).toBe(3); // unfinished: no divergence so far, not a whole check
    const cleanReport = JSON.parse(clean.stdout) as VerifyJson & { diverged: boolean };
    expect(cleanReport.ok).toBe(false); // not a whole check: the run has not finished
    expect(cleanReport.diverged).toBe(false);
    expect(cleanReport.replayed.length).toBe(cleanReport.original.length);
    expect(cleanReport.unchecked).toHaveLength(1);
    expect(cleanReport.unchecked[0]).toMatch(/^what the run has yet to do/);
    const text = await reqon('verify', runId);
    expect(text.stdout).toMatch(/^no divergence so far: .*\((\d+) of \1 events re-derived, no divergence\)/);

    // The edited mission parts from the run at iteration 3's POST.
    const edited = await reqon('verify', runId, '--mission', EDITED, '--json');
    expect(edited.code, describeResult(edited)).toBe(1);
    expect((JSON.parse(edited.stdout) as VerifyJson).divergence?.stepPath).toBe('Confirm/1[3]/0');

    // resume --mission with it is refused before anything leaves: no request, the log unchanged.
    const requests = api.requests.length;
    const refused = await reqon('resume', runId, '--mission', EDITED, '--quiet');
    expect(refused.code, describeResult(refused)).toBe(1);
    expect(refused.stderr).toMatch(/Non-determinism in run \S+ at step Confirm\/1\[3\]\/0/);
    expect(api.lines().slice(requests)).toEqual([]);
    const after = await readRunFacts(target.target, runId, TABLES);
    expect(after.events).toEqual(before.events);
    expect(after.run.missionHash).toBe(before.run.missionHash);

    // A fork at the run's end with the edit is refused the same way: no fork, no request. Before,
    // the fork re-sent the POSTs left in flight under the parent's keys, then diverged and failed.
    const forked = await reqon('fork', runId, '--at', String(before.run.lastSeq), '--mission', EDITED, '--quiet');
    expect(forked.code, describeResult(forked)).toBe(1);
    expect(forked.stderr).toMatch(/Non-determinism in run \S+ at step Confirm\/1\[3\]\/0/);
    // Its advice is a fork's (before: "Resume with the original mission", which forks nothing).
    expect(forked.stderr).not.toMatch(/Resume with/);
    const advice = /no fork was made\. Fork without --mission to carry on with the run's own mission, or fork at an earlier seq, before seq (\d+) where they part \(`reqon fork (\S+) --at (\d+) --mission FILE`\)/.exec(forked.stderr);
    expect(advice, forked.stderr).not.toBeNull();
    const divergedAt = Number(advice![1]);
    expect(advice![2]).toBe(runId);
    expect(Number(advice![3])).toBe(divergedAt - 1);
    expect(before.events.find((e) => e.seq === divergedAt)?.stepPath).toBe('Confirm/1[3]/0');
    expect(forked.stdout).not.toMatch(/^run /m);
    expect(api.lines().slice(requests)).toEqual([]);
    const runs = JSON.parse((await reqon('runs', '--json')).stdout) as unknown[];
    expect(runs).toHaveLength(1);

    // The run is still its own: resumed with its mission, it completes, each confirmation applied once.
    const resumed = await reqon('resume', runId, '--quiet');
    expect(resumed.code, describeResult(resumed)).toBe(0);
    expect([...api.applied.values()]).toEqual([1, 1, 1, 1, 1]);
    expect((await readRunFacts(target.target, runId, TABLES)).tables.inflight_acks).toHaveLength(ORDERS.length);

    // The advice works: a fork with the edit just before where it parts is made, and completes
    // with the edit (o-4's confirmation sent with the edited body).
    const sent = api.requests.length;
    const advised = await reqon('fork', runId, '--at', String(divergedAt - 1), '--mission', EDITED, '--quiet');
    expect(advised.code, describeResult(advised)).toBe(0);
    expect(advised.stdout).toMatch(/^run /m);
    expect(api.requests.slice(sent).map((r) => r.body)).toContainEqual({ id: 'o-4 (edited)' });
  }, 120_000);
});
