/**
 * Named crash points (`--crash-at POINT[:N]`). Unarmed, `reach` is a no-op. Armed, the run kills
 * its own process with SIGKILL the Nth time it reaches POINT — counted over the run's whole
 * logical progress (a point passed during replay counts, but only a live pass can kill), keyed by
 * the effect it guards, so POINT:N dies at the same place for the same mission and data no matter
 * how many times the run has already crashed and resumed. Which effects pass which points is
 * effects.ts's table; `reach` refuses a point its kind does not pass.
 */
import { CRASH_POINTS, kindPasses, type CrashPoint, type EffectKind } from './effects.js';

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

export class CrashInjector {
  /** Per point, each logical occurrence's ordinal in the run's progress. */
  private readonly seen = new Map<CrashPoint, Map<string, number>>();

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
    if (live && ordinal === this.plan.occurrence) this.kill();
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
