/**
 * A parallel stage whose two actions both pause: one on a timer, one on a webhook. Resumed when the
 * timer is due, the timer's action goes on to its end (GET /slow, POST /done) while the webhook's
 * pauses again; the run suspends on the webhook only once the timer's action has ended (exit 10).
 *
 * Before (1): the webhook's pause suspended the run at once, releasing its lease under the timer's
 * action, which lost the lease at its next commit: `reqon resume` exited 1 ("lease … lost").
 * Before (2), once that exited 10: the timer's action still did not go on — its GET was sent and
 * its answer dropped, its POST never sent — until the webhook's pause was resumed too, however
 * long after: a branch's pause suspended the run while a sibling's continuation was runnable.
 * Now a pause or wait in concurrent branches leaves the suspension to the end of the walk.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { backends, type Backend } from '../support/temp-log.js';
import { describeResult, runIdOf } from '../durability/support/cli-build.js';
import { useCliMissions } from '../durability/support/cli-missions.js';
import { readRunFacts } from '../durability/support/run-facts.js';

const MISSION = `mission TwoPauses {
  source Api { auth: none, base: "http://127.0.0.1:1" }
  store out: sql("two_pauses_out")

  action Timed {
    pause { duration: "1s" }
    get "/slow"
    post "/done" { body: { by: "timer" } }
  }

  action Approved {
    pause { resumeOn: webhook "/approve" }
    store { id: "approval", got: response } -> out { key: .id }
  }

  run [Timed, Approved]
}
`;

/** One action waits for a webhook at once, the other works: the wait must not cut the work short. */
const WAIT_AND_WORK = `mission WaitAndWork {
  source Api { auth: none, base: "http://127.0.0.1:1" }

  action Waits {
    wait { path: "/go", timeout: 86400000 }
  }

  action Works {
    get "/slow"
    post "/done" { body: { by: "worker" } }
  }

  run [Waits, Works]
}
`;

const missions = useCliMissions();

/** GET /slow answers after 300 ms (the branch that works while the other waits); POST /done is counted. */
function slowApi(): FakeApi {
  const api = new FakeApi();
  api.on('GET /slow', async () => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    return { body: { slow: true } };
  });
  api.on('POST /done', (req) => ({ status: 201, body: { got: req.body } }));
  return api;
}

