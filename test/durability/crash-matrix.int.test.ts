/**
 * The crash matrix (issue 3): every crash point, at its first, second and last occurrence, on the
 * built CLI against a real HTTP server that counts effects per Idempotency-Key.
 *
 * The mission (fixtures/crash-matrix.vague) pages through /items, stamps each record with now(),
 * POSTs it once and stores it in a sql store; pauses; syncs /extras; pauses again. Its crash
 * points, in run order (B = before-effect, A = after-effect, M = mid-store, C = after-checkpoint,
 * W = before-wait):
 *
 *   GET items p1..p3            B1-3 A1-3
 *   POST i1, store i1           B4 A4, B5 M1
 *   POST iK, store iK (K=2..7)  B(2K+2) A(K+3), B(2K+3) MK
 *   end of Sync                 C1 (the items checkpoint advances once every record is stored)
 *   pause Hold                  W1
 *   GET extras, store extras    B18 A11, B19 M8 C2
 *   pause Settle                W2
 *
 * Each case runs `reqon run … --crash-at P:N` and asserts the process died of SIGKILL exactly
 * there: the requests the server had seen and the records the log had committed. A point past the
 * first pause is never reached by `reqon run` (it suspends there, exit 10), so the resume is armed
 * with the same P:N: occurrences are counted over the whole run, the replayed passes included
 * (they never kill), so P:N names one place however often the run was resumed. Some cases kill
 * the next resume too; then the run is resumed (or woken by `reqon worker`) until it completes.
 * The durability assertion: final stores equal a crash-free reference run's (except the `at`
 * stamp, each run's own recorded now()), every `at` equals the value in the run's own log and in
 * the body the server applied, every logical effect applied exactly once with one body per key,
 * the log complete, and `reqon verify` clean. Cases run concurrently, three at a time, each with
 * its own database, data dir and server — on every log backend (test/support/temp-log.ts), each
 * compared with one crash-free reference run.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStoreState } from '../../engine/stores/memory-fold.js';
import type { FakeApi } from '../support/fake-api.js';
import { backends, tempLogTarget, type Backend, type TempLogTarget } from '../support/temp-log.js';
import { builtCli, describeResult, REPO, runCli, runIdOf, type CliResult } from './support/cli-build.js';
import { effectReport, EXTRAS, ITEMS, startMissionApi } from './support/mission-api.js';
import { iterationPathOf, readRunFacts, recordedNowUnder, seqsAreContiguous, withoutAt, type RunFacts } from './support/run-facts.js';
import { Slots } from './support/slots.js';

const MISSION = path.join(REPO, 'test/durability/fixtures/crash-matrix.vague');
const TABLES = ['crash_out', 'crash_extras'];

/** Where a kill must land: what the server had seen and what the log had committed by then. */
interface Kill {
  spec: string;
  requests: number;
  out: number;
  extras: number;
  /**
   * The point lies past the first pause: `reqon run` armed with it suspends there (exit 10)
   * without reaching it, and the resume armed with the same POINT:N dies at it — counting is over
   * the whole run, the replayed passes included (they cannot kill).
   */
  pastPause?: true;
}

interface Case {
  first: Kill;
  /** Kill the next resume too, here. */
  again?: Kill;
  /** Finish with `reqon worker --once` once the pauses are due, instead of `reqon resume`. */
  worker?: true;
}

