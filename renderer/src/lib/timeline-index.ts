/**
 * Geometry of the timeline, independent of React: bars and markers grouped per lane and sorted,
 * so a lane can find the ones inside the visible window by binary search instead of scanning a
 * 100k-event run on every frame. The x axis is either wall time (ms since the run started) or
 * seq — the latter keeps a run with a 30-day pause readable.
 */
import type { TimelineBar, TimelineMarker, TimelineModel } from './protocol.js';

export type TimelineAxis = 'time' | 'seq';

export interface LaneIndex {
  id: string;
  label: string;
  stage: number;
  bars: TimelineBar[];
  /** Nesting depth of each bar (a `for` step's bar encloses its body's bars). */
  depths: number[];
  /** Running maximum of bar ends, per axis: monotonic, so it can be binary-searched. */
  maxEnd: { time: number[]; seq: number[] };
  markers: TimelineMarker[];
  /** Deepest nesting in the lane (0 when no bar encloses another): sets the lane's height. */
  maxDepth: number;
}

export interface TimelineIndex {
  lanes: LaneIndex[];
  /** Markers with no lane (run-level: crash, resume, …), shown on their own row. */
  runMarkers: TimelineMarker[];
  extent: { time: [number, number]; seq: [number, number] };
}

export const RUN_LANE_ID = '__run__';

export function barStart(bar: TimelineBar, axis: TimelineAxis, t0: number): number {
  return axis === 'time' ? bar.startAt - t0 : bar.startSeq;
}

export function barEnd(bar: TimelineBar, axis: TimelineAxis, t0: number): number {
  return axis === 'time' ? bar.endAt - t0 : bar.endSeq;
}

export function markerPos(marker: TimelineMarker, axis: TimelineAxis, t0: number): number {
  return axis === 'time' ? marker.at - t0 : marker.seq;
}

export function buildTimelineIndex(model: TimelineModel): TimelineIndex {
  const byId = new Map<string, LaneIndex>();
  const lanes: LaneIndex[] = [];
  for (const lane of model.lanes) {
    const entry: LaneIndex = emptyLane(lane.id, lane.label, lane.stage);
    byId.set(lane.id, entry);
    lanes.push(entry);
  }
  const runMarkers: TimelineMarker[] = [];
  for (const bar of model.bars) {
    let lane = byId.get(bar.laneId);
    if (!lane) {
      lane = emptyLane(bar.laneId, bar.laneId, 0);
      byId.set(bar.laneId, lane);
      lanes.push(lane);
    }
    lane.bars.push(bar);
  }
  for (const marker of model.markers) {
    const lane = marker.laneId === null ? undefined : byId.get(marker.laneId);
    if (lane) lane.markers.push(marker);
    else runMarkers.push(marker);
  }
  for (const lane of lanes) {
    lane.bars.sort((a, b) => a.startSeq - b.startSeq || b.endSeq - a.endSeq);
    lane.markers.sort((a, b) => a.seq - b.seq);
    const open: TimelineBar[] = [];
    let maxTime = -Infinity;
    let maxSeq = -Infinity;
    for (const bar of lane.bars) {
      while (open.length > 0 && open[open.length - 1]!.endSeq < bar.startSeq) open.pop();
      lane.depths.push(open.length);
      lane.maxDepth = Math.max(lane.maxDepth, open.length);
      open.push(bar);
      maxTime = Math.max(maxTime, bar.endAt - model.startAt);
      maxSeq = Math.max(maxSeq, bar.endSeq);
      lane.maxEnd.time.push(maxTime);
      lane.maxEnd.seq.push(maxSeq);
    }
  }
  runMarkers.sort((a, b) => a.seq - b.seq);
  const endAt = Math.max(model.endAt, model.startAt + 1);
  return {
    lanes,
    runMarkers,
    extent: { time: [0, endAt - model.startAt], seq: [0, Math.max(1, model.lastSeq) + 1] },
  };
}

function emptyLane(id: string, label: string, stage: number): LaneIndex {
  return { id, label, stage, bars: [], depths: [], maxEnd: { time: [], seq: [] }, markers: [], maxDepth: 0 };
}

