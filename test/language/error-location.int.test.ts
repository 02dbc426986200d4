/**
 * A run-time failure names where it happened, as `reqon check` names a finding: the file, line and
 * column of the expression that failed (else of the step), in the run's error (`at`), the failed
 * and tolerated lines `reqon run` prints, and the step's `step.failed` event. Before, a run said
 * only "failed: Cannot perform 'toNumber' on string (\"\")" — no file, no line, nothing to find it by
 * in a mission of many actions.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtCli, openConformance, REPO, runCli, type Conformance } from '../conformance/harness.js';
import { readRunSummary } from '../../engine/inspect/run-summary.js';

const SOURCE = path.join(REPO, 'assets/language/error-location.vague');
const text = fs.readFileSync(SOURCE, 'utf8');
/** The mission with `run <action>` as its pipeline, written beside the test's log. */
function withRun(c: Conformance, action: string): { entry: string; files: { path: string; text: string }[] } {
  const entry = path.join(c.dir, 'error-location.vague');
  const edited = text.replace('run LetFails', `run ${action}`);
  fs.writeFileSync(entry, edited);
  return { entry, files: [{ path: entry, text: edited }] };
}
/** 1-based line and column of the first `needle` in the mission text (or in `within`). */
function where(needle: string, within = text): string {
  const offset = within.indexOf(needle);
  expect(offset).toBeGreaterThan(-1);
  const before = within.slice(0, offset).split('\n');
  return `${before.length}:${before[before.length - 1]!.length + 1}`;
}

let c: Conformance;
beforeEach(async () => {
  c = await openConformance();
  c.api.on('GET /items', { body: [{ id: 'a', price: 2 }, { id: 'b', price: null }, { id: 'c', price: '3' }] });
  c.api.on('GET /missing', { status: 404, body: { error: 'nope' } });
  c.api.on('GET /pending', { body: { state: 'pending' } });
});
afterEach(async () => {
  await c.close();
});

describe('a run-time failure names its file, line and column', () => {
  it('a let: the argument that failed, in the result, the step.failed event and the CLI line', async () => {
    const files = withRun(c, 'LetFails');
    const result = await c.start(files);
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error.at).toBe(`${files.entry}:${where('"")')}`);
    expect(result.error.message).toBe('Cannot perform \'toNumber\' on string ("")');
    const failed = (await c.log.read(result.runId)).filter((e) => e.type === 'step.failed');
    expect(failed.map((e) => (e.payload as { error: { at?: string } }).error.at)).toEqual([`${files.entry}:${where('"")')}`]);
    await c.expectVerified(result.runId);

    const cli = await builtCli();
    const out = await runCli(cli, ['run', files.entry, '--db', path.join(c.dir, 'cli.db'), '--quiet'], { cwd: c.dir });
    expect(out.stdout).toContain(`failed: ${files.entry}:${where('"")')}: Cannot perform 'toNumber' on string ("")`);
    expect(out.stdout + out.stderr).not.toMatch(/\n\s+at |undefined/);
    // `reqon show` (and the studio's run header, from the same summary) says where, as `run` did.
    const runId = /run (run_\w+)/.exec(out.stdout + out.stderr)?.[1];
    expect(runId).toBeDefined();
    const shown = await runCli(cli, ['show', runId!, '--db', path.join(c.dir, 'cli.db')], { cwd: c.dir });
    expect(shown.stdout).toContain(`status    failed: ${files.entry}:${where('"")')}: Cannot perform 'toNumber' on string ("")`);
  });

  it('inside a loop: the innermost expression, not the loop', async () => {
    const files = withRun(c, 'LoopFails');
    const result = await c.start(files);
    expect(result.status === 'failed' && result.error.at).toBe(`${files.entry}:${where('x.price * 2')}`);
    await c.expectVerified(result.runId);
  });

  it('a tolerated iteration failure says where too', async () => {
    const files = withRun(c, 'Tolerated');
    const result = await c.start(files);
    expect(result.status).toBe('completed');
    expect(result.tolerated.map((t) => t.at)).toEqual([`${files.entry}:${where('x.price - 1')}`]);
    await c.expectVerified(result.runId);
    const { summary } = await readRunSummary(c.log, result.runId);
    expect(summary.firstFailure).toMatchObject({ at: `${files.entry}:${where('x.price - 1')}` });
  });

  it('a request that fails: the request step', async () => {
    const files = withRun(c, 'RequestFails');
    const result = await c.start(files);
    expect(result.status === 'failed' && result.error.at).toBe(`${files.entry}:${where('get "/missing"')}`);
    await c.expectVerified(result.runId);
  });

  // Found by helper 34: these three said what failed but not where.
  it('a branch of a parallel stage: the stage fails at the branch\'s place', async () => {
    const files = withRun(c, '[LetFails, Fine]');
    const result = await c.start(files);
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error.at).toBe(`${files.entry}:${where('"")')}`);
    expect(result.error.message).toBe('Parallel stage failed: LetFails: Cannot perform \'toNumber\' on string ("")');
  });

  it('a stage condition: the expression in the pipeline', async () => {
    const files = withRun(c, 'Fine then Fine if 1 / length("") > 0');
    const result = await c.start(files);
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error.at).toBe(`${files.entry}:${where('1 / length', files.files[0]!.text)}`);
  });

  it('a retry that runs out of attempts: the retry', async () => {
    const files = withRun(c, 'Pending');
    const result = await c.start(files);
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error.message).toBe('Action Pending exhausted 2 retry attempt(s)');
    expect(result.error.at).toBe(`${files.entry}:${where('retry {')}`);
    await c.expectVerified(result.runId);
  });

  it('a `jump … then retry` that runs out of attempts: the jump (helper 36)', async () => {
    const files = withRun(c, 'Detour');
    const result = await c.start(files);
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error.message).toMatch(/^Action Detour exhausted 3 attempt\(s\) of `jump Fine then retry`/);
    expect(result.error.at).toBe(`${files.entry}:${where('jump Fine then retry')}`);
  });

  it("a transform's field or a source's header: the step that used it, naming the transform and field or the source and header (helper 79)", async () => {
    c.api.on('GET /x', { body: {} });
    const entry = path.join(c.dir, 'declarations.vague');
    const mission = (action: string) => `mission Declarations {
  source Api { auth: none, base: "http://127.0.0.1:1", headers: { "X-Count": 1 / length("") } }
  schema Line { total: number }
  transform ToLine -> Line { id: .id, total: .qty * .price }
  action Apply {
    apply ToLine to { id: 1, qty: null, price: 2 } as line
  }
  action Fetch {
    get "/x"
  }
  run ${action}
}
`;
    for (const [action, message] of [
      ['Apply', "Cannot perform '*' on null (in transform `ToLine`, field `total`)"],
      ['Fetch', 'Division by zero (in source `Api`, header "X-Count")'],
    ] as const) {
      fs.writeFileSync(entry, mission(action));
      const result = await c.start({ entry, files: [{ path: entry, text: mission(action) }] }, { sources: { Api: c.api.url } });
      expect(result.status).toBe('failed');
      if (result.status !== 'failed') continue;
      expect(result.error.message, action).toContain(message);
    }
  });
});
