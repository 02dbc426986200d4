/**
 * The end line of `reqon run` / `resume`: a run whose loop tolerated failures (onError continue)
 * says so on it, as `reqon runs` and `reqon show` do. Before, it printed a bare "completed: …"
 * however many POSTs had failed (they were only on stderr, as "tolerated failure at …").
 */
import { describe, expect, it } from 'vitest';
import { reportRun } from '../../engine/cli/run-output.js';

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
