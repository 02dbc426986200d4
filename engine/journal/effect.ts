/**
 * The one way an effectful step runs an effect (effects.ts says which kinds exist): intent, then
 * the world, then outcome — replayed from the log where it is recorded, live where it is not.
 *
 *   const effect = new Effect(rt.journal, rt.crash, { kind: 'request', key: id, path, external: true });
 *   const intent = effect.takeIntent('http.request', (e) => e.payload.effectId === id, check);
 *   if (intent) { …replaying: passes are counted, never kill… }
 *   else await effect.recordIntent('http.request', payload);   // durable first when external
 *   effect.pass('before-effect');                              // the kind's crash points, in order
 *   …ask the world…
 *   await effect.recordOutcome('http.response', payload);      // committed on arrival when external
 *
 * What the handle owns, so no step writes it by hand: the comparison of a recorded intent with the
 * one asked for (a divergence is a NondeterminismError, thrown before anything is sent), the
 * output-commit rule (an external effect's intent is on disk before it leaves the process; its
 * outcome is committed as it arrives, so a crash later re-sends only what never answered), and
 * the crash points of its kind — `pass` refuses one its kind does not have, and a pass is live
 * (may kill) only when the work it guards is new.
 */
import type { EventPayloads, EventType, StoredEvent } from '../log/events.js';
import type { CrashInjector } from './crash-points.js';
import type { CrashPoint, EffectKind } from './effects.js';
import type { Journal } from './journal.js';

export interface EffectSpec {
  kind: EffectKind;
  /** The occurrence's key (effect id, batch id): its crash points count by it. */
  key: string;
  /** The step path its events are recorded at. */
  path: string;
  /** Changes the world outside the log: a mutating request, a file/postgrest write, a suspension. */
  external: boolean;
}

export class Effect {
  constructor(
    private readonly journal: Journal,
    private readonly crash: CrashInjector,
    readonly spec: EffectSpec,
  ) {}

  /**
   * Replaying: consumes the next recorded intent of this occurrence — an event of `type` at the
   * effect's path for which `belongs` holds — after `check` (which throws the divergence when the
   * mission now asks for a different effect). Undefined when none is recorded: go live.
   */
  takeIntent<T extends EventType>(type: T, belongs: (event: StoredEvent<T>) => boolean = () => true, check?: (event: StoredEvent<T>) => void): StoredEvent<T> | undefined {
    const next = this.journal.peek(this.spec.path);
    if (next?.type !== type || !belongs(next as StoredEvent<T>)) return undefined;
    check?.(next as StoredEvent<T>);
    return this.journal.take(this.spec.path, type);
  }

  /** Live: records the intent; an external effect's is durable before the caller touches the world. */
  async recordIntent<T extends EventType>(type: T, payload: EventPayloads[T]): Promise<void> {
    this.journal.emit(type, this.spec.path, payload);
    if (this.spec.external) await this.journal.commit({ durable: true });
  }

  /**
   * Passes a crash point of this effect's kind. `live` (default: the journal has nothing left to
   * replay) says whether the work the point guards is new — only a live pass can kill.
   */
  pass(point: CrashPoint, live: boolean = !this.journal.replaying): void {
    this.crash.reach(this.spec.kind, point, this.spec.key, live);
  }

  /** Replaying: the recorded outcome of this occurrence (one of `types`, `belongs` holding), consumed. */
  takeOutcome<T extends EventType>(types: readonly T[], belongs: (event: StoredEvent<T>) => boolean = () => true): StoredEvent<T> | undefined {
    const next = this.journal.peek(this.spec.path);
    if (!next || !(types as readonly EventType[]).includes(next.type) || !belongs(next as StoredEvent<T>)) return undefined;
    return this.journal.take(this.spec.path, next.type as T);
  }

  /** Live: records the outcome; an external effect's is committed as it arrives (no fsync of its own). */
  recordOutcome<T extends EventType>(type: T, payload: EventPayloads[T]): Promise<void> | undefined {
    this.journal.emit(type, this.spec.path, payload);
    return this.spec.external ? this.journal.commit({ durable: false }) : undefined;
  }
}
