/**
 * "Did you mean `x`?" — picks the declared name closest to a misspelled one.
 *
 * A candidate qualifies when it equals the name ignoring case, or when its Damerau-Levenshtein
 * distance (optimal string alignment: insert, delete, substitute, swap two neighbours) is at most
 * max(1, floor(length / 3)). The answer is deterministic: the smallest distance wins (a
 * case-only difference counts as the closest), ties go to the alphabetically first candidate, so
 * the same mistake gives the same help whatever order the declarations came in.
 */

export function suggest(name: string, candidates: Iterable<string>): string | undefined {
  if (name.length === 0) return undefined;
  const limit = Math.max(1, Math.floor(name.length / 3));
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestScore = Infinity;
  for (const candidate of candidates) {
    if (candidate === name || candidate.length === 0) continue;
    let score: number;
    if (candidate.toLowerCase() === lower) {
      score = 0;
    } else {
      if (Math.abs(candidate.length - name.length) > limit) continue;
      score = editDistance(name, candidate, limit);
      if (score > limit) continue;
    }
    if (score < bestScore || (score === bestScore && best !== undefined && candidate < best)) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}

/** Help text for an unknown name, or undefined when nothing is close. */
export function didYouMean(name: string, candidates: Iterable<string>): string | undefined {
  const match = suggest(name, candidates);
  return match === undefined ? undefined : `did you mean \`${match}\`?`;
}

/**
 * Optimal-string-alignment distance between `a` and `b`; returns `limit + 1` as soon as every
 * cell of a row exceeds `limit`, since the caller only cares whether it is within the limit.
 */
export function editDistance(a: string, b: string, limit = Infinity): number {
  const n = a.length;
  const m = b.length;
  if (n === 0) return m;
  if (m === 0) return n;
  let prev2 = new Array<number>(m + 1).fill(0);
  let prev = new Array<number>(m + 1);
  let cur = new Array<number>(m + 1);
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    let rowMin = i;
    const ai = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const bj = b.charCodeAt(j - 1);
      const cost = ai === bj ? 0 : 1;
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === bj) {
        v = Math.min(v, prev2[j - 2]! + 1);
      }
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return limit + 1;
    const spare = prev2;
    prev2 = prev;
    prev = cur;
    cur = spare;
  }
  return prev[m]!;
}
