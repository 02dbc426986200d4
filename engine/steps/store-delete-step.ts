/**
 * `delete S[k]` where `S` is a declared store (lang/store-delete.ts): removes the record under
 * key `k` from `S`. A store effect like a write, through the same batch path (store-step.ts
 * writeRecords) on every store kind: a one-write batch with `op: 'delete'`, recorded as a
 * `store.write` event (record null, `removed` whether a record was there) — committed with the
 * table change for memory/sql/nosql, after a durable intent for file/postgrest — with the same
 * crash points, replay and verify. Deleting an absent key is no error (`removed: false`).
 * The key follows the rule of a store step's `key:` (1 and "1" are one key; null is an error).
 */
import { evaluate } from '../eval/evaluate.js';
import type { StoreDelete } from '../lang/store-delete.js';
import { effectId } from '../journal/effect-id.js';
import { storeKey } from '../stores/keys.js';
import { evalContext, type Frame, type StepOutcome, type StepRuntime } from './step-runtime.js';
import { writeRecords } from './store-step.js';

export async function runStoreDelete(removal: StoreDelete, path: string, frame: Frame, rt: StepRuntime): Promise<StepOutcome> {
  const value = evaluate(removal.key, evalContext(rt, frame, path));
  const id = effectId(rt.journal.identityRunId(path), path, 'store', 'delete');
  const key = storeKey({}, 0, id, { value, step: path });
  await writeRecords(removal.store, [{ effectId: id, key, record: {}, op: 'delete' }], path, frame, rt);
  return {};
}
