/**
 * Named crash points (`--crash-at POINT[:N]`). Unarmed, `reach` is a no-op. Armed, the run kills
 * its own process with SIGKILL the Nth time it reaches POINT — counted over the run's whole
 * logical progress (a point passed during replay counts, but only a live pass can kill), keyed by
 * the effect it guards, so POINT:N dies at the same place for the same mission and data no matter
 * how many times the run has already crashed and resumed. Which effects pass which points is
 * effects.ts's table; `reach` refuses a point its kind does not pass.
 *
 * Inside concurrent branches (a concurrent loop's iterations, a parallel stage's actions) "the Nth
 * time" would be whichever branch got there Nth, which depends on how fast the world answered: the
 * same POINT:N killed another iteration's effect from one run to the next. So, armed, an effect
 * whose kind passes the armed point waits for its turn (`turn`) until every branch before its own,
 * in the mission's order, has ended: the point's occurrences are reached in the order a sequential
 * walk reaches them. Everything else in the branches stays concurrent.
 */
import { writeSync } from 'node:fs';
import { CRASH_POINTS, kindPasses, type CrashPoint, type EffectKind } from './effects.js';
import type { ConcurrentConstruct } from './step-path.js';

export { CRASH_POINTS, type CrashPoint };

export interface CrashPlan {
  point: CrashPoint;
  occurrence: number;
}

export class CrashSpecError extends Error {
  constructor(spec: string) {
    super(
      `invalid --crash-at "${spec}": expected POINT or POINT:N with POINT one of ${CRASH_POINTS.join(', ')} or random, and N ≥ 1`,
    );
    this.name = 'CrashSpecError';
  }
}

/** Parse `POINT[:N]`; `random` picks with the given random source and says what it picked. */
export function parseCrashSpec(spec: string, random: () => number): { plan: CrashPlan; picked: boolean } {
  const [name, count, ...rest] = spec.split(':');
  if (rest.length > 0) throw new CrashSpecError(spec);
  if (name === 'random') {
    if (count !== undefined) throw new CrashSpecError(spec);
    const point = CRASH_POINTS[Math.floor(random() * CRASH_POINTS.length)]!;
    return { plan: { point, occurrence: 1 + Math.floor(random() * 5) }, picked: true };
  }
  if (!(CRASH_POINTS as readonly string[]).includes(name ?? '')) throw new CrashSpecError(spec);
  // Decimal digits only: Number() also took `0x2`, `2e0` and ` 2`, and rounded 20-digit counts.
  const occurrence = count === undefined ? 1 : /^[0-9]{1,15}$/.test(count) ? Number(count) : NaN;
  if (!Number.isInteger(occurrence) || occurrence < 1) throw new CrashSpecError(spec);
  return { plan: { point: name as CrashPoint, occurrence }, picked: false };
}

/**
 * The branches of one concurrent construct, in the mission's order, and which have ended: an
 * effect in a branch takes its turn once every branch before it has ended.
 */
export class BranchTurns {
  private readonly position = new Map<string, number>();
  private readonly ended: boolean[];
  /** Every branch before this position has ended. */
  private low = 0;
  private waiting: { at: number; go: () => void }[] = [];

  constructor(
    readonly construct: ConcurrentConstruct,
    branches: readonly string[],
  ) {
    branches.forEach((branch, at) => {
      if (!this.position.has(branch)) this.position.set(branch, at);
    });
    this.ended = branches.map(() => false);
  }

  /** Undefined when `path` may go on now; else settles once every branch before its own has ended. */
  before(path: string): Promise<void> | undefined {
    const branch = this.construct.branchOf(path);
    const at = branch === undefined ? undefined : this.position.get(branch);
    if (at === undefined || at <= this.low) return undefined;
    return new Promise((go) => this.waiting.push({ at, go }));
  }

  /** `branch` ran to its end (completed, failed, suspended). */
  end(branch: string): void {
    const at = this.position.get(branch);
    if (at === undefined) return;
    this.ended[at] = true;
    while (this.low < this.ended.length && this.ended[this.low]) this.low++;
    this.release((w) => w.at <= this.low);
  }

  /** The construct is left: nobody waits on its branches any more. */
  close(): void {
    this.release(() => true);
  }

