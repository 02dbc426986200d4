describe('resume --payload to a pause whose timer is past due, before any worker woke it', () => {
  it('is refused (exit 2, nothing changed), as a webhook delivery after the timer is: the run goes on as timed out', async () => {
    fs.writeFileSync(
      path.join(dir, 'due.vague'),
      'mission Due {\n  store got: memory("got")\n  action A {\n    pause { duration: 300, resumeOn: timeout | webhook "/ok" }\n    store { id: "after", got: response } -> got { key: .id }\n  }\n  run A\n}\n',
    );
    const started = await reqon('run', 'due.vague');
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);
    await new Promise((r) => setTimeout(r, 500));
    const before = (await reqon('events', runId, '--json')).stdout;
    const late = await reqon('resume', runId, '--payload', '{"approved":false}');
    expect(late.code, describeResult(late)).toBe(2);
    expect(late.stderr).toMatch(new RegExp(`run ${runId}'s pause \\S+ came due at .*\\(its timer\\): your payload is too late for it and was not used`));
    expect((await reqon('events', runId, '--json')).stdout).toBe(before);
    // Before the fix the pause took it: the run carried on with the late payload as its response.
    const timedOut = await reqon('resume', runId);
    expect(timedOut.code, describeResult(timedOut)).toBe(0);
    const stored = JSON.parse((await reqon('store', runId, 'got', '--json')).stdout) as { key: string; record: { got: unknown } }[];
    expect(stored.map((r) => r.record.got)).not.toContainEqual({ approved: false });
  }, 60_000);

  it('in time, the same payload resumes the pause with it', async () => {
    fs.writeFileSync(
      path.join(dir, 'intime.vague'),
      'mission InTime {\n  store got: memory("got")\n  action A {\n    pause { duration: 600000, resumeOn: timeout | webhook "/ok" }\n    store { id: "after", got: response } -> got { key: .id }\n  }\n  run A\n}\n',
    );
    const started = await reqon('run', 'intime.vague');
    const runId = runIdOf(started);
    const resumed = await reqon('resume', runId, '--payload', '{"approved":false}');
    expect(resumed.code, describeResult(resumed)).toBe(0);
    const stored = JSON.parse((await reqon('store', runId, 'got', '--json')).stdout) as { key: string; record: { got: unknown } }[];
    expect(stored.map((r) => r.record.got)).toEqual([{ approved: false }]);
  }, 60_000);
});