describe.each(backends)('%s: a parallel stage paused on a timer and a webhook', (backend: Backend) => {
  it('resumed at the timer, suspends on the webhook (exit 10), then completes with each effect once', async () => {
    const { target, api, reqon } = await missions.start(backend, 'reqon-parallel-pauses-', slowApi());
    const file = path.join(target.dir, 'two-pauses.vague');
    fs.writeFileSync(file, MISSION);

    const started = await reqon('run', file, '--source', `Api=${api.url}`);
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);

    // Both branches paused: the run waits on the timer (the one that wakes it), not on the webhook.
    const first = await readRunFacts(target.target, runId, []);
    expect(first.events.filter((e) => e.type === 'pause.created').map((e) => e.stepPath).sort()).toEqual(['Approved/0', 'Timed/0']);
    expect(first.events.filter((e) => e.type === 'run.suspended').map((e) => e.stepPath)).toEqual(['Timed/0']);
    expect(api.lines()).toEqual([]);

    await new Promise((resolve) => setTimeout(resolve, 1200));
    const atTimer = await reqon('resume', runId);
    expect(atTimer.code, describeResult(atTimer)).toBe(10);
    expect(atTimer.stderr).not.toMatch(/lease/);
    const facts = await readRunFacts(target.target, runId, []);
    const approvalPause = first.events.find((e) => e.type === 'pause.created' && e.stepPath === 'Approved/0')!.payload as { pauseId: string };
    expect(atTimer.stdout).toMatch(new RegExp(`^suspended: waiting on pause:${approvalPause.pauseId};`, 'm'));
    expect(facts.run.status).toBe('suspended');
    expect(facts.run.waitingOn).toBe(`pause:${approvalPause.pauseId}`);
    expect(facts.events.at(-1)).toMatchObject({ type: 'run.suspended', stepPath: 'Approved/0' });
    // The timer's action ran to its end before the run suspended on the webhook: each request once,
    // answered and logged, the action completed.
    expect(api.lines()).toEqual(['GET /slow', 'POST /done']);
    const after = facts.events.slice(first.events.length);
    expect(after.filter((e) => e.type === 'http.response').map((e) => e.stepPath)).toEqual(['Timed/1', 'Timed/2']);
    expect(after.find((e) => e.type === 'action.completed')).toMatchObject({ stepPath: 'Timed' });

    const approved = await reqon('resume', runId, '--payload', '{"ok":true}');
    expect(approved.code, describeResult(approved)).toBe(0);
    expect([...api.applied.values()]).toEqual([1]);
    expect(api.lines()).toEqual(['GET /slow', 'POST /done']);
    expect((await readRunFacts(target.target, runId, ['two_pauses_out'])).tables.two_pauses_out).toEqual([
      { key: 'approval', record: { id: 'approval', got: { ok: true } } },
    ]);
    const verified = await reqon('verify', runId);
    expect(verified.code, describeResult(verified)).toBe(0);
  }, 120_000);

  it('resume --pause of the webhook branch while the run waits on the timer: that branch goes on, the run waits on the timer again', async () => {
    // Before: refused, "it was already resumed" (it never was); and once let through, the run was
    // left `running` with nobody carrying it on, its timer pause's suspension never committed again.
    const { target, api, reqon } = await missions.start(backend, 'reqon-parallel-named-', slowApi());
    const file = path.join(target.dir, 'two-pauses.vague');
    fs.writeFileSync(file, MISSION.replace('duration: "1s"', 'duration: "1h"'));
    const started = await reqon('run', file, '--source', `Api=${api.url}`);
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);
    const first = await readRunFacts(target.target, runId, []);
    const pauseOf = (step: string) => (first.events.find((e) => e.type === 'pause.created' && e.stepPath === step)!.payload as { pauseId: string }).pauseId;
    expect(first.run.waitingOn).toBe(`pause:${pauseOf('Timed/0')}`);

    // A payload that names no pause is refused, naming both (helper 82: it went to the hour's timer,
    // whose branch went on at once with it, and the approval stayed pending).
    const unnamed = await reqon('resume', runId, '--payload', '{"ok":true}');
    expect(unnamed.code, describeResult(unnamed)).toBe(2);
    expect(unnamed.stderr).toContain(`waits on 2 pauses, in branches of its own, and a payload goes to one: name it with --pause ID — ${pauseOf('Timed/0')} at Timed/0 (timer `);
    expect(unnamed.stderr).toContain(`${pauseOf('Approved/0')} at Approved/0 (webhook /approve)`);
    expect(api.lines()).toEqual([]);
    // `reqon show` names both pauses with the ids --pause takes (helper 82: it showed only the timer's).
    const shown = await reqon('show', runId);
    expect(shown.stdout).toContain(`pause     ${pauseOf('Timed/0')} at Timed/0 (timer `);
    expect(shown.stdout).toContain(`pause     ${pauseOf('Approved/0')} at Approved/0 (webhook /approve)`);
    expect(shown.stdout).toContain(`resume    \`reqon resume ${runId} --pause ID --payload JSON\``);
    const shownJson = JSON.parse((await reqon('show', runId, '--json')).stdout) as { waitingOn: string; pending: { pauses: { pauseId: string; webhookPath: string | null }[] } };
    // The token `run --json` and `runs --json` give, not another vocabulary (probe 106 K10).
    expect(shownJson.waitingOn).toBe((JSON.parse((await reqon('runs', '--json')).stdout) as { runId: string; waitingOn: string }[]).find((r) => r.runId === runId)!.waitingOn);
    expect(shownJson.waitingOn).toMatch(/^pause:/);
    expect(shownJson.pending.pauses.map((p) => [p.pauseId, p.webhookPath]).sort()).toEqual([[pauseOf('Approved/0'), '/approve'], [pauseOf('Timed/0'), null]].sort());
    const approved = await reqon('resume', runId, '--pause', pauseOf('Approved/0'), '--payload', '{"ok":true}');
    expect(approved.code, describeResult(approved)).toBe(10);
    expect(approved.stdout).toMatch(new RegExp(`^suspended: waiting on pause:${pauseOf('Timed/0')} until `, 'm'));
    const facts = await readRunFacts(target.target, runId, ['two_pauses_out']);
    expect(facts.run).toMatchObject({ status: 'suspended', waitingOn: `pause:${pauseOf('Timed/0')}` });
    expect(facts.tables.two_pauses_out).toEqual([{ key: 'approval', record: { id: 'approval', got: { ok: true } } }]);
    expect(api.lines()).toEqual([]); // the timer's branch did not go on
    const shownAfter = await reqon('show', runId);
    expect(shownAfter.stdout).not.toContain(`pause     ${pauseOf('Approved/0')}`);
    expect(shownAfter.stdout).toContain(`resume    \`reqon resume ${runId} --payload JSON\``);
    const soFar = await reqon('verify', runId);
    expect(soFar.code, describeResult(soFar)).toBe(3);

    // The timer's pause, resumed (as the worker would when due): the run completes, and verifies whole.
    const done = await reqon('resume', runId);
    expect(done.code, describeResult(done)).toBe(0);
    expect(api.lines()).toEqual(['GET /slow', 'POST /done']);
    const verified = await reqon('verify', runId);
    expect(verified.code, describeResult(verified)).toBe(0);
  }, 120_000);

  it('a branch that waits does not suspend the run while its sibling still works: the sibling ends first', async () => {
    const { target, api, reqon } = await missions.start(backend, 'reqon-parallel-wait-', slowApi());
    const file = path.join(target.dir, 'wait-and-work.vague');
    fs.writeFileSync(file, WAIT_AND_WORK);

    const started = await reqon('run', file, '--source', `Api=${api.url}`);
    expect(started.code, describeResult(started)).toBe(10);
    expect(started.stderr).not.toMatch(/lease/);
    expect(started.stdout).toMatch(/^suspended: waiting on wait:\/go until /m);
    // Before: the wait suspended the run at once and Works lost the lease: its GET's answer was
    // dropped and its POST waited for the webhook. Now Works ends, then the run suspends.
    expect(api.lines()).toEqual(['GET /slow', 'POST /done']);
    const runId = runIdOf(started);
    const facts = await readRunFacts(target.target, runId, []);
    expect(facts.run).toMatchObject({ status: 'suspended', waitingOn: 'wait:/go' });
    expect(facts.events.find((e) => e.type === 'action.completed')).toMatchObject({ stepPath: 'Works' });
    expect(facts.events.at(-1)).toMatchObject({ type: 'run.suspended', stepPath: 'Waits/0' });

    const go = await reqon('resume', runId, '--payload', '{"go":true}');
    expect(go.code, describeResult(go)).toBe(0);
    expect(api.lines()).toEqual(['GET /slow', 'POST /done']);
    const verified = await reqon('verify', runId);
    expect(verified.code, describeResult(verified)).toBe(0);
  }, 120_000);

  it("reqon show beside a wait: a lone pause is named with --pause, and a bare payload said to go to the wait (helper 88)", async () => {
    // Before: "resume `reqon resume RUN --payload JSON`" for the lone pause — followed, the approval
    // was delivered to the wait the run waited on, and the pause stayed pending.
    const { target, reqon } = await missions.start(backend, 'reqon-parallel-show-', slowApi());
    const file = path.join(target.dir, 'pause-and-wait.vague');
    fs.writeFileSync(file, `mission PauseAndWait {
  action Approved {
    pause { resumeOn: webhook "/approve" }
  }
  action Paid {
    wait { path: "/paid", timeout: 600000 }
  }
  run [Approved, Paid]
}
`);
    const started = await reqon('run', file);
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);
    const facts = await readRunFacts(target.target, runId, []);
    const pauseId = (facts.events.find((e) => e.type === 'pause.created')!.payload as { pauseId: string }).pauseId;
    expect(facts.run.waitingOn).toBe('wait:/paid');
    const shown = (await reqon('show', runId)).stdout;
    expect(shown).toContain(`resume    \`reqon resume ${runId} --pause ID --payload JSON\` (ID: ${pauseId})`);
    expect(shown).toContain(`deliver   \`reqon resume ${runId} --payload JSON\` delivers to the wait on /paid`);
    expect(shown).not.toMatch(/^resume +`reqon resume \S+ --payload JSON`$/m);
    expect(shown).not.toContain('deliver   a delivery to /paid');
  }, 60_000);

  it("reqon show of a run on a timer pause beside a pending wait: the wait's delivery is said to go to a listening worker (helper 92)", async () => {
    const { target, reqon } = await missions.start(backend, 'reqon-parallel-show2-', slowApi());
    const file = path.join(target.dir, 'timer-and-wait.vague');
    fs.writeFileSync(file, `mission TimerAndWait {
  action Later {
    pause { duration: "1h" }
  }
  action Paid {
    wait { path: "/paid", timeout: 7200000 }
  }
  run [Later, Paid]
}
`);
    const started = await reqon('run', file);
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);
    const facts = await readRunFacts(target.target, runId, []);
    expect(facts.run.waitingOn).toMatch(/^pause:/);
    const shown = (await reqon('show', runId)).stdout;
    expect(shown).toMatch(/^resume +`reqon resume \S+ --payload JSON`$/m);
    expect(shown).toContain('deliver   a delivery to /paid at `reqon worker --listen PORT` completes the wait there');
  }, 60_000);
});