const CASES: Case[] = [
  { first: { spec: 'before-effect:1', requests: 0, out: 0, extras: 0 }, again: { spec: 'after-effect:4', requests: 4, out: 0, extras: 0 } },
  { first: { spec: 'before-effect:2', requests: 1, out: 0, extras: 0 } },
  { first: { spec: 'before-effect:5', requests: 4, out: 0, extras: 0 } },
  { first: { spec: 'before-effect:19', requests: 11, out: 7, extras: 0, pastPause: true }, worker: true },
  { first: { spec: 'after-effect:1', requests: 1, out: 0, extras: 0 } },
  { first: { spec: 'after-effect:2', requests: 2, out: 0, extras: 0 } },
  // The POST's response was never committed: the same POINT:N on the resume dies at the same place
  // again, after re-sending it with the same key.
  { first: { spec: 'after-effect:5', requests: 5, out: 1, extras: 0 }, again: { spec: 'after-effect:5', requests: 6, out: 1, extras: 0 } },
  { first: { spec: 'after-effect:11', requests: 11, out: 7, extras: 0, pastPause: true } },
  { first: { spec: 'mid-store:1', requests: 4, out: 0, extras: 0 } },
  // The replayed store of i1 counts as occurrence 1, the re-done i2 as 2: mid-store:3 is i3. The
  // answer to i2's POST was committed as it arrived, so the resume does not send it again: 6, not 7.
  { first: { spec: 'mid-store:2', requests: 5, out: 1, extras: 0 }, again: { spec: 'mid-store:3', requests: 6, out: 2, extras: 0 } },
  { first: { spec: 'mid-store:8', requests: 11, out: 7, extras: 0, pastPause: true } },
  // Sync's checkpoint advances when the action ends, after all 7 records are stored.
  { first: { spec: 'after-checkpoint:1', requests: 10, out: 7, extras: 0 }, again: { spec: 'before-wait:1', requests: 10, out: 7, extras: 0 } },
  { first: { spec: 'after-checkpoint:2', requests: 11, out: 7, extras: 2, pastPause: true } },
  { first: { spec: 'before-wait:1', requests: 10, out: 7, extras: 0 }, again: { spec: 'before-wait:1', requests: 10, out: 7, extras: 0 } },
  { first: { spec: 'before-wait:2', requests: 11, out: 7, extras: 2, pastPause: true }, worker: true },
];

let cli: string;
const slots = new Slots(3);
let reference: Promise<Outcome>;

beforeAll(() => {
  cli = builtCli();
  reference = slots.run(() => runCase(null, backends[0]!));
  // Surfaces in the cases that await it; this keeps an early failure from being "unhandled".
  reference.catch(() => undefined);
}, 180_000);

afterAll(async () => {
  await reference?.catch(() => undefined);
});

interface Outcome {
  runId: string;
  storeOut: { key: string; record: Record<string, unknown> }[];
  storeExtras: { key: string; record: Record<string, unknown> }[];
  facts: RunFacts;
}

class Harness {
  readonly dir: string;
  /** The --db value: a SQLite file or a PostgreSQL URL. */
  readonly db: string;

  private constructor(
    readonly api: FakeApi,
    private readonly target: TempLogTarget,
  ) {
    this.dir = target.dir;
    this.db = target.target;
  }

  static async open(backend: Backend): Promise<Harness> {
    const target = await tempLogTarget(backend, 'reqon-crash-matrix-');
    try {
      return new Harness(await startMissionApi(), target);
    } catch (error) {
      await target.drop();
      throw error;
    }
  }

  cli(...args: string[]): Promise<CliResult> {
    return runCli(cli, [...args, '--db', this.db], { cwd: this.dir, env: { REQON_DATA_DIR: path.join(this.dir, 'data') } });
  }

  async json<T>(...args: string[]): Promise<T> {
    const result = await this.cli(...args, '--json');
    expect(result.code, `reqon ${args.join(' ')}: ${describeResult(result)}`).toBe(0);
    return JSON.parse(result.stdout) as T;
  }

  /** The process died of SIGKILL where `kill` says: the server's requests and the committed records. */
  async expectKilled(result: CliResult, runId: string, kill: Kill): Promise<void> {
    expect(result.signal, `--crash-at ${kill.spec} must kill the process: ${describeResult(result)}`).toBe('SIGKILL');
    expect(result.code).toBeNull();
    expect(this.api.requests.length, `requests seen when ${kill.spec} fired: ${this.api.lines().join(', ')}`).toBe(kill.requests);
    const facts = await readRunFacts(this.db, runId, TABLES);
    expect(facts.tables.crash_out!.length, `records committed when ${kill.spec} fired`).toBe(kill.out);
    expect(facts.tables.crash_extras!.length, `extras committed when ${kill.spec} fired`).toBe(kill.extras);
    expect(facts.run.status, 'a killed run is still running in the log').toBe('running');
    expect(seqsAreContiguous(facts.events)).toBe(true);
  }

