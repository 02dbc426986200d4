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

/**
 * A concurrent loop or parallel stage, as the journal sees it: which of its branches a step path
 * belongs to (a key naming the branch), or undefined for a path outside it.
 */
export interface ConcurrentConstruct {
  branchOf(stepPath: string): string | undefined;
}

/** The iterations of the loop at `loopPath`: a branch is `loopPath[i]`. */
export function loopConstruct(loopPath: string): ConcurrentConstruct {
  const prefix = `${loopPath}[`;
  return {
    branchOf(stepPath) {
      if (!stepPath.startsWith(prefix)) return undefined;
      const end = stepPath.indexOf(']', prefix.length);
      return end < 0 ? undefined : stepPath.slice(0, end + 1);
    },
  };
}

/** The actions of a parallel stage: a branch is one action, every visit and attempt of it. */
export function parallelConstruct(actions: readonly string[]): ConcurrentConstruct {
  const names = new Set(actions);
  return {
    branchOf(stepPath) {
      const slash = stepPath.indexOf('/');
      const segment = slash < 0 ? stepPath : stepPath.slice(0, slash);
      const name = segment.replace(/[#~].*$/, '');
      return names.has(name) ? name : undefined;
    },
  };
}
