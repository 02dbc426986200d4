/**
 * The timeline's geometry, one rule for both sides: the engine's window index
 * (timeline-window.ts), which merges a window's bars before sending it, and the renderer's lanes
 * (renderer/src/lib/timeline-index.ts), which merge what is loaded at the zoom being drawn. Where
 * a bar or marker sits on an axis, how wide a bar is drawn, when neighbours share pixels and
 * merge, how the lanes are sorted and indexed for binary search — if the two sides disagreed, the
 * engine would merge bars the renderer then draws apart, or the other way round.
 *
 * Pure: it imports nothing but sorted-search.ts and types, so the renderer's bundle carries it
 * (the boundary tests hold both files to that). Positions are in axis units: seq, or ms since the
 * run's first event (`t0`).
 */
import type { TimelineAxis } from './timeline-window.js';
import { lowerBound } from './sorted-search.js';

/** Bars narrower than this many pixels merge into a neighbour at their depth that they touch. */
export const MERGE_BELOW_PX = 4;
/** Markers of one kind (and lane) closer than this many pixels merge. */
export const MARKER_MERGE_PX = 6;
/** The narrowest a bar is drawn, so a one-event step stays visible. */
export const MIN_BAR_PX = 2;
/** The widest window the engine answers, in pixels. */
export const MAX_WINDOW_PX = 100_000;

/** What the geometry needs of a bar: its extent on both axes. */
export interface BarSpan {
  startSeq: number;
  endSeq: number;
  startAt: number;
  endAt: number;
}

export interface MarkerSpot {
  seq: number;
  at: number;
  kind: string;
}

export function barStart(bar: BarSpan, axis: TimelineAxis, t0: number): number {
  return axis === 'time' ? bar.startAt - t0 : bar.startSeq;
}

export function barEnd(bar: BarSpan, axis: TimelineAxis, t0: number): number {
  return axis === 'time' ? bar.endAt - t0 : bar.endSeq;
}

export function markerPos(marker: Pick<MarkerSpot, 'seq' | 'at'>, axis: TimelineAxis, t0: number): number {
  return axis === 'time' ? marker.at - t0 : marker.seq;
}

/** The whole run on each axis: seq [0, lastSeq + 1], time [0, ms from first to last event]; never empty. */
export function runExtent(run: { startAt: number; endAt: number; lastSeq: number }): { time: [number, number]; seq: [number, number] } {
  return {
    time: [0, Math.max(run.endAt, run.startAt + 1) - run.startAt],
    seq: [0, Math.max(1, run.lastSeq) + 1],
  };
}

/** A lane's order: by start, an enclosing bar before the bars it encloses. */
export function compareBars(a: BarSpan, b: BarSpan): number {
  return a.startSeq - b.startSeq || b.endSeq - a.endSeq;
}

/**
 * Running maximum of the ends of bars sorted by `compareBars`, per axis. Ends alone are not
 * sorted (bars nest); their running maximum is, so the first bar that can reach a window is found
 * by binary search.
 */
export function runningMaxEnds(bars: readonly BarSpan[], t0: number): { seq: number[]; time: number[] } {
  const seq: number[] = [];
  const time: number[] = [];
  let maxSeq = -Infinity;
  let maxTime = -Infinity;
  for (const bar of bars) {
    maxSeq = Math.max(maxSeq, bar.endSeq);
    maxTime = Math.max(maxTime, bar.endAt - t0);
    seq.push(maxSeq);
    time.push(maxTime);
  }
  return { seq, time };
}

/** A lane as both sides index it: bars sorted by `compareBars`, each one's depth, `runningMaxEnds`. */
export interface LaneBars<B extends BarSpan> {
  bars: readonly B[];
  depths: readonly number[];
  maxEnd: { seq: readonly number[]; time: readonly number[] };
}

/**
 * The bars of a lane with start <= to and end >= from, in order, each placed on pixels
 * (`pxPerUnit`; null: not drawn, so nothing merges): a bar narrower than MERGE_BELOW_PX that
 * touches the last one placed at its depth is merged into it (`merge`, with the merged extent's
 * right edge) instead of placed (`open`).
 */
export function placeLaneBars<B extends BarSpan, P>(
  lane: LaneBars<B>,
  axis: TimelineAxis,
  t0: number,
  from: number,
  to: number,
  pxPerUnit: number | null,
  place: { open(bar: B, depth: number, left: number, width: number): P; merge(into: P, bar: B, right: number): void },
): P[] {
  const out: P[] = [];
  const lastAtDepth: { placed: P; right: number }[] = [];
  for (let i = lowerBound(lane.maxEnd[axis], from, (v) => v); i < lane.bars.length; i++) {
    const bar = lane.bars[i]!;
    const start = barStart(bar, axis, t0);
    if (start > to) break;
    const end = barEnd(bar, axis, t0);
    if (end < from) continue;
    const depth = lane.depths[i] ?? 0;
    if (pxPerUnit === null) {
      out.push(place.open(bar, depth, 0, 0));
      continue;
    }
    const left = (start - from) * pxPerUnit;
    // A seq bar covers whole events: [startSeq, endSeq + 1).
    const width = Math.max(MIN_BAR_PX, ((axis === 'seq' ? end + 1 : end) - start) * pxPerUnit);
    const prev = lastAtDepth[depth];
    if (prev !== undefined && left < prev.right + 1 && width < MERGE_BELOW_PX) {
      prev.right = Math.max(prev.right, left + width);
      place.merge(prev.placed, bar, prev.right);
      continue;
    }
    const placed = place.open(bar, depth, left, width);
    lastAtDepth[depth] = { placed, right: left + width };
    out.push(placed);
  }
  return out;
}

/**
 * The markers (sorted by seq; in the time axis seq order is time order) with from <= position <=
 * to, placed on pixels; one closer than MARKER_MERGE_PX to the last placed of its kind is merged
 * into it. `pxPerUnit` null: none merges.
 */
export function placeLaneMarkers<M extends MarkerSpot, P>(
  markers: readonly M[],
  axis: TimelineAxis,
  t0: number,
  from: number,
  to: number,
  pxPerUnit: number | null,
  place: { open(marker: M, left: number): P; merge(into: P, marker: M): void },
): P[] {
  const pos = (m: M) => markerPos(m, axis, t0);
  const out: P[] = [];
  const lastByKind = new Map<string, { placed: P; left: number }>();
  for (let i = lowerBound(markers, from, pos); i < markers.length; i++) {
    const marker = markers[i]!;
    const p = pos(marker);
    if (p > to) break;
    if (pxPerUnit === null) {
      out.push(place.open(marker, 0));
      continue;
    }
    const left = (p - from) * pxPerUnit;
    const prev = lastByKind.get(marker.kind);
    if (prev !== undefined && left - prev.left < MARKER_MERGE_PX) {
      place.merge(prev.placed, marker);
      continue;
    }
    const placed = place.open(marker, left);
    lastByKind.set(marker.kind, { placed, left });
    out.push(placed);
  }
  return out;
}