  async finishWithResume(runId: string): Promise<void> {
    for (let round = 0; ; round++) {
      const result = await this.cli('resume', runId, '--quiet');
      if (result.code === 0) return;
      expect(result.code, `reqon resume: ${describeResult(result)}`).toBe(10);
      expect(round, 'the run must complete within three resumes (two pauses)').toBeLessThan(3);
    }
  }

  /** The scheduler's way: wait until each pause is due, then `reqon worker --once` wakes the run. */
  async finishWithWorker(runId: string): Promise<void> {
    for (let round = 0; ; round++) {
      const { run } = await readRunFacts(this.db, runId, []);
      if (run.status === 'completed') return;
      if (run.status === 'running') {
        // Crashed with no pause pending: take it over first.
        const resumed = await this.cli('resume', runId, '--quiet');
        expect([0, 10], `reqon resume: ${describeResult(resumed)}`).toContain(resumed.code);
        continue;
      }
      expect(run.status).toBe('suspended');
      expect(round, 'the run must complete within four rounds').toBeLessThan(4);
      const wait = (run.wakeAt ?? 0) - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait + 50));
      const worked = await this.cli('worker', '--once', '--quiet');
      expect(worked.code, `reqon worker --once: ${describeResult(worked)}`).toBe(0);
    }
  }

  async cleanup(): Promise<void> {
    await this.api.stop();
    await this.target.drop();
  }
}

/** One case (or the reference run, for `null`): crash, resume, finish, and collect the outcome. */
async function runCase(c: Case | null, backend: Backend): Promise<Outcome> {
  const h = await Harness.open(backend);
  try {
    const started = await h.cli('run', MISSION, '--source', `Api=${h.api.url}`, '--quiet', ...(c ? ['--crash-at', c.first.spec] : []));
    const runId = runIdOf(started);
    if (c?.first.pastPause) {
      expect(started.code, `--crash-at ${c.first.spec} lies past the first pause: ${describeResult(started)}`).toBe(10);
      expect(started.signal).toBeNull();
      await h.expectKilled(await h.cli('resume', runId, '--quiet', '--crash-at', c.first.spec), runId, c.first);
    } else if (c) {
      await h.expectKilled(started, runId, c.first);
    }
    if (c) {
      if (c.again) await h.expectKilled(await h.cli('resume', runId, '--quiet', '--crash-at', c.again.spec), runId, c.again);
    } else {
      expect(started.code, `the reference run stops at its first pause: ${describeResult(started)}`).toBe(10);
    }
    if (c?.worker || !c) await h.finishWithWorker(runId);
    else await h.finishWithResume(runId);

    const storeOut = await h.json<Outcome['storeOut']>('store', runId, 'out');
    const verified = await h.cli('verify', runId);
    expect(verified.code, `reqon verify: ${describeResult(verified)}`).toBe(0);
    const facts = await readRunFacts(h.db, runId, TABLES);
    // `reqon store` is this fold of the log; read the second store the same way, in-process.
    const storeExtras = MemoryStoreState.fromEvents(facts.events).list('extras') as Outcome['storeExtras'];
    expectDurable(h.api, facts, storeOut, storeExtras, c !== null);
    return { runId, storeOut, storeExtras, facts };
  } finally {
    await h.cleanup();
  }
}

