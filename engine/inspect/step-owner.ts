/**
 * Which action a step belongs to, from its step path.
 *
 * Step paths start with the action's name (the executor builds them from the program: action,
 * step index, loop identity), followed by a separator. In a parallel stage the events of several
 * actions interleave, so "the last action started" is not enough; the path decides, and the last
 * action started is only the fallback for paths that name none of the running actions.
 */

/** `/` step, `#` visit, `~` attempt (journal/step-path.ts); `.` and `:` for hand-written logs. */
const SEPARATORS = new Set(['/', '#', '~', '.', '[', ':', '>', ' ']);

/** The longest name in `actions` that `stepPath` starts with (followed by a separator or the end). */
export function ownerAction(stepPath: string, actions: Iterable<string>, fallback: string | null): string | null {
  let best: string | null = null;
  for (const action of actions) {
    if (!stepPath.startsWith(action)) continue;
    const next = stepPath.charAt(action.length);
    if (next !== '' && !SEPARATORS.has(next)) continue;
    if (best === null || action.length > best.length) best = action;
  }
  return best ?? fallback;
}
