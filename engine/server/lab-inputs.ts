/**
 * What legitimately differs between two runs of one mission on the same data: the run id, each
 * value `now()`/`random()` returned to that run, and each id `generateId()` derived from the run
 * (journal/derived-id.ts). The crash lab takes them out before comparing what the two runs stored
 * (crash-lab.ts) and what they sent (crash-lab-proxy.ts):
 * - the run id becomes `<run>`;
 * - a value equal to one of the run's recorded now()/random() inputs becomes `<now()>` or
 *   `<random()>`. Not the place it was asked for: two calls in one millisecond return one value,
 *   so a value cannot tell its place, and a body built from the second call would read as the
 *   first call's in one run and not in the other (a false mismatch on every fast loop);
 * - such a value inside a text (`concat(.id, "@", now())`: a now()'s ISO form or its epoch
 *   milliseconds, a random()'s digits) is taken out of it the same way: a key or a note built
 *   from the clock read as a store difference, and the lab blamed the crash for "not
 *   exactly-once" (probe 111 K1);
 * - a generated id, anywhere in a string, becomes `<generateId() at PATH #n>`: an id does tell
 *   its place (it is derived from it), so two runs compare equal only where each generated its
 *   id at the same step, as the same step's nth.
 * A value computed from such an input (a formatted date, a sum, a hash of an id) is compared as it is.
 *
 * A run the lab's proxy served the reference's answers (the armed run) can hold the reference's
 * values too, where the API echoed what the reference sent: it is normalised with its own
 * specifics first, then the reference's.
 */
import type { StoredEvent } from '../log/events.js';
import { derivedId } from '../journal/derived-id.js';

const VARYING_INPUTS = new Set(['now', 'timestamp', 'random', 'jitter']);
/**
 * How many ids one step path is searched for. A step asks for one id per `generateId()` it
 * evaluates, counted per loop iteration (its path names the iteration), so past this a step that
 * retries many times may leave ids unrecognised, which then compare as they are: a difference
 * the lab reports, never one it hides.
 */
const IDS_PER_PATH = 32;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** What of a text may be a recorded input written into it: an ISO instant, or a number's digits (looked up whole). */
const EMBEDDED = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z|\d+(?:\.\d+)?(?:e-\d+)?/g;
/** Shorter digits (a random() of 0.5) are too likely to be some other number of the text to be taken out of it. */
const MIN_EMBEDDED_DIGITS = 6;

/**
 * One run's specifics, from its log: `add` its events in order (a live run's as they come).
 * Ids are derived for the step paths the log names (a step's events carry its path; under
 * `trace: full` pure steps log theirs too), the first IDS_PER_PATH of each, and only once a
 * UUID-shaped text is looked up: most runs generate none.
 */
export class RunSpecifics {
  /** Each recorded now()/random() value's JSON (and a `now()`'s ISO form) → its placeholder. */
  readonly inputs = new Map<string, string>();
  /** The same values as they read inside a text (an ISO instant, a number's digits) → its placeholder. */
  readonly embedded = new Map<string, string>();
  /** The last event added (a live run's log is read again from the start). */
  lastSeq = 0;
  private readonly paths: string[] = [];
  private readonly pathSet = new Set<string>();
  private derivedPaths = 0;
  private readonly ids = new Map<string, string>();

  constructor(
    readonly runId: string,
    events: readonly StoredEvent[] = [],
  ) {
    this.add(events);
  }

  add(events: readonly StoredEvent[]): void {
    for (const event of events) {
      if (event.seq <= this.lastSeq) continue;
      this.lastSeq = event.seq;
      if (event.stepPath !== '' && !this.pathSet.has(event.stepPath)) {
        this.pathSet.add(event.stepPath);
        this.paths.push(event.stepPath);
      }
      if (event.type !== 'value.recorded' || !VARYING_INPUTS.has(event.payload.source)) continue;
      const placeholder = `<${event.payload.source}()>`;
      const { value } = event.payload;
      const forms = [JSON.stringify(value)];
      const inText: string[] = [];
      if (typeof value === 'number') {
        if (String(value).replace(/\D/g, '').length >= MIN_EMBEDDED_DIGITS) inText.push(String(value));
        // `now()` is recorded as epoch ms and reaches a record as the ISO string it evaluates to.
        if (event.payload.source !== 'random' && Number.isFinite(new Date(value).getTime())) {
          const iso = new Date(value).toISOString();
          forms.push(JSON.stringify(iso));
          inText.push(iso);
        }
      }
      for (const form of forms) if (!this.inputs.has(form)) this.inputs.set(form, placeholder);
      for (const form of inText) if (!this.embedded.has(form)) this.embedded.set(form, placeholder);
    }
  }

  /** The placeholder of an id this run's generateId() derived, else undefined. */
  generatedId(id: string): string | undefined {
    for (; this.derivedPaths < this.paths.length; this.derivedPaths++) {
      const path = this.paths[this.derivedPaths]!;
      for (let n = 0; n < IDS_PER_PATH; n++) this.ids.set(derivedId(this.runId, path, n), `<generateId() at ${path} #${n}>`);
    }
    return this.ids.get(id);
  }
}

/** `value` with each of `runs`' specifics taken out (the first run's first, see the file header). */
export function withoutRunSpecifics(value: unknown, runs: readonly RunSpecifics[]): unknown {
  const text = (s: string): string => {
    let out = s;
    for (const run of runs) if (run.runId !== '' && out.includes(run.runId)) out = out.split(run.runId).join('<run>');
    if (out.includes('-')) {
      out = out.replace(UUID, (id) => {
        for (const run of runs) {
          const placeholder = run.generatedId(id);
          if (placeholder !== undefined) return placeholder;
        }
        return id;
      });
    }
    // After the ids: digits inside an id are the id's, never a recorded number's.
    if (!runs.some((run) => run.embedded.size > 0)) return out;
    return out.replace(EMBEDDED, (form) => {
      for (const run of runs) {
        const placeholder = run.embedded.get(form);
        if (placeholder !== undefined) return placeholder;
      }
      return form;
    });
  };
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    const key = JSON.stringify(v);
    for (const run of runs) {
      const placeholder = run.inputs.get(key);
      if (placeholder !== undefined) return placeholder;
    }
    return typeof v === 'string' ? text(v) : v;
  };
  return walk(value);
}
