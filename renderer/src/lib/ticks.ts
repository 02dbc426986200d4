/**
 * Ruler ticks for the timeline: a "nice" step (1, 2 or 5 × 10^k) giving roughly one label per
 * `targetPx` pixels, and the tick positions inside a window.
 */
export function niceStep(span: number, widthPx: number, targetPx = 110): number {
  if (span <= 0 || widthPx <= 0) return 1;
  const raw = (span * targetPx) / widthPx;
  const pow = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * pow >= raw) return m * pow;
  return 10 * pow;
}

export function ticks(from: number, to: number, step: number, limit = 200): number[] {
  const out: number[] = [];
  for (let t = Math.ceil(from / step) * step; t <= to && out.length < limit; t += step) out.push(t);
  return out;
}
