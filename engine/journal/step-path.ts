/**
 * Stable step paths: the identity of one execution of one step, derived from the program and
 * from recorded data only — never from timing or a counter that could shift between the original
 * run and a replay.
 *
 *   Orders/3                 4th step of action Orders (first visit, first attempt)
 *   Poll~2/0                 1st step of Poll's 2nd attempt (a `retry` directive re-ran it)
 *   Recover#2/1              2nd step of the 2nd visit to Recover (a `jump` came back to it)
 *   Orders/3[2]/1            2nd step of the body of the `for` at step 3, iteration index 2
 *   Orders/4>1/0             1st step of the body of arm 1 of the `match` at step 4
 *   Orders/5!/0              1st step of the `or { … }` fallback of the `validate` at step 5
 *   :stage/1#2               the 2nd stage of the pipeline, on its 2nd visit (a `jump` back)
 *
 * Iterations are identified by their index in the collection, which is itself recorded (it came
 * from a recorded response, store read or value), hence stable on replay.
 */
export function actionPath(action: string, visit: number, attempt: number): string {
  return action + (visit > 1 ? `#${visit}` : '') + (attempt > 1 ? `~${attempt}` : '');
}

export function stepPath(parent: string, index: number): string {
  return `${parent}/${index}`;
}

export function iterationPath(forStep: string, index: number): string {
  return `${forStep}[${index}]`;
}

export function armPath(matchStep: string, arm: number): string {
  return `${matchStep}>${arm}`;
}

export function fallbackPath(validateStep: string): string {
  return `${validateStep}!`;
}

/** A pipeline stage: `:stage/<index>`, and `#<visit>` when a jump came back to it. */
export function stagePath(index: number, visit: number): string {
  return `:stage/${index}` + (visit > 1 ? `#${visit}` : '');
}