  /** `running` (a branch's walk) with `end(branch)` called once it settles, however it settles. */
  settle(branch: string, running: Promise<void> | undefined): Promise<void> | undefined {
    if (running === undefined) {
      this.end(branch);
      return undefined;
    }
    return running.finally(() => this.end(branch));
  }

  private release(due: (w: { at: number }) => boolean): void {
    const go = this.waiting.filter(due);
    if (go.length === 0) return;
    this.waiting = this.waiting.filter((w) => !due(w));
    for (const w of go) w.go();
  }
}

/** The end of the line a process writes to stderr as its armed crash point fires, just before it dies. */
export const CRASH_POINT_FIRED = 'fired: killing this process (--crash-at)';

function crashPointFiredLine(point: CrashPoint, occurrence: number): string {
  return `reqon: crash point ${point}:${occurrence} ${CRASH_POINT_FIRED}`;
}

export class CrashInjector {
  /** Per point, each logical occurrence's ordinal in the run's progress. */
  private readonly seen = new Map<CrashPoint, Map<string, number>>();
  /** The concurrent constructs the walk is inside, while armed. */
  private readonly constructs: BranchTurns[] = [];

  constructor(
    private readonly plan: CrashPlan | null,
    private readonly kill: () => void = () => process.kill(process.pid, 'SIGKILL'),
  ) {}

  /**
   * The run passes `point` of an effect of `kind` for the occurrence `key` (an effect id, a batch
   * id, a checkpoint key). `live` is false while replaying: the pass counts, but cannot kill.
   */
  reach(kind: EffectKind, point: CrashPoint, key: string, live: boolean): void {
    if (!kindPasses(kind, point)) throw new Error(`internal: a ${kind} effect has no ${point} crash point (journal/effects.ts)`);
    if (!this.plan || this.plan.point !== point) return;
    let keys = this.seen.get(point);
    if (!keys) this.seen.set(point, (keys = new Map()));
    let ordinal = keys.get(key);
    if (ordinal === undefined) keys.set(key, (ordinal = keys.size + 1));
    if (live && ordinal === this.plan.occurrence) {
      // Said before the kill, synchronously: a process killed by anything else (a studio's "Kill
      // process") never says it, so a crash lab tells its point fired from another SIGKILL.
      writeSync(2, `${crashPointFiredLine(point, this.plan.occurrence)}\n`);
      this.kill();
    }
  }

  /**
   * Concurrent branches start (`branches`: their keys, as `construct.branchOf` names them, in the
   * mission's order). Armed, their effects take turns (`turn`): the caller reports each branch's
   * end through the returned BranchTurns (`settle`) and leaves with `leaveBranches`. Unarmed: undefined.
   */
  enterBranches(construct: ConcurrentConstruct, branches: readonly string[]): BranchTurns | undefined {
    if (!this.plan) return undefined;
    const turns = new BranchTurns(construct, branches);
    this.constructs.push(turns);
    return turns;
  }

  leaveBranches(turns: BranchTurns | undefined): void {
    if (!turns) return;
    turns.close();
    const at = this.constructs.lastIndexOf(turns);
    if (at >= 0) this.constructs.splice(at, 1);
  }

  /**
   * Before an effect of `kind` at `path` passes its first crash point: undefined when it may go on
   * now, else settles when it is its turn — every branch before its own has ended, in every
   * concurrent construct it is inside. Only effects that pass the armed point wait.
   */
  turn(kind: EffectKind, path: string): Promise<void> | undefined {
    if (!this.plan || this.constructs.length === 0 || !kindPasses(kind, this.plan.point)) return undefined;
    const waits = this.constructs.map((c) => c.before(path)).filter((w) => w !== undefined);
    if (waits.length === 0) return undefined;
    return Promise.all(waits).then(() => undefined);
  }

  /**
   * The armed plan and how many occurrences of its point the run passed, when it is still alive
   * at the end of an execution: the point was never reached live, so nothing was killed.
   */
  unreached(): (CrashPlan & { passed: number }) | undefined {
    if (!this.plan) return undefined;
    return { ...this.plan, passed: this.seen.get(this.plan.point)?.size ?? 0 };
  }
}
