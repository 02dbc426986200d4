/**
 * State at a seq, cut to what a screen can show: every array longer than `limit` in the response,
 * the variables, the event's payload or a failure's request and answer, and every store's record list longer than `limit`, is
 * sent as a window of `limit` items (the first, unless the request asks for another), and the
 * state lists each cut in `slices` (where, path, from, count, total). So a step of the scrubber
 * on a run whose `response` is 25k records ships a few hundred records, not megabytes; the studio
 * asks for another window when the user pages through. Pure: the fold's state is not changed.
 * Strings longer than TEXT_LIMIT are cut the same way, in characters (`unit: 'chars'`): a state
 * holding one 20 MB string froze the page for ~40 s drawing it whole.
 *
 * Paths use the tree view's syntax: `$` is the value itself, `$.items`, `$[3].lines`.
 */
import type { RunState } from './state-at-data.js';

/** Which window of a big array to send: `where` is 'response', 'variables', 'event' or 'store:NAME'. */
export interface ValueWindow {
  where: string;
  /** `$` (the value itself), `$.items`, `$[3].lines`. */
  path: string;
  from: number;
}

/** An array sent as items `from`..`from + count - 1` of `total`; with `unit: 'chars'`, a string's characters. */
export interface ValueSlice extends ValueWindow {
  count: number;
  total: number;
  unit?: 'chars';
}

/** Items per window: a few screens of rows. */
export const SLICE_LIMIT = 500;
/** Characters per window of a long string: a few screens of text. */
export const TEXT_LIMIT = 4096;
/** How deep arrays are looked for inside a value (a response's records rarely nest deeper). */
const MAX_DEPTH = 4;

export function sliceState(state: RunState, windows: readonly ValueWindow[] = [], limit = SLICE_LIMIT): RunState {
  const slices: ValueSlice[] = [];
  const startOf = (where: string, path: string, total: number, size = limit): number => {
    const asked = windows.find((w) => w.where === where && w.path === path)?.from ?? 0;
    // A window past the end (the value shrank while scrubbing) shows the last full window.
    return Math.max(0, Math.min(asked, total - size));
  };
  const cut = (where: string, value: unknown): unknown => sliceValue(value, '$', 0, where, limit, startOf, slices);

  const response = cut('response', state.response);
  const variables = cut('variables', state.variables) as Record<string, unknown>;
  const event = state.event === null ? null : { ...state.event, payload: cut('event', state.event.payload) };
  // A store's record list is cut like any array (path `$`); inside it, record i is `$[i].record`.
  const stores = state.stores.map((store) => {
    const records = cut(`store:${store.name}`, store.records) as typeof store.records;
    return records === store.records ? store : { ...store, records };
  });
  // A failure's request and answer bodies are what the API sent: as big as any response.
  const failure = state.failure === undefined ? undefined : (cut('failure', state.failure) as RunState['failure']);
  return { ...state, response, variables, event: event as RunState['event'], stores, slices, ...(failure ? { failure } : {}) };
}

function sliceValue(
  value: unknown,
  path: string,
  depth: number,
  where: string,
  limit: number,
  startOf: (where: string, path: string, total: number, size?: number) => number,
  slices: ValueSlice[],
): unknown {
  if (typeof value === 'string' && value.length > TEXT_LIMIT) {
    const from = startOf(where, path, value.length, TEXT_LIMIT);
    let to = from + TEXT_LIMIT;
    // Not between the halves of a surrogate pair.
    if (/[\uD800-\uDBFF]/.test(value.charAt(to - 1))) to -= 1;
    slices.push({ where, path, from, count: to - from, total: value.length, unit: 'chars' });
    return value.slice(from, to);
  }
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let items: unknown[] = value;
    let from = 0;
    if (value.length > limit) {
      from = startOf(where, path, value.length);
      items = value.slice(from, from + limit);
      slices.push({ where, path, from, count: items.length, total: value.length });
    }
    // Copy on write: an array is rebuilt only when one of its items was cut below it.
    let out: unknown[] | null = items === value ? null : items;
    for (let i = 0; i < items.length; i += 1) {
      const child = items[i];
      const next = sliceValue(child, `${path}[${from + i}]`, depth + 1, where, limit, startOf, slices);
      if (next !== child) {
        out ??= items.slice();
        out[i] = next;
      }
    }
    return out ?? value;
  }
  let out: Record<string, unknown> | null = null;
  for (const [key, child] of Object.entries(value)) {
    const next = sliceValue(child, childPath(path, key), depth + 1, where, limit, startOf, slices);
    if (next !== child) {
      out ??= { ...(value as Record<string, unknown>) };
      out[key] = next;
    }
  }
  return out ?? value;
}

/** `$.name`, or `$["odd key"]` for a key that is not an identifier (as the tree view names them). */
function childPath(parent: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}