/** The invariants of one finished run on its own: exactly-once effects, a complete log, recorded stamps. */
function expectDurable(api: FakeApi, facts: RunFacts, storeOut: Outcome['storeOut'], storeExtras: Outcome['storeExtras'], crashed: boolean): void {
  expect(facts.run.status).toBe('completed');
  expect(facts.run.owner).toBeNull();
  expect(seqsAreContiguous(facts.events)).toBe(true);
  expect(facts.events.at(-1)?.type).toBe('run.completed');
  if (crashed) expect(facts.events.some((e) => e.type === 'run.resumed' && (e.payload as { reason: string }).reason === 'crash')).toBe(true);

  // The sql tables are what `reqon store` shows (the fold of the log's store.write events).
  expect(facts.tables.crash_out).toEqual(storeOut);
  expect(facts.tables.crash_extras).toEqual(storeExtras);
  expect(storeOut.map((r) => r.key)).toEqual(ITEMS.map((i) => i.id));

  // Every logical effect applied exactly once, one key per record, each key always with one body.
  const effects = effectReport(api);
  expect(effects.unkeyed).toEqual([]);
  expect(effects.applied.size).toBe(ITEMS.length);
  expect([...effects.applied.values()].every((n) => n === 1)).toBe(true);
  const appliedIds = new Map<string, unknown>();
  for (const [key, bodies] of effects.bodies) {
    expect(effects.applied.get(key), `key ${key} was sent but never applied`).toBe(1);
    for (const body of bodies) expect(body, `every retry of key ${key} sends the first body`).toEqual(bodies[0]);
    appliedIds.set((bodies[0] as { id: string }).id, bodies[0]);
  }
  expect([...appliedIds.keys()].sort()).toEqual(ITEMS.map((i) => i.id));

  // Each record's now() is the one recorded in this run's log, and the one the server was sent.
  for (const { key, record } of storeOut) {
    const at = recordedNowUnder(facts.events, iterationPathOf(facts.events, key));
    expect(record.at, `record ${key}: stored at vs. its log`).toBe(at);
    expect((appliedIds.get(key) as { at: unknown }).at, `record ${key}: applied body at vs. its log`).toBe(at);
  }
  expect(storeExtras.map((r) => r.record)).toEqual(EXTRAS);
}

describe.each(backends)('%s: crash matrix: every crash point, killed and resumed, ends like a run that never crashed', (backend) => {
  for (const c of CASES) {
    const name = `${c.first.spec}${c.again ? `, then ${c.again.spec} on resume` : ''}${c.worker ? ', finished by the worker' : ''}`;
    it.concurrent(name, async () => {
      const crashed = await slots.run(() => runCase(c, backend));
      const ref = await reference;
      expect(withoutAt(crashed.storeOut)).toEqual(withoutAt(ref.storeOut));
      expect(crashed.storeExtras).toEqual(ref.storeExtras);
      expect(withoutAt(crashed.facts.tables.crash_out!)).toEqual(withoutAt(ref.facts.tables.crash_out!));
      expect(crashed.facts.tables.crash_extras).toEqual(ref.facts.tables.crash_extras);
    }, 150_000);
  }

  it.concurrent('an occurrence past the last one never fires: before-effect:20, armed on every process, lets the run complete', async () => {
    const requests = await slots.run(async () => {
      const h = await Harness.open(backend);
      try {
        const started = await h.cli('run', MISSION, '--source', `Api=${h.api.url}`, '--quiet', '--crash-at', 'before-effect:20');
        expect(started.code, describeResult(started)).toBe(10);
        const runId = runIdOf(started);
        const first = await h.cli('resume', runId, '--quiet', '--crash-at', 'before-effect:20');
        expect(first.code, describeResult(first)).toBe(10);
        const second = await h.cli('resume', runId, '--quiet', '--crash-at', 'before-effect:20');
        expect(second.code, describeResult(second)).toBe(0);
        return h.api.requests.length;
      } finally {
        await h.cleanup();
      }
    });
    // 3 pages + 7 POSTs + 1 extras page, and 8 store batches: 19 effects, none left for a 20th.
    expect(requests).toBe(11);
  }, 150_000);
});
