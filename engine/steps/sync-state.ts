/**
 * `sync_state`, the checkpoint store that upstream's missions read and write without declaring it
 * (docs/language.md, "sync_state"). It is the store of sync checkpoints that `since: lastSync`
 * uses, seen as key → instant:
 * - `sync_state.get("k")` is checkpoint `k` as an ISO instant, or null before the first one. The
 *   journal reads it before the step runs and records it (`value.recorded`, source `last-sync`).
 * - `store { "k": now() } -> sync_state { key: "k" }` sets checkpoint `k` to the record's one
 *   value (an ISO instant or epoch milliseconds). It advances as every checkpoint does: at the
 *   end of the action, after every write the action made, and not when the action fails or a
 *   loop of it tolerated a failure, before the write or after (checkpoints.ts).
 * - Under a --source that points a source away from its base, both read and advance that run's
 *   URLs' checkpoints, as `since` fetches do (HttpRuntime.syncStateApi).
 */
import type { StoreStep } from '../lang/ast.js';
import { evaluate } from '../eval/evaluate.js';
import { dateStringToMs } from '../eval/iso-dates.js';
import { StepError } from './signals.js';
import { evalContext, type Frame, type StepRuntime } from './step-runtime.js';
import { pendSetCheckpoint } from './checkpoints.js';
import { SET_CHECKPOINT_HELD_FORMAT } from '../log/events.js';
import type { StepOutcome } from './step-runtime.js';

export async function storeSyncState(step: StoreStep, path: string, frame: Frame, rt: StepRuntime): Promise<StepOutcome> {
  const ctx = evalContext(rt, frame, path);
  const record = evaluate(step.source, ctx);
  const key = step.key ? evaluate(step.key, { ...ctx, current: record }) : undefined;
  if (typeof key !== 'string' || key === '') {
    throw new StepError('sync-state', `store -> sync_state at ${path} needs \`{ key: "name" }\`: the checkpoint it sets`);
  }
  const values = record !== null && typeof record === 'object' && !Array.isArray(record) ? Object.values(record) : [];
  const at = values.length === 1 ? instant(values[0]) : undefined;
  if (at === undefined) {
    throw new StepError(
      'sync-state',
      `store -> sync_state at ${path} needs a record with one value, the instant of checkpoint "${key}" (an ISO timestamp or epoch milliseconds), e.g. { "${key}": now() }`,
    );
  }
  const { api } = rt.http.syncStateApi();
  pendSetCheckpoint(frame.checkpoints, { key, syncedAt: at, ...(api !== undefined ? { api } : {}) }, rt.http.logFormat >= SET_CHECKPOINT_HELD_FORMAT);
  return {};
}

function instant(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  // Text without a zone is UTC, as everywhere in the engine (dateStringToMs), not the machine's zone.
  return dateStringToMs(value.trim());
}
