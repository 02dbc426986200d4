/**
 * The ids `generateId()` derives (eval/builtins.ts, through steps/step-runtime.ts's inputs): the
 * `n`th id the step at `stepPath` of run `runId` asks for is the first 128 bits of
 * sha256(run, path, n), written as a UUID. A function of the walk, never random: replay (and
 * verify) walk the same steps in the same order and get the same ids; another run gets others,
 * which the crash lab recognises by deriving them again (server/lab-inputs.ts).
 */
import { createHash } from 'node:crypto';

export function derivedId(runId: string, stepPath: string, n: number): string {
  const h = createHash('sha256').update(`${runId}\u0000${stepPath}\u0000${n}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
