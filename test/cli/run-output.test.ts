/**
 * The end line of `reqon run` / `resume`: a run whose loop tolerated failures (onError continue)
 * says so on it, as `reqon runs` and `reqon show` do. Before, it printed a bare "completed: …"
 * however many POSTs had failed (they were only on stderr, as "tolerated failure at …").
 */
import { describe, expect, it } from 'vitest';
import { EXIT_OWNED_ELSEWHERE } from '../../engine/cli/exit-codes.js';
import { reportRun, reportRunError } from '../../engine/cli/run-output.js';
import { LeaseLostError } from '../../engine/log/errors.js';

function report(tolerated: { stepPath: string; code: string; message: string }[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = reportRun({ status: 'completed', actionsRun: ['Sync'], runId: 'run_1', tolerated }, false, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

describe('reqon run: the completed line', () => {
  it('is bare with no failure, and names the tolerated failures otherwise (still exit 0)', () => {
    expect(report([]).stdout).toBe('completed: 1 action(s) run (Sync)\n');
    const failed = report([
      { stepPath: 'Sync/1[0]', code: 'http-status', message: 'POST /ack failed with 404 after 1 attempt' },
      { stepPath: 'Sync/1[1]', code: 'http-status', message: 'POST /ack failed with 404 after 1 attempt' },
    ]);
    expect(failed.code).toBe(0);
    expect(failed.stdout).toBe('completed with 2 failures (tolerated, listed above): 1 action(s) run (Sync)\n');
    expect(failed.stderr).toContain('tolerated failure at Sync/1[1]: POST /ack failed with 404');
    expect(report([{ stepPath: 'Sync/1[0]', code: 'x', message: 'm' }]).stdout).toMatch(/^completed with 1 failure \(/);
  });
});

describe('reqon run: the suspended line', () => {
  const suspended = (waitingOn: string, wakeAt: number | null, webhookPath?: string) => {
    const out: string[] = [];
    const code = reportRun({ status: 'suspended', runId: 'run_1', waitingOn, wakeAt, ...(webhookPath ? { webhookPath } : {}), actionsRun: [], tolerated: [] }, false, { stdout: (t) => out.push(t), stderr: () => undefined });
    return { code, line: out.join('') };
  };

  it('says who carries it on: a worker at its time, a listening worker for a delivery (helper 80: "`reqon worker` wakes it" for a webhook it never takes)', () => {
    expect(suspended('pause:p1', Date.UTC(2026, 0, 1))).toEqual({ code: 10, line: 'suspended: waiting on pause:p1 until 2026-01-01T00:00:00.000Z; `reqon worker` wakes it then, or `reqon resume run_1`\n' });
    expect(suspended('pause:p2', null, '/approve').line).toBe('suspended: waiting on pause:p2; a delivery to /approve at `reqon worker --listen PORT` resumes it, or `reqon resume run_1`\n');
    // A pause on a timer that a webhook also ends: both ways are named (before: only the timer's).
    expect(suspended('pause:p3', Date.UTC(2026, 0, 1), '/approve').line).toBe(
      'suspended: waiting on pause:p3 until 2026-01-01T00:00:00.000Z; a delivery to /approve at `reqon worker --listen PORT` resumes it sooner, else `reqon worker` wakes it then; or `reqon resume run_1`\n',
    );
    expect(suspended('wait:/hooks/paid', Date.UTC(2026, 0, 1)).line).toMatch(/; a delivery to \/hooks\/paid at `reqon worker --listen PORT` completes it \(a worker without --listen only times it out\), or `reqon resume run_1` --payload JSON\n$/);
  });
});

describe('reqon run / resume / fork: a run whose lease was lost mid-run', () => {
  it('exits 11 (the run goes on in the process that took it over), not 1 "failed" (probe 106 K7)', () => {
    const err: string[] = [];
    const lost = new LeaseLostError('run_1', 'host:1:a', 1, { owner: 'host:2:b', epoch: 2 });
    const code = reportRunError(lost, { stdout: () => undefined, stderr: (t) => err.push(t) });
    expect(code).toBe(EXIT_OWNED_ELSEWHERE);
    expect(err.join('')).toContain("the run goes on in the process that took it over: `reqon show RUN_ID` says how it stands");
  });
});
