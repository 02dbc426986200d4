/**
 * Effects: the operations of a run that leave the pure walk, each journaled as intent → outcome.
 * This table is the one definition of what an effect is and which crash points it passes; the
 * crash injector (crash-points.ts) and the studio's crash-point fold (inspect/crash-points.ts)
 * both read it, so `POINT:N` names the same place to both. A new effect kind is one row here.
 *
 *   kind            one occurrence is                              passes, in order
 *   request         one HTTP request (any method), per page        before-effect, after-effect
 *   table-write     one batch of writes to a memory/sql/nosql      before-effect, mid-store
 *                   store (a store step, or one streamed page)
 *   external-write  one batch of writes to a file/postgrest store  before-effect, mid-store, after-effect
 *   suspension      a pause or a wait reaching its suspension      before-wait
 *   checkpoint      a sync checkpoint advanced (per step and key)  after-checkpoint
 *
 * A request that changes the world (POST/PUT/PATCH/DELETE) and an external write are *external*
 * effects: their intent is fsync'd before they leave the process (the output-commit rule), and a
 * mutating request carries its effect id as Idempotency-Key. A GET and a table write are effects
 * too — they can be interrupted, so they have crash points — but nothing outside sees them.
 *
 * Counting: `POINT:N` is the Nth distinct occurrence (keyed by effect id, batch id or checkpoint
 * key) that passes POINT over the run's whole progress. A pass while replaying counts but cannot
 * kill, so POINT:N names one place in the run however often it crashed and resumed before it.
 */
import type { StoredEvent } from '../log/events.js';

export const CRASH_POINTS = ['before-effect', 'after-effect', 'mid-store', 'after-checkpoint', 'before-wait'] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

export const EFFECT_KINDS = {
  request: { points: ['before-effect', 'after-effect'], what: 'an HTTP request (any method), one per page' },
  'table-write': { points: ['before-effect', 'mid-store'], what: 'a batch of writes to a memory, sql or nosql store' },
  'external-write': { points: ['before-effect', 'mid-store', 'after-effect'], what: 'a batch of writes to a file or postgrest store' },
  suspension: { points: ['before-wait'], what: 'a pause or a wait suspending the run' },
  checkpoint: { points: ['after-checkpoint'], what: 'a sync checkpoint advanced' },
} as const satisfies Record<string, { points: readonly CrashPoint[]; what: string }>;

export type EffectKind = keyof typeof EFFECT_KINDS;

/** What each crash point means, for `--help`, the README and the studio (one wording). */
export const CRASH_POINT_HELP: Record<CrashPoint, string> = {
  'before-effect': 'about to send a request or write a store batch',
  'after-effect': 'a request answered (or a file/postgrest batch written), its outcome not yet in the log',
  'mid-store': 'inside a store batch, before it commits',
  'after-checkpoint': 'a sync checkpoint committed, before the next step',
  'before-wait': 'a pause or wait recorded, before the run suspends',
};

export function kindPasses(kind: EffectKind, point: CrashPoint): boolean {
  return (EFFECT_KINDS[kind].points as readonly CrashPoint[]).includes(point);
}

/**
 * The passes a recorded event proves the run made: what a run of the same mission and data
 * reaches again. Read by the crash-point fold; the steps pass the same points live, through the
 * injector, with the same keys (`batch` marks the first write of a table batch, format 2 on).
 */
export function passesRecordedBy(
  event: StoredEvent,
  log: { format: number; externalBatchAt: (stepPath: string) => boolean },
): { point: CrashPoint; key: string }[] {
  switch (event.type) {
    case 'http.request': {
      const id = event.payload.effectId;
      return [{ point: 'before-effect', key: id }];
    }
    case 'http.response':
      return [{ point: 'after-effect', key: event.payload.effectId }];
    case 'http.error':
      // A circuit breaker's refusal stands where a request would: nothing was sent or answered.
      return event.payload.error.code === 'circuit-open' ? [] : [{ point: 'after-effect', key: event.payload.effectId }];
    case 'store.intent': {
      const { effectId: id, keys } = event.payload;
      // An empty batch writes nothing: it is never inside a store transaction.
      return keys.length === 0 ? [{ point: 'before-effect', key: id }] : [
        { point: 'before-effect', key: id },
        { point: 'mid-store', key: id },
      ];
    }
    case 'store.write': {
      const payload = event.payload;
      if (log.externalBatchAt(event.stepPath)) return payload.batch ? [{ point: 'after-effect', key: payload.batch }] : [];
      // Only a batch's first write names it; logs before batch markers (format 1): one per step path.
      const key = payload.batch ?? (log.format < 2 ? `path:${event.stepPath}` : undefined);
      if (key === undefined) return [];
      return [
        { point: 'before-effect', key },
        { point: 'mid-store', key },
      ];
    }
    case 'checkpoint.advanced':
      return [{ point: 'after-checkpoint', key: `${event.stepPath}:${event.payload.key}` }];
    case 'pause.created':
      return [{ point: 'before-wait', key: event.payload.pauseId }];
    case 'wait.registered':
      return [{ point: 'before-wait', key: event.payload.waitId }];
    default:
      return [];
  }
}