/** First index whose key is >= target, in an array sorted by key. */
export function lowerBound<T>(items: T[], target: number, key: (item: T) => number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(items[mid]!) < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface PlacedBar {
  bar: TimelineBar;
  left: number;
  width: number;
  depth: number;
  /** How many bars were merged into this one because they shared the same pixels. */
  merged: number;
}

/**
 * Bars of one lane that intersect [from, to], placed in pixels (`pxPerUnit`), with bars that fall
 * on the same pixels merged so the DOM never holds more elements than the lane is wide.
 * Bars within a lane are sorted by start; the first candidate is found by binary search on the
 * running maximum of ends (bars may nest, so ends alone are not sorted).
 */
export function placeBars(
  lane: LaneIndex,
  axis: TimelineAxis,
  t0: number,
  from: number,
  to: number,
  pxPerUnit: number,
): PlacedBar[] {
  const bars = lane.bars;
  const startIdx = lowerBound(lane.maxEnd[axis], from, (v) => v);
  const out: PlacedBar[] = [];
  const lastAtDepth: PlacedBar[] = [];
  for (let i = startIdx; i < bars.length; i++) {
    const bar = bars[i]!;
    const s = barStart(bar, axis, t0);
    if (s > to) break;
    const e = barEnd(bar, axis, t0);
    if (e < from) continue;
    const left = (s - from) * pxPerUnit;
    // A seq bar covers whole events: [startSeq, endSeq + 1).
    const width = Math.max(2, ((axis === 'seq' ? e + 1 : e) - s) * pxPerUnit);
    const depth = lane.depths[i] ?? 0;
    const prev = lastAtDepth[depth];
    if (prev && left < prev.left + prev.width + 1 && width < 4) {
      prev.width = Math.max(prev.width, left + width - prev.left);
      prev.merged += 1;
      if (bar.status === 'failed') prev.bar = bar;
      continue;
    }
    const placed: PlacedBar = { bar, left, width, depth, merged: 1 };
    lastAtDepth[depth] = placed;
    out.push(placed);
  }
  return out;
}

export interface PlacedMarker {
  marker: TimelineMarker;
  left: number;
  merged: number;
}

/** Markers inside [from, to], at most one per 6 pixels per kind (the rest are counted). */
export function placeMarkers(
  markers: TimelineMarker[],
  axis: TimelineAxis,
  t0: number,
  from: number,
  to: number,
  pxPerUnit: number,
): PlacedMarker[] {
  const key = (m: TimelineMarker) => markerPos(m, axis, t0);
  // Markers are sorted by seq; in time axis, seq order is time order (recordedAt never decreases).
  const start = lowerBound(markers, from, key);
  const out: PlacedMarker[] = [];
  const lastByKind = new Map<string, PlacedMarker>();
  for (let i = start; i < markers.length; i++) {
    const marker = markers[i]!;
    const p = key(marker);
    if (p > to) break;
    const left = (p - from) * pxPerUnit;
    const prev = lastByKind.get(marker.kind);
    if (prev && left - prev.left < 6) {
      prev.merged += 1;
      continue;
    }
    const placed = { marker, left, merged: 1 };
    lastByKind.set(marker.kind, placed);
    out.push(placed);
  }
  return out;
}

/** A zoom about `anchor` (in axis units) by `factor` (>1 zooms in), kept inside the extent. */
export function zoomWindow(
  view: [number, number],
  extent: [number, number],
  anchor: number,
  factor: number,
  minSpan: number,
): [number, number] {
  const span = view[1] - view[0];
  const fullSpan = extent[1] - extent[0];
  const nextSpan = Math.min(fullSpan, Math.max(minSpan, span / factor));
  const ratio = span > 0 ? (anchor - view[0]) / span : 0.5;
  const start = anchor - ratio * nextSpan;
  return clampWindow([start, start + nextSpan], extent);
}

export function clampWindow(view: [number, number], extent: [number, number]): [number, number] {
  const span = Math.min(view[1] - view[0], extent[1] - extent[0]);
  let start = view[0];
  if (start < extent[0]) start = extent[0];
  if (start + span > extent[1]) start = extent[1] - span;
  return [start, start + span];
}
