/**
 * What legitimately differs between two runs of one mission on the same data: the run id (and
 * ids derived from it) and each value `now()`/`random()` returned to that run. The crash lab takes
 * them out before comparing what the two runs stored (crash-lab.ts) and what they sent
 * (crash-lab-proxy.ts): the run id becomes a placeholder, and a value equal to one of the run's
 * recorded inputs becomes the place the input was asked for (step path and occurrence). A value
 * computed from such an input (a formatted date) is compared as it is.
 */
import type { StoredEvent } from '../log/events.js';

const VARYING_INPUTS = new Set(['now', 'timestamp', 'random', 'jitter']);

/** A run's varying inputs: each recorded value's JSON (and a `now()`'s ISO form) → its place. */
export function varyingInputs(events: readonly StoredEvent[]): Map<string, string> {
  const inputs = new Map<string, string>();
  const seen = new Map<string, number>();
  for (const event of events) {
    if (event.type !== 'value.recorded' || !VARYING_INPUTS.has(event.payload.source)) continue;
    const n = (seen.get(event.stepPath) ?? 0) + 1;
    seen.set(event.stepPath, n);
    const place = `<${event.payload.source} at ${event.stepPath}#${n}>`;
    const { value } = event.payload;
    const forms = [JSON.stringify(value)];
    // `now()` is recorded as epoch ms and reaches a record as the ISO string it evaluates to.
    if (typeof value === 'number' && event.payload.source !== 'random' && Number.isFinite(new Date(value).getTime())) forms.push(JSON.stringify(new Date(value).toISOString()));
    for (const form of forms) if (!inputs.has(form)) inputs.set(form, place);
  }
  return inputs;
}

/** `value` with `runId` replaced by `<run>` in strings and each of `inputs` by its place. */
export function withoutRunSpecifics(value: unknown, runId: string, inputs: ReadonlyMap<string, string>): unknown {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    if (typeof v === 'string' && runId !== '' && v.includes(runId)) return v.split(runId).join('<run>');
    return inputs.get(JSON.stringify(v)) ?? v;
  };
  return walk(value);
}
