import { describe, expect, it } from 'vitest';
import { runFold } from '../../engine/inspect/fold-handler.js';
import { RunSummaryHandler, withRunRecord } from '../../engine/inspect/run-summary.js';
import { EventBuilder, sampleRun } from './event-builder.js';

describe('RunSummaryHandler', () => {
  it('counts steps, 2xx responses plus store writes, resumes and crashes', () => {
    const log = sampleRun();
    const summary = runFold(new RunSummaryHandler(), log.events);
    expect(summary).toMatchObject({
      runId: 'run-1',
      mission: 'Orders',
      status: 'completed',
      steps: 5,
      effects: 4, // two 2xx responses (the 503 attempt is an error, not a response) + two store writes
      resumes: 2,
      crashesSurvived: 1,
      lastSeq: 34,
      waitingOn: null,
      error: null,
    });
    expect(summary.durationMs).toBe(log.events.at(-1)!.recordedAt - log.events[0]!.recordedAt);
  });

  it('a crash whose resume stopped at a divergence is not counted as survived; one whose run failed later is', () => {
    const log = new EventBuilder();
    log.add('run.started', '', { mission: 'M', missionHash: 'h' });
    log.add('run.resumed', '', { reason: 'crash', owner: 'w1', replayFromSeq: 1 });
    log.add('run.failed', '', { error: { code: 'NONDETERMINISM', message: 'Non-determinism at A/1' } });
    expect(runFold(new RunSummaryHandler(), log.events)).toMatchObject({ resumes: 1, crashesSurvived: 0, status: 'failed' });
    const later = new EventBuilder();
    later.add('run.started', '', { mission: 'M', missionHash: 'h' });
    later.add('run.resumed', '', { reason: 'crash', owner: 'w1', replayFromSeq: 1 });
    later.add('run.failed', '', { error: { code: 'http', message: '500' } });
    expect(runFold(new RunSummaryHandler(), later.events)).toMatchObject({ crashesSurvived: 1 });
    // A manual resume that diverges takes back no crash.
    later.add('run.resumed', '', { reason: 'manual', owner: 'w2', replayFromSeq: 3 });
    later.add('run.failed', '', { error: { code: 'NONDETERMINISM', message: 'edited' } });
    expect(runFold(new RunSummaryHandler(), later.events)).toMatchObject({ crashesSurvived: 1, resumes: 2 });
  });

  it('reports what a suspended run waits on, since and until when', () => {
    const log = sampleRun();
    const summary = runFold(new RunSummaryHandler(), log.events.slice(0, 20));
    expect(summary.status).toBe('suspended');
    expect(summary.waitingOn).toBe('timer');
    expect(summary.waitingSince).toBe(log.events[18]!.recordedAt);
    expect(summary.wakeAt).toBe(1_700_000_003_000);
  });

  it('names the webhook path of a pause that waits on one, and a failed run carries its error', () => {
    const log = new EventBuilder();
    log.add('run.started', '', { mission: 'M', missionHash: 'h' });
    log.add('pause.created', 'A.0', { pauseId: 'p9', webhookPath: '/approved' });
    log.add('run.suspended', '', { reason: 'webhook' });
    expect(runFold(new RunSummaryHandler(), log.events).waitingOn).toBe('webhook:/approved');
    log.add('pause.resumed', 'A.0', { pauseId: 'p9', by: 'studio', payload: { ok: 1 } });
    log.add('run.failed', '', { error: { code: 'x', message: 'boom' } });
    const failed = runFold(new RunSummaryHandler(), log.events);
    expect(failed).toMatchObject({ status: 'failed', error: 'boom', waitingOn: null });
  });

  it('carries a failure message of any size bounded (the runs table lists every summary), the log keeps it whole', () => {
    const huge = 'x'.repeat(5_000_000);
    const log = new EventBuilder();
    log.add('run.started', '', { mission: 'M', missionHash: 'h' });
    log.add('step.failed', 'A/1', { stepType: 'Flow', error: { code: 'aborted', message: huge } });
    log.add('run.failed', '', { error: { code: 'aborted', message: huge, at: 'm.vague:3:5' } });
    const summary = runFold(new RunSummaryHandler(), log.events);
    expect(summary.error).toBe(`m.vague:3:5: ${'x'.repeat(1987)}… (5000013 characters; the run's events hold the whole message)`);
    expect(summary.firstFailure!.message).toBe(`${'x'.repeat(2000)}… (5000000 characters; the run's events hold the whole message)`);
    expect(JSON.stringify(summary).length).toBeLessThan(5000);
    // A surrogate pair at the cut is left out whole, never halved.
    const withEmoji = new EventBuilder();
    withEmoji.add('run.started', '', { mission: 'M', missionHash: 'h' });
    withEmoji.add('run.failed', '', { error: { code: 'x', message: `${'y'.repeat(1999)}😀${'z'.repeat(10)}` } });
    const emoji = runFold(new RunSummaryHandler(), withEmoji.events);
    expect(emoji.error).toBe(`${'y'.repeat(1999)}… (2011 characters; the run's events hold the whole message)`);
  });

  it('names the pause the run suspended on when parallel branches each registered one', () => {
    // run [Timed, Approved]: Timed's timer, then Approved's webhook pause; the run suspends on the timer.
    const log = new EventBuilder();
    log.add('run.started', '', { mission: 'M', missionHash: 'h' });
    log.add('pause.created', 'Timed/0', { pauseId: 'p-timer', dueAt: 1_700_000_009_000 });
    log.add('pause.created', 'Approved/0', { pauseId: 'p-hook', webhookPath: '/approve' });
    log.add('run.suspended', 'Timed/0', { reason: 'timer', dueAt: 1_700_000_009_000 });
    // Before: 'webhook:/approve' (the last registered) until the timer's instant — neither is true.
    expect(runFold(new RunSummaryHandler(), log.events)).toMatchObject({ waitingOn: 'timer', wakeAt: 1_700_000_009_000 });
    // Resumed at the timer, the run suspends again on the webhook pause, with no instant.
    log.add('pause.resumed', 'Timed/0', { pauseId: 'p-timer', by: 'timer' });
    log.add('run.resumed', '', { reason: 'pause', owner: 'o', replayFromSeq: 5 });
    log.add('run.suspended', 'Approved/0', { reason: 'webhook' });
    expect(runFold(new RunSummaryHandler(), log.events)).toMatchObject({ waitingOn: 'webhook:/approve', wakeAt: null });
  });

  it('rejects events out of order', () => {
    const log = sampleRun();
    const handler = new RunSummaryHandler();
    handler.handleEvent(log.events[1]!);
    expect(() => handler.handleEvent(log.events[0]!)).toThrow(/arrived after seq 2/);
  });

  it('lets the run record decide status and waiting info', () => {
    const log = sampleRun();
    const summary = runFold(new RunSummaryHandler(), log.events.slice(0, 20));
    const merged = withRunRecord(summary, {
      runId: 'run-1',
      mission: 'Orders',
      status: 'running',
      createdAt: 0,
      updatedAt: summary.updatedAt + 5,
      lastSeq: 20,
      wakeAt: null,
      waitingOn: null,
    });
    expect(merged.status).toBe('running');
    expect(merged.waitingOn).toBeNull();
    expect(merged.updatedAt).toBe(summary.updatedAt + 5);
  });
});
