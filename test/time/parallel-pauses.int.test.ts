/**
 * A parallel stage whose two actions both pause: one on a timer, one on a webhook. Resumed when the
 * timer is due, the timer's action goes on while the webhook's pauses again and suspends the run,
 * releasing its lease on purpose; the timer's action then loses the lease at its next commit.
 *
 * Before: that LeaseLostError ended the stage (the first branch's error won), so `reqon resume`
 * printed "lease on run … lost … stop working on this run" and exited 1 — the code of a failed run —
 * while the run was suspended on the webhook and fine. Now the suspension ends the walk: exit 10.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeApi } from '../support/fake-api.js';
import { backends, tempLogTarget, type Backend, type TempLogTarget } from '../support/temp-log.js';
import { builtCli, describeResult, runCli, runIdOf, type CliResult } from '../durability/support/cli-build.js';
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

let cli: string;
let target: TempLogTarget | undefined;
let api: FakeApi | undefined;

beforeAll(() => {
  cli = builtCli();
}, 180_000);

afterEach(async () => {
  await api?.stop();
  api = undefined;
  await target?.drop();
  target = undefined;
});

describe.each(backends)('%s: a parallel stage paused on a timer and a webhook', (backend: Backend) => {
  it('resumed at the timer, suspends on the webhook (exit 10), then completes with each effect once', async () => {
    target = await tempLogTarget(backend, 'reqon-parallel-pauses-');
    api = new FakeApi();
    api.on('GET /slow', async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { body: { slow: true } };
    });
    api.on('POST /done', (req) => ({ status: 201, body: { got: req.body } }));
    await api.start();
    const file = path.join(target.dir, 'two-pauses.vague');
    fs.writeFileSync(file, MISSION);
    const reqon = (...args: string[]): Promise<CliResult> => runCli(cli, [...args, '--db', target!.target], { cwd: target!.dir });

    const started = await reqon('run', file, '--source', `Api=${api.url}`);
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);

    await new Promise((resolve) => setTimeout(resolve, 1200));
    const atTimer = await reqon('resume', runId);
    expect(atTimer.code, describeResult(atTimer)).toBe(10);
    expect(atTimer.stderr).not.toMatch(/lease/);
    expect(atTimer.stdout).toMatch(/^suspended: waiting on pause:/m);
    const facts = await readRunFacts(target.target, runId, []);
    expect(facts.run.status).toBe('suspended');
    expect(facts.events.at(-1)).toMatchObject({ type: 'run.suspended', stepPath: 'Approved/0' });

    const approved = await reqon('resume', runId, '--payload', '{"ok":true}');
    expect(approved.code, describeResult(approved)).toBe(0);
    expect([...api.applied.values()]).toEqual([1]);
    expect((await readRunFacts(target.target, runId, ['two_pauses_out'])).tables.two_pauses_out).toEqual([
      { key: 'approval', record: { id: 'approval', got: { ok: true } } },
    ]);
    const verified = await reqon('verify', runId);
    expect(verified.code, describeResult(verified)).toBe(0);
  }, 120_000);
});
