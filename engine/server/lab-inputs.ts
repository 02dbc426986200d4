/**
 * What legitimately differs between two runs of one mission on the same data: the run id (and
 * ids derived from it) and each value `now()`/`random()` returned to that run. The crash lab takes
 * them out before comparing what the two runs stored (crash-lab.ts) and what they sent
 * (crash-lab-proxy.ts): the run id becomes a placeholder, and a value equal to one of the run's
 * recorded inputs becomes `<now()>` or `<random()>`. Not the place it was asked for: two calls in
 * one millisecond return one value, so a value cannot tell its place, and a body built from the
 * second call would read as the first call's in one run and not in the other (a false mismatch
 * on every fast loop). A value computed from such an input (a formatted date) is compared as it is.
 */
import type { StoredEvent } from '../log/events.js';

const VARYING_INPUTS = new Set(['now', 'timestamp', 'random', 'jitter']);

/** A run's varying inputs: each recorded value's JSON (and a `now()`'s ISO form) → its placeholder. */
export function varyingInputs(events: readonly StoredEvent[]): Map<string, string> {
  const inputs = new Map<string, string>();
  for (const event of events) {
    if (event.type !== 'value.recorded' || !VARYING_INPUTS.has(event.payload.source)) continue;
    const placeholder = `<${event.payload.source}()>`;
    const { value } = event.payload;
    const forms = [JSON.stringify(value)];
    // `now()` is recorded as epoch ms and reaches a record as the ISO string it evaluates to.
    if (typeof value === 'number' && event.payload.source !== 'random' && Number.isFinite(new Date(value).getTime())) forms.push(JSON.stringify(new Date(value).toISOString()));
    for (const form of forms) if (!inputs.has(form)) inputs.set(form, placeholder);
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