/**
 * `reqon resume RUN --payload …` of a run in a `wait` whose eventFilter refuses the payload: the
 * run waits on (exit 10), and the command says the payload was not taken — before, it printed only
 * the usual "suspended" line, and the payload sat unclaimed in the inbox without a word.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCli, describeResult, runCli, runIdOf } from '../durability/support/cli-build.js';

let cli: string;
let dir: string;

beforeAll(() => {
  cli = builtCli();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reqon-resume-filter-'));
  fs.writeFileSync(
    path.join(dir, 'm.vague'),
    'mission Approve {\n  store got: memory("got")\n  action A {\n    wait { path: "/approval", timeout: 600000, eventFilter: response.status == "ok" }\n    store response -> got { key: .status }\n  }\n  run A\n}\n',
  );
}, 180_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const reqon = (...args: string[]) => runCli(cli, [...args, '--db', path.join(dir, 'log.db')], { cwd: dir, env: { REQON_DATA_DIR: path.join(dir, 'data') } });

describe('resume --payload that a wait\'s eventFilter refuses', () => {
  it('leaves the run waiting and says the payload was not taken; a payload that passes completes it', async () => {
    const started = await reqon('run', 'm.vague');
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);

    const refused = await reqon('resume', runId, '--payload', '{"status":"bad"}');
    expect(refused.code, describeResult(refused)).toBe(10);
    expect(refused.stderr).toContain("your payload was not taken by the wait on /approval: its eventFilter refused it; it stays unclaimed in that path's inbox, and the run waits on");

    // The refused payload's id given again: that event, refused by name — not a race lost (helper 92).
    const named = await reqon('resume', runId, '--payload', '{"status":"bad"}', '--event-id', 'x1');
    expect(named.code, describeResult(named)).toBe(10);
    const sameId = await reqon('resume', runId, '--payload', '{"status":"ok"}', '--event-id', 'x1');
    expect(sameId.code, describeResult(sameId)).toBe(2);
    expect(sameId.stderr).toContain('an event with the id x1 is already in the inbox of /approval, not taken');
    const taken = await reqon('resume', runId, '--payload', '{"status":"ok"}');
    expect(taken.code, describeResult(taken)).toBe(0);
    expect(taken.stderr).not.toContain('not taken');
  }, 60_000);
});

describe('resume --payload of the same content twice to a wait that takes two events', () => {
  it('the repeat is refused (exit 2, nothing taken); an event of other content completes the wait (helper 85: the wait took one event twice)', async () => {
    fs.writeFileSync(
      path.join(dir, 'two.vague'),
      'mission Two {\n  store got: memory("got")\n  action A {\n    wait { path: "/events", timeout: 600000, expectedEvents: 2 }\n    for e in response {\n      store e -> got { key: .id }\n    }\n  }\n  run A\n}\n',
    );
    const started = await reqon('run', 'two.vague');
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);
    const first = await reqon('resume', runId, '--payload', '{"id":"e1","amount":5}');
    expect(first.code, describeResult(first)).toBe(10);
    const before = (await reqon('events', runId, '--json')).stdout;

    // The same content, its keys in another order: the same event.
    const again = await reqon('resume', runId, '--payload', '{"amount":5,"id":"e1"}');
    expect(again.code, describeResult(again)).toBe(2);
    expect(again.stderr).toContain(`run ${runId}: its wait on /events already took this payload`);
    expect(again.stderr).toContain('nothing was changed and your payload was not used — to send an equal event of its own, give it an id: `--event-id ID`');
    expect((await reqon('events', runId, '--json')).stdout).toBe(before);

    const second = await reqon('resume', runId, '--payload', '{"id":"e2","amount":5}');
    expect(second.code, describeResult(second)).toBe(0);
    const stored = JSON.parse((await reqon('store', runId, 'got', '--json')).stdout) as { key: string }[];
    expect(stored.map((r) => r.key)).toEqual(['e1', 'e2']);
  }, 60_000);

  it('two equal events, each with an id of its own, are two; the same id again is refused (helper 88: two equal votes could not be sent)', async () => {
    fs.writeFileSync(
      path.join(dir, 'votes.vague'),
      'mission Votes {\n  store got: memory("got")\n  action A {\n    wait { path: "/votes", timeout: 600000, expectedEvents: 3 }\n    store { id: "tally", votes: length(response) } -> got { key: .id }\n  }\n  run A\n}\n',
    );
    const started = await reqon('run', 'votes.vague');
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);
    expect((await reqon('resume', runId, '--payload', '{"vote":"yes"}', '--event-id', 'alice')).code).toBe(10);
    const bob = await reqon('resume', runId, '--payload', '{"vote":"yes"}', '--event-id', 'bob');
    expect(bob.code, describeResult(bob)).toBe(10);
    const again = await reqon('resume', runId, '--payload', '{"vote":"no"}', '--event-id', 'bob');
    expect(again.code, describeResult(again)).toBe(2);
    expect(again.stderr).toContain(`run ${runId}: its wait on /votes already took an event with the id bob`);
    const noPayload = await reqon('resume', runId, '--event-id', 'carol');
    expect(noPayload.code).toBe(2);
    expect(noPayload.stderr).toContain('--event-id names the event a --payload is');
    const carol = await reqon('resume', runId, '--payload', '{"vote":"yes"}', '--event-id', 'carol');
    expect(carol.code, describeResult(carol)).toBe(0);
    expect(JSON.parse((await reqon('store', runId, 'got', '--json')).stdout)).toEqual([{ key: 'tally', record: { id: 'tally', votes: 3 } }]);
  }, 60_000);
});

describe('resume --event-id of an id an earlier wait on the path took', () => {
  it('is refused as the same event (exit 2), not "already resumed" (exit 11) — helper 89', async () => {
    fs.writeFileSync(
      path.join(dir, 'twice.vague'),
      'mission Twice {\n  store got: memory("got")\n  action A {\n    wait { path: "/ev", timeout: 600000 }\n    store { id: "first", got: response } -> got { key: .id }\n    wait { path: "/ev", timeout: 600000 }\n    store { id: "second", got: response } -> got { key: .id }\n  }\n  run A\n}\n',
    );
    const started = await reqon('run', 'twice.vague');
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);
    expect((await reqon('resume', runId, '--payload', '{"n":1}', '--event-id', 'e1')).code).toBe(10);
    const again = await reqon('resume', runId, '--payload', '{"n":2}', '--event-id', 'e1');
    expect(again.code, describeResult(again)).toBe(2);
    expect(again.stderr).toContain(`run ${runId}: an earlier wait of the run took an event with the id e1`);
    const other = await reqon('resume', runId, '--payload', '{"n":2}', '--event-id', 'e2');
    expect(other.code, describeResult(other)).toBe(0);
  }, 60_000);
});

describe('resume --payload after the wait timed out, before any worker timed it out', () => {
  it('is refused (exit 2, nothing changed); the run then goes on as timed out', async () => {
    fs.writeFileSync(
      path.join(dir, 'late.vague'),
      'mission Late {\n  store got: memory("got")\n  action A {\n    wait { path: "/late", timeout: 300 }\n    store response -> got { key: .id }\n  }\n  run A\n}\n',
    );
    const started = await reqon('run', 'late.vague');
    expect(started.code, describeResult(started)).toBe(10);
    const runId = runIdOf(started);
    await new Promise((r) => setTimeout(r, 500));
    const before = (await reqon('events', runId, '--json')).stdout;
    const late = await reqon('resume', runId, '--payload', '{"id":"x"}');
    expect(late.code, describeResult(late)).toBe(2);
    expect(late.stderr).toMatch(/waits on \/late, which timed out at .*: your payload is too late for it and was not used/);
    expect((await reqon('events', runId, '--json')).stdout).toBe(before);
    // Before the fix the wait took it: the run completed with the late payload stored.
    const timedOut = await reqon('resume', runId);
    expect(timedOut.code, describeResult(timedOut)).toBe(1);
    expect(timedOut.stdout + timedOut.stderr).toMatch(/timeout/i);
  }, 60_000);
});

